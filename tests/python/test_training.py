"""Training steps from the CLI and Python: the summary and its readable breakdown, traces,
`clustersim plan` (ranked, identical for any -j, the same as Python's cs.plan), input errors."""
import csv
import io
import json

import pytest

from conftest import ROOT, run_cli, without_wall_time

import clustersim as cs

GPT3 = ROOT / "scenarios" / "gpt3_175b_1024_h100.json"


def small_cluster(tmp_path):
    """Llama 3 8B cut to 4 layers of 1,024 tokens on 2 DGX-like nodes: a plan space small enough
    for a test."""
    doc = {
        "name": "small_plan",
        "hardware": {"gpu": "H100-SXM", "node": {"gpus": 8, "nics": 8, "nic_bandwidth": "400Gbps"}},
        "topology": {"kind": "fat_tree", "nodes": 2, "switch_radix": 16, "link_bandwidth": "400Gbps"},
        "network": {"model": "analytical"},
        "workload": {"kind": "training", "model": {"preset": "llama3-8b", "layers": 4, "seq_len": 1024},
                     "parallel": {"tp": 8, "dp": 2}, "batch": {"global": 8, "micro": 1}},
    }
    path = tmp_path / "small_plan.json"
    path.write_text(json.dumps(doc))
    return path


def test_cli_prints_where_the_step_goes():
    out = run_cli("run", GPT3, check=True).stdout
    assert "training gpt3-175b on 1024 GPUs: tp 8 pp 8 dp 16" in out
    assert "where a GPU's step goes:" in out
    assert "exposed tp communication" in out
    assert "memory per GPU:" in out and "(fits)" in out


def test_python_run_gives_the_cli_summary():
    cli = json.loads(run_cli("run", GPT3, "--json", check=True).stdout)
    py = cs.run(str(GPT3)).summary
    assert without_wall_time(py) == without_wall_time(cli)
    t = py["training"]
    for key in ("step_time_s", "tokens_per_s", "tflops_per_gpu", "model_tflops_per_gpu", "mfu", "bubble_fraction",
                "compute_s", "exposed_comm_s", "memory_per_gpu_bytes", "fits"):
        assert key in t
    assert 0 < t["mfu"] < 1


def test_trace_has_a_track_per_gpu_stream(tmp_path):
    sc = cs.Scenario.load(str(ROOT / "scenarios" / "workstation_7b_offload.json"))
    sc.set("run.trace", "trace.json")
    res = cs.run(sc)
    names = {e["args"]["name"] for e in res.trace["traceEvents"] if e.get("ph") == "M" and e["name"] == "thread_name"}
    assert {"compute", "dp", "dp_gather", "host"} <= names
    gpus = {e["args"]["name"] for e in res.trace["traceEvents"] if e.get("ph") == "M" and e["name"] == "process_name"}
    assert gpus == {"GPU 0 (node 0): stage 0 replica 0, rank 0"}  # one replica simulated: exact here
    # The CLI writes it next to the summary.
    out = tmp_path / "out"
    run_cli("run", GPT3, "--set", "run.trace=step.json", "--set", "workload.batch.global=128", "--out", out,
            check=True)
    trace = json.loads((out / "step.json").read_text())
    assert sum(1 for e in trace["traceEvents"] if e.get("ph") == "X") > 0


def test_plan_ranks_every_fitting_plan_the_same_for_any_jobs(tmp_path):
    path = small_cluster(tmp_path)
    one = json.loads(run_cli("plan", path, "--json", "-j", "1", check=True).stdout)
    two = json.loads(run_cli("plan", path, "--json", "-j", "2", check=True).stdout)
    assert one == two
    assert one["plans_valid"] == one["plans_dropped"] + one["plans_simulated"]
    assert one["plans_simulated"] == len(one["plans"]) > 10
    assert one["plans_refined"] >= 10  # the default
    assert [p["simulation"] for p in one["plans"][:10]] == ["network"] * 10
    speeds = [p["tokens_per_s"] for p in one["plans"]]
    assert speeds == sorted(speeds, reverse=True)
    assert [p["rank"] for p in one["plans"]] == list(range(1, len(speeds) + 1))
    assert all(p["memory_per_gpu_bytes"] <= 80e9 for p in one["plans"])
    assert all(p["tp"] * p["pp"] * p["dp"] * p["cp"] == 16 for p in one["plans"])
    top = json.loads(run_cli("plan", path, "--json", "--top", "3", check=True).stdout)
    assert top["plans"] == one["plans"][:3]
    table = run_cli("plan", path, "--top", "5", check=True).stdout
    assert "valid plans" in table and len(table.strip().splitlines()) == 2 + 5
    screened = json.loads(run_cli("plan", path, "--json", "--refine", "0", check=True).stdout)
    assert screened["plans_refined"] == 0
    assert {p["simulation"] for p in screened["plans"]} == {"screening"}


