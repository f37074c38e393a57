"""jobs scenarios end to end: the contract's summary keys, the CLI and Python agree, the per-job
table (jobs.csv, Result.jobs) and time series, a hand-checked trace under FIFO and backfill,
the four-team cluster with and without its urgent queue, replications."""
import json
import math

import pytest

import clustersim as cs
from conftest import ROOT, run_cli, without_wall_time

FOUR_TEAMS = ROOT / "scenarios" / "jobs_four_teams.json"
URGENT = ROOT / "scenarios" / "jobs_four_teams_urgent.json"
CONTRACT_KEYS = {"submitted", "completed", "wait_mean_s", "wait_p95_s", "utilization", "preemptions",
                 "lost_gpu_hours", "cost_usd", "queues"}
QUEUE_KEYS = {"completed", "wait_mean_s", "wait_p95_s", "gpu_share"}
TABLE_COLUMNS = ["job", "class", "queue", "submit_s", "start_s", "end_s", "gpus", "nodes", "spread",
                 "slowdown", "preemptions", "interruptions", "wait_s", "lost_work_s", "completed"]


def trace_scenario(tmp_path, policy):
    """Two nodes of 8 GPUs, no failures, three jobs from a trace: a 16-GPU job at 0 for 100 s,
    an 8-GPU job at 10 for 50 s, an 8-GPU job at 20 for 30 s, then a 16-GPU job at 30 for 10 s."""
    trace = tmp_path / "jobs.csv"
    trace.write_text("submit_time,gpus,duration\n0,16,100\n10,8,50\n20,8,30\n30,16,10\n")
    return cs.Scenario({
        "name": "trace", "seed": 1,
        "hardware": {"gpu": "H100-SXM", "node": {"gpus": 8}},
        "workload": {"kind": "jobs", "trace": str(trace)},
        "fleet": {"nodes": 2, "failures": {"node_mtbf": "none"}, "scheduler": {"policy": policy}},
    })


@pytest.mark.parametrize("path", [FOUR_TEAMS, URGENT], ids=lambda p: p.name)
def test_cli_and_python_give_the_same_summary_with_the_contract_keys(path):
    cli = json.loads(run_cli("run", path, "--json", check=True).stdout)
    result = cs.run(cs.Scenario.load(path))
    assert without_wall_time(cli) == without_wall_time(result.summary)
    block = result.summary["jobs"]
    assert CONTRACT_KEYS <= set(block)
    for queue in block["queues"].values():
        assert QUEUE_KEYS <= set(queue)
    assert sum(q["completed"] for q in block["queues"].values()) == block["completed"]
    assert sum(q["gpu_share"] for q in block["queues"].values()) == pytest.approx(1.0)
    assert 0 < block["utilization"] <= 1
    # The per-job table: one row per submitted job, gang-scheduled (all its GPUs, on whole
    # nodes' worth of GPUs at most 8 per node), waits at least from submit to first start.
    jobs = result.jobs
    assert list(jobs.columns) == TABLE_COLUMNS
    assert len(jobs) == block["submitted"]
    assert int(jobs["completed"].sum()) == block["completed"]
    started = jobs[jobs["start_s"].notna()]
    assert (started["nodes"] * 8 >= started["gpus"]).all() and (started["nodes"] >= 1).all()
    # A job's wait is all its time pending: to its first start, and again after each requeue.
    first_wait = started["start_s"] - started["submit_s"]
    assert (started["wait_s"] >= first_wait - 1e-6).all()
    never_stopped = (started["preemptions"] == 0) & (started["interruptions"] == 0)
    assert (started[never_stopped]["wait_s"] - first_wait[never_stopped]).abs().max() < 1e-6
    assert jobs[jobs["completed"] == 1]["end_s"].notna().all()
    assert int(jobs["preemptions"].sum()) == block["preemptions"]


def test_the_reserved_urgent_queue_starts_urgent_jobs_at_once_at_the_teams_cost():
    without = cs.run(FOUR_TEAMS).summary["jobs"]
    with_urgent = cs.run(URGENT).summary["jobs"]
    assert without["submitted"] == with_urgent["submitted"]  # the same job stream
    urgent_without = cs.run(FOUR_TEAMS).jobs.query("`class` == 'urgent'")["wait_s"]
    urgent_with = with_urgent["queues"]["urgent"]
    # Preempting makes room within the stop of the preempted jobs, not hours later.
    assert urgent_with["wait_mean_s"] < 0.1 * urgent_without.mean()
    assert without["preemptions"] == 0 and with_urgent["preemptions"] > 0
    assert with_urgent["lost_gpu_hours"] > without["lost_gpu_hours"]
    assert with_urgent["queues"]["llm"]["wait_mean_s"] > without["queues"]["llm"]["wait_mean_s"]


