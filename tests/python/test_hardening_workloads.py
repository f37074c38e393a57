"""The workloads (training, plan, training runs, serving, jobs, sweep, size, the Python
API) held to the network half's limits (test_hardening.py): impossible values and trace rows
refused, books bounded, outputs whole, Ctrl-C honoured; each CLI process under a memory limit."""
import json
import re
import signal
import subprocess
import time

import pytest

from conftest import CLI, ROOT
from hostile_cli import cli, doc, limit_memory

import clustersim as cs

INCAST = ROOT / "scenarios" / "incast.json"
FLAGSHIP = ROOT / "scenarios" / "fat_tree_allreduce.json"
GPT3 = ROOT / "scenarios" / "gpt3_175b_1024_h100.json"
LLAMA3_70B = ROOT / "scenarios" / "llama3_70b_256_h100.json"

# --- The workloads held to the same limits ----------------------------------------------------

ERLANG_C = ROOT / "scenarios" / "serving_mmc_erlang_c.json"
LLM_HPA = ROOT / "scenarios" / "serving_llm_diurnal_hpa.json"
JOBS = ROOT / "scenarios" / "jobs_four_teams.json"


def serving_on_trace(tmp_path, text, base=ERLANG_C, name="arrivals.csv", drop_service_time=False):
    trace = tmp_path / name
    trace.write_text(text, encoding="utf-8")
    d = doc(base)
    d["workload"]["arrivals"] = {"process": "trace", "trace": str(trace)}
    d["run"] = {"until": "1h"}
    if drop_service_time:
        del d["workload"]["request"]
    f = tmp_path / "s.json"
    f.write_text(json.dumps(d))
    return f, d, trace


def jobs_on_trace(tmp_path, text):
    trace = tmp_path / "jobs.csv"
    trace.write_text(text)
    d = doc(JOBS)
    del d["workload"]["arrivals"]
    d["workload"]["trace"] = str(trace)
    f = tmp_path / "j.json"
    f.write_text(json.dumps(d))
    return f, d, trace


# Rows a trace cannot hold: an error naming the file and the line (never a default in its place).
BAD_SERVING_ROWS = [
    ("timestamp,service_time\n0,0.1\n1,-1\n", "line 3: column service_time"),
    ("timestamp,service_time\n0,0.1\n1,1e300\n", "line 3: column service_time"),
    ("timestamp,service_time\n0,0.1\n-5,0.1\n", "line 3: column timestamp"),
    ("timestamp,service_time\n0,0.1\n1,nan\n", "line 3: column service_time"),
]
BAD_LLM_ROWS = [
    ("timestamp,prompt_tokens,output_tokens\n0,100,10\n1,-5,10\n", "line 3: column prompt_tokens"),
    ("timestamp,prompt_tokens,output_tokens\n0,100,10\n1,1e30,10\n", "line 3: column prompt_tokens"),
    ("timestamp,prompt_tokens,output_tokens\n0,100,10\n1,100,0\n", "line 3: column output_tokens"),
    ("timestamp,prompt_tokens,output_tokens\n0,100,10\n1,100.5,10\n", "line 3: column prompt_tokens"),
]
BAD_JOB_ROWS = [
    ("submit_time,gpus,duration\n0,8,100\n10,8,-5\n", "line 3: column duration"),
    ("submit_time,gpus,duration\n0,8,100\n10,8,1e300\n", "line 3: column duration"),
    ("submit_time,gpus,duration\n0,8,100\n10,0,100\n", "line 3: column gpus"),
    ("submit_time,gpus,duration\n0,8,100\n1e13,8,100\n", "line 3: column submit_time"),
]