def test_plan_csv_and_python_dataframe_agree(tmp_path):
    path = small_cluster(tmp_path)
    out = tmp_path / "plans.csv"
    proc = run_cli("plan", path, "--out", out, "-j", "2", check=True)
    assert proc.stdout  # the table
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    df = cs.plan(str(path), jobs=2)
    assert len(rows) == len(df) == df.attrs["plans_simulated"]
    assert df.attrs["plans_valid"] == df.attrs["plans_simulated"] + df.attrs["plans_dropped"]
    assert list(df.columns) == list(rows[0].keys())
    for row, (_, r) in zip(rows, df.iterrows()):
        assert float(row["tokens_per_s"]) == pytest.approx(r["tokens_per_s"], rel=1e-15)
        assert (int(row["tp"]), int(row["pp"]), row["schedule"], row["recompute"]) == \
            (r["tp"], r["pp"], r["schedule"], r["recompute"])


def test_plan_drops_plans_inside_the_memory_headroom_and_says_so(tmp_path):
    path = small_cluster(tmp_path)
    narrow = ["--refine", "0", "--only", "schedule=1f1b", "--only", "zero=0", "--only", "recompute=none"]
    none = json.loads(run_cli("plan", path, "--json", "--memory-headroom", "0", *narrow, check=True).stdout)
    assert none["memory_headroom"] == 0 and none["plans_dropped_in_headroom"] == 0
    # A GPU the fullest plan fills to 97%: every plan still fits in it, and those above 95% of
    # it are inside the default 5% headroom.
    need = [p["memory_per_gpu_bytes"] for p in none["plans"]]
    memory = max(need) / 0.97
    gpu = ["--set", f'hardware.gpu={{"name": "H100-SXM", "memory": {memory:.0f}}}']
    inside = [m for m in need if m > 0.95 * memory]
    assert inside
    default = json.loads(run_cli("plan", path, "--json", *gpu, *narrow, check=True).stdout)
    assert default["memory_headroom"] == 0.05
    assert default["plans_dropped_in_headroom"] == len(inside)
    assert default["plans_dropped"] == none["plans_dropped"] + len(inside)
    assert all(p["memory_per_gpu_bytes"] <= 0.95 * memory for p in default["plans"])
    # --memory-headroom is the scenario's key, and Python's argument.
    keyed = json.loads(run_cli("plan", path, "--json", *gpu, "--set", "workload.memory_headroom=0", *narrow,
                               check=True).stdout)
    assert keyed["plans_dropped_in_headroom"] == 0 and keyed["plans_dropped"] == none["plans_dropped"]
    table = run_cli("plan", path, "--top", "1", *gpu, *narrow, check=True).stdout
    assert f"{len(inside)} of them within the GPU's memory but not its 5% headroom" in table
    df = cs.plan(cs.Scenario.load(str(path)).override(gpu[1]), refine=0, memory_headroom=0,
                 only={"schedule": "1f1b", "zero": 0, "recompute": "none"})
    assert df.attrs["plans_dropped_in_headroom"] == 0 and len(df) == len(none["plans"])
    assert run_cli("plan", path, "--memory-headroom", "0.6").returncode == 2