def test_cli_writes_the_job_table_and_the_time_series_and_prints_a_summary(tmp_path):
    proc = run_cli("run", URGENT, "--out", tmp_path, check=True)
    assert proc.stderr == ""
    assert "jobs: " in proc.stdout and "submitted" in proc.stdout
    assert "fair_share + EASY backfill, preemption, topology placement" in proc.stdout
    for queue in ("llm", "vision", "research", "interactive", "urgent"):
        assert queue in proc.stdout
    summary = json.loads((tmp_path / "summary.json").read_text())
    lines = (tmp_path / "jobs.csv").read_text().splitlines()
    assert lines[0] == ",".join(TABLE_COLUMNS)
    assert len(lines) - 1 == summary["jobs"]["submitted"]
    series = {line.split(",")[0] for line in (tmp_path / "timeseries.csv").read_text().splitlines()[1:]}
    assert {"jobs.queue_length.urgent", "jobs.busy_gpus.llm", "jobs.wait_mean_s.vision", "jobs.pending",
            "jobs.busy_gpus"} <= series
    ts = cs.run(URGENT).timeseries
    busy = ts[ts["series"] == "jobs.busy_gpus"]["value"]
    assert busy.max() <= 512 and busy.min() >= 0


def test_chargeback_per_team_and_waits_by_class_and_size():
    j = cs.run(FOUR_TEAMS).summary["jobs"]
    queues = j["queues"]
    # Each team's part of the cost, split by busy GPU-time, adds up to the cluster's.
    assert sum(q["cost_usd"] for q in queues.values()) == pytest.approx(j["cost_usd"], rel=1e-9)
    for q in queues.values():
        assert q["cost_usd"] == pytest.approx(j["cost_usd"] * q["gpu_share"], rel=1e-9)
    assert sum(q["busy_gpu_hours"] for q in queues.values()) == pytest.approx(j["gpu_hours"]["busy"], rel=1e-9)
    assert sum(q["cluster_share"] for q in queues.values()) == pytest.approx(
        j["gpu_hours"]["busy"] / j["gpu_hours"]["available"], rel=1e-9)
    # Quotas 40/30/20/10, as the scenario gives them.
    assert {name: q["quota"] for name, q in queues.items()} == {"llm": 0.4, "vision": 0.3, "research": 0.2,
                                                                  "interactive": 0.1}
    doc = json.loads(FOUR_TEAMS.read_text())
    assert set(j["classes"]) == {c["name"] for c in doc["workload"]["classes"]}
    assert sum(c["completed"] for c in j["classes"].values()) == j["completed"]
    assert list(j["waits_by_size"]) == sorted(["1", "2-8", "9-64", "65-512", "513+"])
    assert sum(b["completed"] for b in j["waits_by_size"].values()) == j["completed"]
    assert j["waits_by_size"]["513+"]["completed"] == 0  # no job over 128 GPUs
    out = run_cli("run", FOUR_TEAMS, check=True).stdout
    for words in ("of cluster", "quota", "GPU-h", "job size (GPUs)", "interactive", "65-512"):
        assert words in out, words


@pytest.mark.parametrize("policy", ["fifo", "backfill"])
def test_a_trace_by_hand(tmp_path, policy):
    result = cs.run(trace_scenario(tmp_path, policy))
    block = result.summary["jobs"]
    jobs = result.jobs.set_index("job")
    assert block["submitted"] == block["completed"] == 4
    # Job 0 holds all 16 GPUs until 100. FIFO: jobs 1 and 2 start at 100 (8 GPUs each), job 3
    # (16 GPUs) when both are done, at 150. Backfill gives the same here: nothing fits before 100.
    assert list(jobs["start_s"]) == [0, 100, 100, 150]
    assert list(jobs["end_s"]) == [100, 150, 130, 160]
    waits = [0, 90, 80, 120]
    assert block["wait_mean_s"] == pytest.approx(sum(waits) / 4)
    busy_gpu_s = 16 * 100 + 8 * 50 + 8 * 30 + 16 * 10
    assert block["utilization"] == pytest.approx(busy_gpu_s / (16 * 160))
    assert block["preemptions"] == 0 and block["lost_gpu_hours"] == 0
    assert list(jobs["spread"]) == [1, 1, 1, 1]  # no topology: the whole cluster is one domain


def test_backfill_starts_a_narrow_job_in_the_head_jobs_shadow(tmp_path):
    # One node busy until 100 with job 0 (8 GPUs); job 1 needs 16 and reserves t = 100; job 2 (8
    # GPUs, 50 s) fits the free node and ends before 100: EASY starts it at once, FIFO waits.
    trace = tmp_path / "shadow.csv"
    trace.write_text("submit_time,gpus,duration\n0,8,100\n1,16,10\n2,8,50\n")
    def run(policy):
        sc = trace_scenario(tmp_path, policy)
        sc.set("workload.trace", str(trace))
        return cs.run(sc).jobs.set_index("job")
    fifo, easy = run("fifo"), run("backfill")
    assert list(fifo["start_s"]) == [0, 100, 110]
    assert list(easy["start_s"]) == [0, 100, 2]  # the head job's reservation (100) holds