# Shared prefixes in an LLM trace: an id and a length together, the length within the prompt.
BAD_PREFIX_ROWS = [
    ("timestamp,prompt_tokens,output_tokens,prefix_id,prefix_tokens\n0,100,10,-1,50\n", "line 2: column prefix_id"),
    ("timestamp,prompt_tokens,output_tokens,prefix_id,prefix_tokens\n0,100,10,1.5,50\n", "line 2: column prefix_id"),
    ("timestamp,prompt_tokens,output_tokens,prefix_id,prefix_tokens\n0,100,10,1e30,50\n", "line 2: column prefix_id"),
    ("timestamp,prompt_tokens,output_tokens,prefix_id,prefix_tokens\n0,100,10,1,nan\n", "line 2: column prefix_tokens"),
    ("timestamp,prompt_tokens,output_tokens,prefix_id,prefix_tokens\n0,100,10,1,-5\n", "line 2: column prefix_tokens"),
    ("timestamp,prompt_tokens,output_tokens,prefix_id,prefix_tokens\n0,100,10,,\n", "line 2: column prefix_id"),
    ("timestamp,prompt_tokens,output_tokens,prefix_id,prefix_tokens\n0,100,10,1,500\n", "longer than its prompt"),
    ("timestamp,prompt_tokens,output_tokens,prefix_id,prefix_tokens\n0,100,10,0,50\n", "of no prefix (prefix_id 0)"),
    ("timestamp,prompt_tokens,output_tokens,prefix_tokens\n0,100,10,50\n", "needs a prefix_id column"),
    ("timestamp,prompt_tokens,output_tokens,prefix_id\n0,100,10,3\n", "needs a prefix_tokens column"),
    ("timestamp,prompt_tokens,output_tokens,prefix_id,prefix_id\n0,100,10,1,1\n", "names column prefix_id twice"),
    ("timestamp,prompt_tokens,output_tokens,prefix_id,prefix_tokens\n", "no request"),
    ("timestamp,prompt_tokens,output_tokens,prefix_id,prefix_tokens\n0,100,10,7,50\n1,100,10,8,20\n2,100,10,7,60\n",
     "line 4: column prefix_tokens: prefix_id 7 has 60 tokens here but 50 on line 2"),
]
BAD_JOB_HEADERS = [
    ("submit_time,gpus,duration\n", "no job"),
    ("submit_time,gpus,gpus,duration\n0,8,8,100\n", "names column gpus twice"),
]


@pytest.mark.parametrize("rows,where", BAD_PREFIX_ROWS)
def test_a_trace_prefix_that_cannot_be_is_an_error_naming_the_line(tmp_path, rows, where):
    f, _, _ = serving_on_trace(tmp_path, rows, base=LLM_HPA)
    proc = cli("validate", f)
    assert proc.returncode == 2 and proc.stderr.startswith("error: workload.arrivals.trace:"), proc.stderr
    assert where in proc.stderr, proc.stderr


@pytest.mark.parametrize("rows,where", BAD_JOB_HEADERS)
def test_an_empty_job_trace_or_a_doubled_column_is_an_error(tmp_path, rows, where):
    f, _, _ = jobs_on_trace(tmp_path, rows)
    proc = cli("validate", f)
    assert proc.returncode == 2 and proc.stderr.startswith("error: workload.trace:"), proc.stderr
    assert where in proc.stderr, proc.stderr


@pytest.mark.parametrize("rows,where", BAD_SERVING_ROWS + BAD_LLM_ROWS + BAD_JOB_ROWS)
def test_a_trace_row_that_cannot_be_is_an_error_naming_the_file_and_line(tmp_path, rows, where):
    if rows.startswith("submit_time"):
        f, d, trace = jobs_on_trace(tmp_path, rows)
        path = "workload.trace"
    else:
        f, d, trace = serving_on_trace(tmp_path, rows, base=LLM_HPA if "prompt" in rows else ERLANG_C)
        path = "workload.arrivals.trace"
    for command in ("validate", "run"):
        proc = cli(command, f, "--out", tmp_path / "out") if command == "run" else cli(command, f)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith(f"error: {path}:") and str(trace) in proc.stderr and where in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists()
    with pytest.raises(cs.ScenarioError) as e:
        cs.Scenario(d).validate()
    assert e.value.path == path and where in str(e.value)


def test_a_trace_header_with_a_bom_or_quotes_reads_as_the_plain_one(tmp_path):
    rows = "0,0.1\n0.5,0.2\n2,0.05\n"
    summaries = []
    for header in ("timestamp,service_time\n", "\ufefftimestamp,service_time\n", '"timestamp","service_time"\r\n'):
        f, _, _ = serving_on_trace(tmp_path, header + rows)
        proc = cli("run", f, "--json")
        assert proc.returncode == 0, proc.stderr
        summaries.append(json.loads(proc.stdout)["serving"])
    assert summaries[0]["completed"] == 3
    assert summaries[1] == summaries[0] and summaries[2] == summaries[0]
    f, _, _ = jobs_on_trace(tmp_path, '\ufeff"submit_time","gpus","duration"\n0,8,3600\n')
    assert cli("validate", f).returncode == 0