def test_a_step_inside_the_headroom_does_not_fit(tmp_path):
    path = small_cluster(tmp_path)
    need = cs.run(str(path)).summary["training"]["memory"]["per_gpu_bytes"]
    # A GPU the step fills to 97%: within its memory, inside the default 5% headroom.
    gpu = f'hardware.gpu={{"name": "H100-SXM", "memory": {need / 0.97:.0f}}}'
    t = cs.run(cs.Scenario.load(str(path)).override(gpu)).summary["training"]
    assert not t["fits"] and not t["memory"]["gpu_fits"]
    assert t["memory"]["headroom"] == 0.05
    assert t["memory"]["usable_bytes"] == pytest.approx(need / 0.97 * 0.95, rel=1e-9)
    assert t["memory"]["per_gpu_bytes"] <= t["memory"]["capacity_bytes"]
    out = run_cli("run", path, "--set", gpu, check=True).stdout
    assert "does NOT fit: inside the 5% headroom" in out
    # With no headroom asked, it fits: the rule before the headroom.
    assert cs.run(cs.Scenario.load(str(path)).override(gpu).set("workload.memory_headroom", 0)).summary["training"]["fits"]
    proc = run_cli("run", path, "--set", "workload.memory_headroom=0.7")
    assert proc.returncode == 2 and "workload.memory_headroom" in proc.stderr


def test_plan_needs_a_training_scenario():
    proc = run_cli("plan", ROOT / "scenarios" / "incast.json")
    assert proc.returncode == 2
    assert "error: workload.kind:" in proc.stderr and "training" in proc.stderr
    with pytest.raises(cs.ScenarioError, match="workload.kind"):
        cs.plan(str(ROOT / "scenarios" / "incast.json"))


def test_training_input_errors_exit_2_naming_the_key():
    proc = run_cli("run", GPT3, "--set", "workload.parallel.dp=8")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: workload.parallel.dp: tp x pp x dp x cp = 8 x 8 x 8 x 1 = 512, "
                                  "but the cluster has 1024 GPUs")
    assert "hint: dp = 16 uses every GPU" in proc.stderr
    proc = run_cli("run", GPT3, "--set", "workload.model.preset=gpt3")
    assert proc.returncode == 2
    assert 'did you mean "gpt3-175b"?' in proc.stderr


def test_a_plan_that_does_not_fit_is_a_result():
    s = json.loads(run_cli("run", ROOT / "scenarios" / "workstation_7b_ddp.json", "--json", check=True).stdout)
    t = s["training"]
    assert t["fits"] is False
    assert t["memory"]["per_gpu_bytes"] > t["memory"]["capacity_bytes"] == 24e9
    assert t["step_time_s"] > 0
    offload = cs.run(str(ROOT / "scenarios" / "workstation_7b_offload.json")).summary["training"]
    assert offload["fits"] is True
    assert offload["memory"]["host_fits"] is True
    assert offload["breakdown"]["exposed_comm_s"]["offload"] > 0


def test_step_and_memory_tables_add_up_and_plots_draw():
    import matplotlib

    matplotlib.use("Agg")
    res = cs.run(ROOT / "scenarios" / "workstation_7b_offload.json")
    t = res.summary["training"]
    step = res.step
    assert step["seconds"].sum() == pytest.approx(t["step_time_s"], rel=1e-9)
    assert step["share"].sum() == pytest.approx(1.0, rel=1e-9)
    assert set(step["component"]) >= {"compute", "optimizer", "exposed offload", "bubble"}
    memory = res.memory
    assert memory.loc[0, "total"] == t["memory"]["per_stage"][0]["total_bytes"]
    assert memory.attrs["capacity_bytes"] == 24e9
    ax = res.plot()  # a training result's natural view: the step breakdown
    assert len(ax.patches) >= 3
    ax = cs.step_breakdown({"ddp": cs.run(ROOT / "scenarios" / "workstation_7b_ddp.json"), "offload": res})
    assert [t.get_text() for t in ax.get_yticklabels()] == ["ddp", "offload"]