def test_jobs_drawn_ahead_on_a_second_thread_give_the_same_summary():
    # Past its 4,096th job a run allowed two threads draws the job stream ahead on a second
    # thread; --threads 1 draws every job in the simulation's thread: the same numbers.
    sets = ["--set", "run.until=2d", "--set", "workload.arrivals.rate=120/h"]
    summaries = [json.loads(run_cli("run", FOUR_TEAMS, "--json", "--threads", threads, *sets, check=True).stdout)
                 for threads in ("1", "2")]
    assert summaries[0]["jobs"]["submitted"] > 5000
    assert without_wall_time(summaries[0]) == without_wall_time(summaries[1])


def test_replications_give_mean_and_ci95():
    sc = cs.Scenario.load(FOUR_TEAMS).set("run.until", "3d").set("run.replications", 3)
    block = cs.run(sc).summary["jobs"]
    for key in CONTRACT_KEYS - {"queues"}:
        assert set(block[key]) == {"mean", "ci95"}, key
    assert set(block["queues"]["llm"]["wait_mean_s"]) == {"mean", "ci95"}
    assert block["submitted"]["ci95"] > 0 and math.isfinite(block["wait_mean_s"]["mean"])


def test_a_trace_names_its_queues_and_a_bad_row_is_an_input_error(tmp_path):
    trace = tmp_path / "queued.csv"
    trace.write_text("submit_time,gpus,duration,queue\n0,8,100,batch\n5,8,10,urgent\n")
    sc = trace_scenario(tmp_path, "priority")
    sc.set("workload.trace", str(trace))
    sc.set("fleet.nodes", 1)
    sc.set("fleet.scheduler.queues", [{"name": "batch"}, {"name": "urgent", "priority": 1}])
    sc.set("fleet.scheduler.preemption", True)
    result = cs.run(sc)
    jobs = result.jobs.set_index("job")
    assert list(jobs["queue"]) == ["batch", "urgent"]
    # No checkpoints: the preempted batch job loses its 5 s and starts over when urgent ends.
    assert jobs.loc[0, "preemptions"] == 1 and jobs.loc[0, "lost_work_s"] == pytest.approx(5)
    assert jobs.loc[1, "start_s"] == 5
    assert result.summary["jobs"]["queues"]["urgent"]["completed"] == 1

    trace.write_text("submit_time,gpus,duration,queue\n0,8,100,batch\n5,eight,10,urgent\n")
    with pytest.raises(cs.ScenarioError, match="workload.trace"):
        cs.run(sc)


TRAINING_JOBS = ROOT / "scenarios" / "jobs_training_placement.json"


def test_a_training_class_is_slowed_by_its_simulated_step_on_the_gpus_it_gets():
    doc = json.loads(TRAINING_JOBS.read_text())
    res = cs.run(doc)
    compact = res.summary["jobs"]["simulated_steps"]["train"]["compact_step_s"]
    # The compact step is the training scenario's step on two whole nodes of one leaf.
    train = json.loads(json.dumps(doc["workload"]["classes"][0]["training"]))
    step_doc = {"hardware": doc["hardware"], "topology": dict(doc["topology"], nodes=2), "network": doc["network"],
                "workload": dict(train, kind="training")}
    assert compact == cs.run(step_doc).summary["training"]["step_time_s"]
    jobs = res.jobs
    t = jobs[jobs["class"] == "train"]
    assert (t["slowdown"] >= 1 - 1e-12).all()
    assert (t.loc[t["nodes"] == 2, "slowdown"] == 1).all()  # two whole nodes of a leaf: compact
    assert t["slowdown"].max() > 1.2  # scattered over an oversubscribed spine
    assert (jobs.loc[jobs["class"] == "small", "slowdown"] == 1).all()  # no training, no penalty
    packed = cs.run(cs.Scenario(doc).copy().set("fleet.scheduler.placement", "topology")).jobs
    assert packed.loc[packed["class"] == "train", "slowdown"].max() < t["slowdown"].max()


@pytest.mark.parametrize("change, path", [
    ({"topology": None, "fleet.nodes": 16}, "workload.classes.0.training"),
    ({"workload.classes.0.spread_penalty": 0.1}, "workload.classes.0.spread_penalty"),
    ({"workload.classes.0.gpus": {"dist": "uniform", "low": 8, "high": 16}}, "workload.classes.0.gpus"),
    ({"workload.classes.0.training.parallel.dp": 4}, "workload.classes.0.training.parallel.dp"),
])
def test_a_training_class_errors_name_their_key(change, path):
    doc = json.loads(TRAINING_JOBS.read_text())
    sc = cs.Scenario(doc)
    for key, value in change.items():
        if value is None:
            del sc._doc[key]
        else:
            sc.set(key, value)
    with pytest.raises(cs.ScenarioError) as e:
        sc.validate()
    assert e.value.path == path