def test_a_plain_server_trace_with_service_times_needs_no_request_section(tmp_path):
    f, d, _ = serving_on_trace(tmp_path, "timestamp,service_time\n0,0.1\n1,0.3\n", drop_service_time=True)
    proc = cli("run", f, "--json")
    assert proc.returncode == 0, proc.stderr
    s = json.loads(proc.stdout)["serving"]
    assert s["completed"] == 2 and s["latency_mean_s"] == pytest.approx(0.2)
    # Without the column the service time is still required, at its key.
    f, d, _ = serving_on_trace(tmp_path, "timestamp\n0\n1\n", drop_service_time=True)
    proc = cli("validate", f)
    assert proc.returncode == 2 and proc.stderr.startswith("error: workload.request.service_time:"), proc.stderr


# --- Outputs: checked before any run, never over an input, nothing left by a failure ---------

def test_plan_and_sweep_never_write_over_the_scenario(tmp_path):
    scenario = tmp_path / "s.json"
    scenario.write_text(INCAST.read_text())
    before = scenario.read_bytes()
    for args in (("sweep", scenario, "--grid", "seed=1,2", "--out", scenario),
                 ("plan", scenario, "--out", scenario),
                 ("run", scenario, "--out", tmp_path, "--set", "run.trace=s.json")):
        proc = cli(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "a file this run reads" in proc.stderr or "workload.kind" in proc.stderr, proc.stderr
        assert scenario.read_bytes() == before
    # A trace the scenario reads is an input too.
    f, _, trace = serving_on_trace(tmp_path, "timestamp,service_time\n0,0.1\n")
    proc = cli("sweep", f, "--grid", "seed=1,2", "--out", trace)
    assert proc.returncode == 2 and "a file this run reads" in proc.stderr, proc.stderr
    assert trace.read_text() == "timestamp,service_time\n0,0.1\n"


def test_an_unwritable_output_is_refused_before_the_work(tmp_path):
    # /proc takes no new files: refused before the plans are searched (seconds), not after.
    start = time.monotonic()
    proc = cli("plan", GPT3, "--out", "/proc/x.csv")
    assert proc.returncode == 2 and proc.stderr.startswith("error: --out:"), proc.stderr
    assert time.monotonic() - start < 20
    assert cli("sweep", INCAST, "--grid", "seed=1,2", "--out", "/proc/x.csv").returncode == 2


def test_a_run_that_fails_leaves_no_directory_it_created(tmp_path):
    out = tmp_path / "new" / "dir"
    # Fails at run time (the overloaded fleet's memory), after --out was checked and created.
    # A diurnal peak above what the 8 slots serve: only the run shows it.
    diurnal = {"process": "diurnal", "rate": "70/s", "peak_to_mean": 1.6, "period": "1h", "peak_at": "10min"}
    proc = cli("run", ERLANG_C, "--set", "run.replications=1", "--set", "workload.arrivals=" + json.dumps(diurnal),
               "--set", "run.until=1h", "--set", "run.max_memory=1MB", "--out", out)
    assert proc.returncode == 2 and proc.stderr.startswith("error: run.max_memory:"), proc.stderr
    assert not (tmp_path / "new").exists()


def test_ctrl_c_stops_a_cli_run_and_leaves_nothing(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen([str(CLI), "run", str(JOBS), "--set", "run.until=30000d", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=limit_memory)
    time.sleep(1.5)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted" in err and time.monotonic() - sent < 10
    assert not out.exists()


# --- Memory bounded: refused up front where the load predicts it, stopped where only the run shows it

def _set_args(sets):
    return [a for path, v in sets.items() for a in ("--set", f"{path}={json.dumps(v) if not isinstance(v, str) else v}")]


# The three: plain servers at 100,000/s, an LLM fleet at 1e6/s, 86 M one-second jobs.
OVERLOADS = [
    (ERLANG_C, {"workload.arrivals.rate": "100000/s", "run.until": "1h", "run.warmup": "1min", "run.replications": 1},
     "workload.arrivals.rate", "requests waiting by the end"),
    (LLM_HPA, {"workload.arrivals": {"process": "poisson", "rate": "1000000/s"}, "run.until": "10min",
               "fleet.autoscaler.max": 2}, "workload.arrivals.rate", "requests waiting by the end"),
    (JOBS, {"workload.classes": [{"name": "short", "gpus": 1, "duration": "1s"}], "workload.arrivals.rate": "1000/s",
            "run.until": "1d", "fleet.scheduler.queues": [{"name": "default"}], "run.max_memory": "1GB"},
     "workload.arrivals.rate", "86.4 M jobs submitted"),
]


@pytest.mark.parametrize("base,sets,path,what", OVERLOADS)
def test_an_overload_the_load_predicts_is_refused_before_the_run(tmp_path, base, sets, path, what):
    out = tmp_path / "out"
    start = time.monotonic()
    for command in (("run", "--out", out), ("validate",)):
        proc = cli(command[0], base, *_set_args(sets), *command[1:])
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith(f"error: {path}:"), proc.stderr
        # The estimate and the limit, both with their units.
        assert what in proc.stderr and "run.max_memory" in proc.stderr and "GB" in proc.stderr, proc.stderr
    assert time.monotonic() - start < 5 and not out.exists()
    sc = cs.Scenario.load(base)
    for p, v in sets.items():
        sc.set(p, v)
    with pytest.raises(cs.ScenarioError) as e:
        cs.run(sc)
    assert e.value.path == path


def test_a_bounded_queue_makes_the_same_overload_fit():
    # 100,000/s against 80/s served, but fleet.max_queue drops past 10,000 waiting: it fits.
    sets = {**OVERLOADS[0][1], "run.until": "2s", "run.warmup": "1s"}
    assert cli("validate", ERLANG_C, *_set_args(sets)).returncode == 0
    sets["run.until"] = "1h"
    assert cli("validate", ERLANG_C, *_set_args(sets)).returncode == 2
    assert cli("validate", ERLANG_C, *_set_args({**sets, "fleet.max_queue": 10000})).returncode == 0


def test_a_load_only_the_run_shows_stops_at_the_memory_limit(tmp_path):
    # A diurnal day whose mean (70/s) the 8 slots serve (80/s) but whose peak (112/s) they do
    # not: the estimate passes, the run holds too many at the peak and stops.
    sets = {"workload.arrivals": {"process": "diurnal", "rate": "70/s", "peak_to_mean": 1.6, "period": "1h",
                                  "peak_at": "10min"},
            "run.until": "1h", "run.warmup": "1min", "run.replications": 1, "run.max_memory": "1MB"}
    assert cli("validate", ERLANG_C, *_set_args(sets)).returncode == 0
    out = tmp_path / "out"
    proc = cli("run", ERLANG_C, *_set_args(sets), "--out", out)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: run.max_memory:") and "nothing was written" in proc.stderr, proc.stderr
    assert not out.exists()
    sc = cs.Scenario.load(ERLANG_C)
    for path, v in sets.items():
        sc.set(path, v)
    with pytest.raises(cs.ScenarioError) as e:
        cs.run(sc)
    assert e.value.path == "run.max_memory"


# --- plan says how long before it searches, and refuses a search past its limit ---------------

def test_a_long_plan_search_is_refused_with_its_estimate_and_how_to_narrow_it():
    # Llama 3 70B on 256 GPUs: 5,413 plans fit (5% memory headroom kept), estimated at about 6 min on one thread.
    start = time.monotonic()
    proc = cli("plan", LLAMA3_70B, "--max-time", "1min")
    assert time.monotonic() - start < 10
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: --max-time: this search could take up to about"), proc.stderr
    assert "5413 plans to screen at most" in proc.stderr and "--only" in proc.stderr, proc.stderr
    with pytest.raises(cs.ScenarioError) as e:
        cs.plan(LLAMA3_70B, max_time="1min")
    assert e.value.path == "max_time" and "plans to screen" in str(e.value)


@pytest.mark.parametrize("value", ["0", "-5", "abc", "5 parsecs", "inf", "nan", ""])
def test_plan_max_time_takes_a_duration(value):
    proc = cli("plan", LLAMA3_70B, "--max-time", value)
    assert proc.returncode == 2 and proc.stderr.startswith("error: --max-time:"), proc.stderr
    with pytest.raises(cs.ScenarioError) as e:
        cs.plan(LLAMA3_70B, max_time=value)
    assert e.value.path == "max_time"


def test_plan_under_a_short_limit_is_refused_and_under_a_long_one_runs(tmp_path):
    # Llama 3 8B cut to 4 layers on 2 nodes (test_training's small cluster).
    d = {"hardware": {"gpu": "H100-SXM", "node": {"gpus": 8, "nics": 8, "nic_bandwidth": "400Gbps"}},
         "topology": {"kind": "fat_tree", "nodes": 2, "switch_radix": 16, "link_bandwidth": "400Gbps"},
         "network": {"model": "analytical"},
         "workload": {"kind": "training", "model": {"preset": "llama3-8b", "layers": 4, "seq_len": 1024},
                      "parallel": {"tp": 8, "dp": 2}, "batch": {"global": 8, "micro": 1}}}
    f = tmp_path / "small.json"
    f.write_text(json.dumps(d))
    proc = cli("plan", f, "--max-time", "1us", "--only", "schedule=1f1b", "--only", "zero=1")
    assert proc.returncode == 2 and "this search could take up to about" in proc.stderr, proc.stderr
    proc = cli("plan", f, "--max-time", "10min", "--json", "--refine", "1", "--only", "schedule=1f1b", "--only", "zero=1")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["plans_simulated"] > 0
    with pytest.raises(ValueError, match="max_time"):
        cs.plan(f, max_time=[1])


# --- Settings that used to do nothing say so -------------------------------------------------

def test_fixed_warns_about_scaling_keys_and_a_short_predictive_run_says_it_never_forecasts():
    proc = cli("run", ERLANG_C, "--set", "run.replications=1", "--set", "fleet.autoscaler.metric=concurrency")
    assert proc.returncode == 0, proc.stderr
    assert 'warning: fleet.autoscaler.metric: has no effect with policy "fixed"' in proc.stderr
    predictive = {"policy": "predictive", "min": 1, "max": 20, "metric": "concurrency", "target": 1,
                  "predictive": {"target_per_replica": "8/s"}}
    proc = cli("validate", ERLANG_C, "--set", "fleet.autoscaler=" + json.dumps(predictive))
    assert proc.returncode == 0, proc.stderr
    assert "warning: fleet.autoscaler.predictive.season: run.until is shorter than two seasons" in proc.stderr


def test_a_plan_overlap_of_a_parallelism_the_plan_lacks_warns():
    # Two GPUs in data parallel: no tensor-parallel or pipeline communication to overlap.
    ddp = ROOT / "scenarios" / "workstation_7b_ddp.json"
    proc = cli("validate", ddp, "--set", "workload.parallel.tp_comm_overlap=true", "--set", "workload.parallel.overlap_p2p=false")
    assert proc.returncode == 0, proc.stderr
    assert "warning: workload.parallel.tp_comm_overlap: has no effect with parallel.tp 1" in proc.stderr
    assert "warning: workload.parallel.overlap_p2p: has no effect with parallel.pp 1" in proc.stderr
    proc = cli("validate", ddp, "--set", "workload.parallel.overlap_grad_reduce=false")
    assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr
    proc = cli("validate", ddp, "--set", "workload.parallel.overlap_tp_wgrad=false")
    assert "warning: workload.parallel.overlap_tp_wgrad: has no effect with parallel.tp 1" in proc.stderr
    # Userbuffers (tp_comm_overlap with sequence parallelism) pipelines the backward's collectives.
    llama = ROOT / "scenarios" / "llama3_70b_256_h100.json"
    proc = cli("validate", llama, "--set", "workload.parallel.overlap_tp_wgrad=false")
    assert proc.returncode == 0, proc.stderr
    assert "warning: workload.parallel.overlap_tp_wgrad: has no effect with parallel.tp_comm_overlap" in proc.stderr
    proc = cli("validate", llama, "--set", "workload.parallel.overlap_tp_wgrad=false",
               "--set", "workload.parallel.tp_comm_overlap=false")
    assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr
    # The same warnings wherever a plan is given: a training run's simulated step, a job class's.
    run = ROOT / "scenarios" / "training_run_gpt3_simulated_step.json"
    proc = cli("validate", run, "--set", "workload.training.parallel.overlap_tp_wgrad=false")
    assert proc.returncode == 0, proc.stderr
    assert "warning: workload.training.parallel.overlap_tp_wgrad: has no effect with parallel.tp_comm_overlap" in proc.stderr
    jobs = ROOT / "scenarios" / "jobs_training_placement.json"
    proc = cli("validate", jobs, "--set", "workload.classes.0.training.parallel.overlap_p2p=false")
    assert proc.returncode == 0, proc.stderr
    assert "warning: workload.classes.0.training.parallel.overlap_p2p: has no effect with parallel.pp 1" in proc.stderr


# `clustersim size` as a hostile user drives it: each refused before any point runs.
SIZE_PROBES = [
    (["--require", "serving.wait_mean_s<=0.01"], "--vary"),
    (["--vary", "fleet.autoscaler.replicas=", "--require", "serving.wait_mean_s<=0.01"], "--vary"),
    (["--vary", "fleet.autoscaler.replicas=9..4", "--require", "serving.wait_mean_s<=0.01"], "fleet.autoscaler.replicas"),
    (["--vary", "fleet.autoscaler.replicas=1..1000000000", "--require", "serving.wait_mean_s<=0.01"], "fleet.autoscaler.replicas"),
    (["--vary", "fleet.autoscaler.replicas=1.5..4", "--require", "serving.wait_mean_s<=0.01"], "fleet.autoscaler.replicas"),
    (["--vary", "fleet.autoscaler.replicas=-3..-1", "--require", "serving.wait_mean_s<=0.01"], "fleet.autoscaler.replicas"),
    (["--vary", "fleet.autoscaler.replicas=a,b", "--require", "serving.wait_mean_s<=0.01"], "fleet.autoscaler.replicas"),
    (["--vary", "fleet.autoscaler.replicaz=7..9", "--require", "serving.wait_mean_s<=0.01"], "fleet.autoscaler.replicaz"),
    (["--vary", "fleet.autoscaler.replicas=7..9", "--vary", "fleet.autoscaler.replicas=7..9",
      "--require", "serving.wait_mean_s<=0.01"], "--vary"),
    (["--vary", "fleet.autoscaler=7..9", "--vary", "fleet.autoscaler.replicas=7..9", "--require", "serving.wait_mean_s<=0.01"],
     "--vary"),
    (["--vary", "fleet.autoscaler.replicas=7..9", "--require", "serving.wait_mean_s"], "--require"),
    (["--vary", "fleet.autoscaler.replicas=7..9", "--require", ""], "--require"),
    (["--vary", "fleet.autoscaler.replicas=7..9", "--require", "serving.wait_mean_s==0.01"], "--require"),
    (["--vary", "fleet.autoscaler.replicas=7..9", "--require", "serving.wait_mean_s!=0.01"], "--require"),
    (["--vary", "fleet.autoscaler.replicas=7..9", "--require", "serving.wait_mean_s=<0.01"], "--require"),
    (["--vary", "fleet.autoscaler.replicas=7..9", "--require", "serving.wait_mean_s!<0.01"], "--require"),
    (["--vary", "fleet.autoscaler.replicas=7..9", "--require", "<=0.01"], "--require"),
    (["--vary", "fleet.autoscaler.replicas=7..9", "--require", "serving.wait_mean_s<=nan"], "--require"),
    (["--vary", "fleet.autoscaler.replicas=7..9", "--require", "serving.wait_mean_s<=inf"], "--require"),
    (["--vary", "fleet.autoscaler.replicas=7..9", "--require", "serving.wait_mean_s>=-inf"], "--require"),
    (["--vary", "fleet.autoscaler.replicas=7..9", "--require", "serving.wait_mean_s<="], "--require"),
    (["--vary", "fleet.autoscaler.replicas=7..9", "--require", "serving.wait_mean_s<=fast"], "--require"),
    (["--vary", "fleet.autoscaler.replicas=7..9", "--require", "serving.wait_mean_s<=10ms"], "--require"),
    (["--vary", "fleet.autoscaler.replicas=7..9", "--require", "serving.wait_mean_s<=0.01", "-j", "0"], "--jobs"),
    (["--vary", "fleet.autoscaler.replicas=7..9", "--require", "serving.wait_mean_s<=0.01", "-j", "100000"], "--jobs"),
    (["--vary", "fleet.autoscaler.replicas=7..9", "--require", "serving.wait_mean_s<=0.01", "--max-runs", "0"], "--max-runs"),
    (["--vary", "fleet.autoscaler.replicas=7..9", "--require", "serving.wait_mean_s<=0.01", "--confirm", "0"], "--confirm"),
    (["--vary", "fleet.autoscaler.replicas=7..9", "--require", "serving.wait_mean_s<=0.01", "--confirm", "1000000000"],
     "--confirm"),
]


@pytest.mark.parametrize("args,path", SIZE_PROBES)
def test_size_refuses_a_bad_space_or_requirement_before_running(args, path):
    start = time.monotonic()
    proc = cli("size", ERLANG_C, *args)
    assert proc.returncode == 2 and proc.stderr.startswith(f"error: {path}"), proc.stderr
    assert time.monotonic() - start < 5, "refused only after running points"


# --- Python: the CLI's checks, Python's errors -----------------------------------------------

def test_python_calls_check_their_arguments_as_the_cli_does():
    with pytest.raises(cs.ScenarioError) as e:
        cs.compare_markets(cs.Scenario.load(ERLANG_C), replications=1)
    assert e.value.path == "workload.kind" and "training_run" in str(e.value)
    for sets in ("topology.nodes=8", ["topology.nodes"], [5]):
        with pytest.raises(cs.ScenarioError) as e:
            cs.compare([FLAGSHIP], sets=sets)
        assert e.value.path == "sets" and "PATH=VALUE" in str(e.value)
    deep = {}
    node = deep
    for _ in range(100_000):
        node["a"] = {}
        node = node["a"]
    with pytest.raises(cs.ScenarioError, match="nesting"):
        cs.run(deep)
    with pytest.raises(cs.ScenarioError) as e:
        cs.Scenario.load(INCAST).set("workload.bytes", deep)
    assert e.value.path == "workload.bytes"
    for kwargs in ({"refine": -1}, {"jobs": 0}, {"jobs": 1.5}, {"jobs": True}):
        with pytest.raises(ValueError, match=next(iter(kwargs))):
            cs.plan(GPT3, **kwargs)


def test_the_sweep_cache_keys_on_the_trace_contents(tmp_path):
    f, d, trace = serving_on_trace(tmp_path, "timestamp,service_time\n0,0.1\n1,0.1\n")
    cache = tmp_path / "cache"
    first = cs.sweep(cs.Scenario(d), {"seed": [1]}, cache=cache)
    trace.write_text("timestamp,service_time\n0,0.1\n1,0.1\n2,0.1\n")
    again = cs.sweep(cs.Scenario(d), {"seed": [1]}, cache=cache)
    assert first["serving.completed"].iloc[0] == 2 and again["serving.completed"].iloc[0] == 3


# --- No impossible outputs: every share a summary reports lies in [0, 1] ---------------------

SHARE_KEY = re.compile(r"(utilization|mfu|goodput|share|attainment|fraction)", re.I)


def _numbers(value, path=""):
    if isinstance(value, dict):
        for key, v in value.items():
            yield from _numbers(v, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _numbers(v, f"{path}.{i}")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield path, value


@pytest.mark.parametrize("golden", sorted((ROOT / "tests" / "golden").glob("*.json")), ids=lambda p: p.stem)
def test_no_shipped_summary_reports_a_share_outside_zero_to_one(golden):
    # The goldens are every shipped scenario's summary as it runs (test_scenarios checks them):
    # utilizations, MFU, goodput, shares, SLO attainments and bubble fractions are shares.
    bad = [(path, v) for path, v in _numbers(json.loads(golden.read_text()))
           if SHARE_KEY.search(path) and not path.endswith("ci95") and not 0 <= v <= 1 + 1e-9]
    assert not bad, bad


# --- Python's size, sweep and paired: their counts and values checked before any run ----------

def _quick_erlang():
    sc = cs.Scenario.load(ERLANG_C)
    for path, v in {"run.replications": 1, "run.until": "20min", "run.warmup": "1min"}.items():
        sc.set(path, v)
    return sc


REQUIRE = ["serving.wait_mean_s<=0.01"]
VARY = {"fleet.autoscaler.replicas": range(7, 10)}
PY_SIZE_PROBES = [
    ({"vary": {}}, cs.ScenarioError, "vary"),
    ({"vary": {"fleet.autoscaler.replicas": []}}, cs.ScenarioError, "vary"),
    ({"vary": {"fleet.autoscaler.replicas": range(9, 4)}}, cs.ScenarioError, "vary"),
    ({"vary": {"fleet.autoscaler.replicas": range(1, 10**9)}}, cs.ScenarioError, "fleet.autoscaler.replicas"),
    ({"vary": {"fleet.autoscaler.replicas": [float("nan"), 8]}}, cs.ScenarioError, "fleet.autoscaler.replicas"),
    ({"vary": {"fleet.autoscaler.replicas": [float("inf")]}}, cs.ScenarioError, "fleet.autoscaler.replicas"),
    ({"vary": {"fleet.autoscaler.replicas": "7,8"}}, cs.ScenarioError, "fleet.autoscaler.replicas"),
    ({"vary": [("fleet.autoscaler.replicas", [7])]}, cs.ScenarioError, "vary"),
    ({"vary": {"fleet.nope": [1, 2]}}, cs.ScenarioError, "fleet.nope"),
    ({"require": ["nokey<=1"]}, cs.ScenarioError, "require"),
    ({"require": ["serving.wait_mean_s<=nan"]}, cs.ScenarioError, "require"),
    ({"require": ["serving.wait_mean_s>=inf"]}, cs.ScenarioError, "require"),
    ({"require": ["serving.wait_mean_s=<0.01"]}, cs.ScenarioError, "require"),
    ({"minimize": "serving.costt"}, cs.ScenarioError, "minimize"),
    ({"jobs": 0}, ValueError, "jobs"),
    ({"jobs": 1.5}, ValueError, "jobs"),
    ({"confirm": 0}, ValueError, "confirm"),
    ({"confirm": 2.5}, ValueError, "confirm"),
    ({"max_runs": -1}, ValueError, "max_runs"),
]


@pytest.mark.parametrize("kwargs,error,where", PY_SIZE_PROBES)
def test_python_size_refuses_a_bad_argument_before_running(kwargs, error, where):
    args = {"vary": VARY, "require": REQUIRE, **kwargs}
    with pytest.raises(error) as e:
        cs.size(_quick_erlang(), **args)
    assert (e.value.path if error is cs.ScenarioError else str(e.value)).startswith(where), e.value


def test_python_sweep_refuses_a_huge_or_non_finite_axis_before_listing_it():
    with pytest.raises(cs.ScenarioError) as e:
        cs.sweep(_quick_erlang(), {"seed": range(10**9)})
    assert e.value.path == "seed" and "at most 1000000" in str(e.value)
    with pytest.raises(cs.ScenarioError) as e:
        cs.grid_points({"workload.arrivals.rate": [1.0, float("nan")]})
    assert e.value.path == "workload.arrivals.rate"


PAIRED = {"a": {}, "b": {"fleet.autoscaler.replicas": 9}}
PY_PAIRED_PROBES = [
    ({"variants": {}}, cs.ScenarioError, "paired"),
    ({"variants": {"a": {}}}, cs.ScenarioError, "paired"),
    ({"keys": []}, cs.ScenarioError, "paired"),
    ({"replications": 0}, cs.ScenarioError, "paired"),
    ({"replications": 2.5}, ValueError, "replications"),
    ({"replications": 10**9}, ValueError, "replications"),
    ({"jobs": -1}, ValueError, "jobs"),
    ({"variants": {"a": {}, "b": {"fleet.nope": 1}}}, cs.ScenarioError, "fleet.nope"),
    ({"variants": {"a": {}, "b": {"fleet.autoscaler.replicas": -1}}}, cs.ScenarioError, "fleet.autoscaler.replicas"),
]


@pytest.mark.parametrize("kwargs,error,where", PY_PAIRED_PROBES)
def test_python_paired_refuses_a_bad_argument(kwargs, error, where):
    args = {"variants": PAIRED, "keys": "serving.wait_mean_s", "replications": 2, **kwargs}
    with pytest.raises(error) as e:
        cs.paired(_quick_erlang(), **args)
    assert (e.value.path if error is cs.ScenarioError else str(e.value)).startswith(where), e.value