def test_pipeline_timeline_draws_every_compute_task_of_the_trace(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    sc = cs.Scenario.load(ROOT / "scenarios" / "llama3_70b_256_h100.json")
    sc.set("topology.nodes", 8).set("workload.parallel.dp", 2).set("workload.batch.global", 8)
    sc.set("workload.model.layers", 40)  # 2 layers per model chunk: a small trace
    sc.set("run.trace", str(tmp_path / "step.json"))
    res = cs.run(sc)
    assert res.trace is not None
    ax = cs.pipeline_timeline(res, max_gpus=64)
    events = res.trace["traceEvents"]
    compute = {(e["pid"], e["tid"]) for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"
               and e["args"]["name"] == "compute"}
    spans = [e for e in events if e.get("ph") == "X" and (e["pid"], e["tid"]) in compute]
    drawn = sum(len(c.get_paths()) for c in ax.collections)
    assert drawn == len(spans) > 0
    assert {t.get_text() for t in ax.get_legend().get_texts()} == {e["cat"] for e in spans}
    with pytest.raises(ValueError, match="run.trace"):
        cs.pipeline_timeline(cs.run(ROOT / "scenarios" / "workstation_7b_offload.json"))


@pytest.mark.parametrize("name", ["fat_tree_allreduce.json", "training_run_by_hand.json", "jobs_four_teams.json",
                                  "incast.json", "serving_mmc_erlang_c.json"])
def test_every_kind_has_a_natural_plot(name):
    import matplotlib

    matplotlib.use("Agg")
    assert cs.run(ROOT / "scenarios" / name).plot() is not None


def test_plan_only_narrows_the_plans_in_the_cli_and_python_alike(tmp_path):
    path = small_cluster(tmp_path)
    out = tmp_path / "plans.csv"
    run_cli("plan", path, "--refine", "2", "--only", "schedule=1f1b", "--only", "zero=1,2", "--out", out, check=True)
    cli = list(csv.DictReader(io.StringIO(out.read_text())))
    py = cs.plan(path, refine=2, only={"schedule": ["1f1b"], "zero": [1, 2]})
    assert len(cli) == len(py) > 0
    assert set(py["schedule"]) == {"1f1b"} and set(py["zero"]) <= {1, 2}
    assert [float(r["tokens_per_s"]) for r in cli] == pytest.approx(list(py["tokens_per_s"]), rel=1e-15)
    with pytest.raises(cs.ScenarioError) as e:
        cs.plan(path, only={"zeros": 1})
    assert e.value.path == "only"
    bad = run_cli("plan", path, "--only", "schedule=1F1B")
    assert bad.returncode == 2 and "error: --only: schedule" in bad.stderr


def _long_context_step(seq_len, cp):
    """Llama 3 8B cut to 2 layers, one sequence of `seq_len` tokens split over `cp` GPUs of one
    DGX-like node: one micro-batch."""
    doc = {
        "name": "long_context",
        "hardware": {"gpu": "H100-SXM", "node": {"gpus": 8, "fabric": "nvswitch"}},
        "topology": {"kind": "single_node"},
        "network": {"model": "analytical"},
        "workload": {"kind": "training", "model": {"preset": "llama3-8b", "layers": 2, "seq_len": seq_len},
                     "parallel": {"cp": cp, "dp": 8 // cp}, "batch": {"global": 8 // cp, "micro": 1},
                     "precision": "bf16"},
    }
    return cs.run(cs.Scenario.from_json(json.dumps(doc))).summary["training"]


def test_long_sequences_with_context_parallelism_stay_consistent():
    """Up to 128K tokens: model FLOPs per token grow by attention's causal 6 L h s alone, the MFU
    stays below 1, and each context-parallel rank times 1/cp of the sequence's attention (the
    causal half of s x s, balanced over the ranks), so attention seconds x cp do not depend on cp."""
    layers, hidden = 2, 4096
    attention_s = {}
    for seq_len, cp in [(8192, 1), (32768, 4), (131072, 8), (131072, 4)]:
        t = _long_context_step(seq_len, cp)
        assert 0 < t["mfu"] < 1, (seq_len, cp)
        tokens = t["flops"]["tokens_per_step"]
        per_token = t["flops"]["model_per_step"] / tokens
        if seq_len == 8192:
            base = (seq_len, per_token)
        else:
            assert per_token - base[1] == pytest.approx(6 * layers * hidden * (seq_len - base[0]), rel=1e-9)
        ops = {(o["phase"], o["op"]): o["seconds"] for o in t["ops"]}
        attention_s[(seq_len, cp)] = (ops[("forward", "attention")] + ops[("backward_input", "attention")]) * cp
    # Per rank, 2 layers, one micro-batch, forward and backward: the launch gaps aside (1 us per
    # kernel, and the ring runs a kernel per step: cp of them per attention op).
    def work(seq_len, cp):
        return attention_s[(seq_len, cp)] - cp * (2 * layers * cp * 1e-6)
    assert work(131072, 8) == pytest.approx(work(131072, 4), rel=1e-6)
    # Quadratic in the sequence: 4x the tokens, 16x the attention.
    assert work(32768, 4) == pytest.approx(16 * work(8192, 1), rel=1e-6)
