"""Serving scenarios end to end: the CLI and Python agree, the CLI's readable summary and time
series, the plot helper returns a figure, replications give {mean, ci95}."""
import json

import matplotlib
import matplotlib.figure

matplotlib.use("Agg")

import pytest

import clustersim as cs
from conftest import ROOT, run_cli, without_wall_time

ERLANG_C = ROOT / "scenarios" / "serving_mmc_erlang_c.json"
DIURNAL_HPA = ROOT / "scenarios" / "serving_llm_diurnal_hpa.json"
CONTRACT_KEYS = {"requests", "completed", "dropped", "latency_mean_s", "latency_p50_s", "latency_p95_s",
                 "latency_p99_s", "wait_mean_s", "slo_attainment", "replicas_mean", "replicas_max", "cost_usd"}
# Short runs: the shipped files are days or ten replications.
SHORT_LLM = ["run.until=2h", "workload.arrivals.period=2h", "workload.arrivals.peak_at=1h"]


def short_llm():
    sc = cs.Scenario.load(DIURNAL_HPA)
    for s in SHORT_LLM:
        sc.override(s)
    return sc


def test_cli_and_python_give_the_same_summary():
    sets = [a for s in SHORT_LLM for a in ("--set", s)]
    cli = json.loads(run_cli("run", DIURNAL_HPA, "--json", *sets, check=True).stdout)
    py = cs.run(short_llm()).summary
    assert without_wall_time(cli) == without_wall_time(py)
    block = py["serving"]
    # An LLM fleet adds its cost per million tokens to the contract's keys.
    assert {k for k, v in block.items() if not isinstance(v, dict)} == CONTRACT_KEYS | {"cost_per_million_tokens_usd"}
    assert {"latency", "slo", "ttft", "tpot", "llm", "drops", "cost_usd_by_market", "cost_breakdown_usd",
            "replica_hours_by_market", "fleet"} <= set(block)


def test_replications_give_mean_and_ci():
    sc = cs.Scenario.load(ERLANG_C).set("run.until", "20min").set("run.replications", 3)
    block = cs.run(sc).summary["serving"]
    assert set(block["wait_mean_s"]) == {"mean", "ci95"}
    assert block["replicas_max"] == {"mean": 8, "ci95": 0}


def test_cli_prints_a_readable_summary_and_writes_the_time_series(tmp_path):
    proc = run_cli("run", DIURNAL_HPA, "--out", tmp_path, *[a for s in SHORT_LLM for a in ("--set", s)], check=True)
    assert proc.stdout.count("serving: ") == 1
    for label in ("latency", "SLO", "TTFT", "TPOT", "replicas", "cost"):
        assert f"\n  {label}" in proc.stdout
    lines = (tmp_path / "timeseries.csv").read_text().splitlines()
    series = {line.split(",")[0] for line in lines[1:]}
    assert {"serving.arrival_rate", "serving.replicas_ready", "serving.replicas_starting", "serving.queue_length",
            "serving.latency_p99_s", "serving.cost_usd", "serving.scaling_metric"} <= series
    assert "serving.total_cost_usd" not in series  # one cost column, not two


def test_the_plot_helper_returns_a_figure():
    res = cs.run(short_llm())
    frame = cs.serving_frame(res)
    assert {"replicas_ready", "replicas_desired", "latency_p99_s", "cost_usd"} <= set(frame.columns)
    assert frame["replicas_desired"].between(2, 40).all()
    # The cost only grows.
    assert frame["cost_usd"].is_monotonic_increasing
    fig = cs.serving_plot(res)
    assert isinstance(fig, matplotlib.figure.Figure)
    assert len(fig.axes) >= 3


def test_the_time_series_name_what_they_hold():
    sc = short_llm().set("run.warmup", "30min")
    res = cs.run(sc)
    frame = cs.serving_frame(res)
    # Arrivals during the warm-up are in the rate (the fleet sees them), not in the summary.
    warm = frame[frame.index <= 1800]
    assert (warm["arrival_rate"] > 0).all()
    # The autoscaler's metric per ready replica, beside the fleet's total it comes from.
    seen = frame[(frame["scaling_metric_total"] > 0) & (frame["replicas_ready"] > 1)]
    assert not seen.empty
    assert (seen["scaling_metric"] <= seen["scaling_metric_total"]).all()
    assert (seen["scaling_metric"] < seen["scaling_metric_total"]).any()
    # One cost column: the fleet's cost so far, ending at the summary's cost.
    assert "total_cost_usd" not in frame.columns
    assert frame["cost_usd"].iloc[-1] == pytest.approx(res.summary["serving"]["cost_usd"], rel=0.02)


def test_the_plot_helper_refuses_other_results():
    res = cs.run(ROOT / "scenarios" / "training_run_by_hand.json")
    with pytest.raises(ValueError, match="serving"):
        cs.serving_frame(res)


def test_fleet_prices_are_per_node_hour_and_a_replica_pays_its_gpus_share():
    # Eight GPUs per node at $80 a node-hour: a one-GPU replica costs $10 an hour, a two-GPU
    # replica $20; a plain server (no GPUs) a whole node.
    for gpus, per_replica_hour in [(1, 10.0), (2, 20.0)]:
        sc = short_llm().set("hardware.node.gpus", 8).set("workload.replica.gpus", gpus)
        sc.set("fleet.prices", {"on_demand": "$80/h"})
        s = cs.run(sc).summary["serving"]
        hours = s["replica_hours_by_market"]["on_demand"]
        assert s["cost_usd_by_market"]["on_demand"] == pytest.approx(hours * per_replica_hour, rel=1e-9)
    mmc = cs.Scenario.load(ERLANG_C).set("run.replications", 1).set("run.until", "20min")
    mmc.set("fleet.prices", {"on_demand": "$3/h"})
    s = cs.run(mmc).summary["serving"]
    assert s["cost_usd"] == pytest.approx(s["replica_hours_by_market"]["on_demand"] * 3.0, rel=1e-9)


def _one_replica_llm(**request):
    """A fixed single LLM replica under a light Poisson load for 10 minutes."""
    sc = short_llm()
    sc.override('fleet.autoscaler={"policy":"fixed","replicas":1}')
    sc.override("run.until=10min")
    sc.override('workload.arrivals={"process":"poisson","rate":"4/s"}')
    sc.override('workload.request.prompt_tokens=2000')
    sc.override('workload.request.output_tokens=50')
    for key, value in request.items():
        sc.override(f"workload.request.{key}={json.dumps(value)}")
    return sc


def test_a_shared_prompt_prefix_is_computed_once_and_cuts_ttft():
    plain = cs.run(_one_replica_llm()).summary["serving"]
    shared = cs.run(_one_replica_llm(shared_prefix={"tokens": 1800, "groups": 2})).summary["serving"]
    assert shared["requests"] == plain["requests"]
    # 1,792 of each prompt's 2,000 tokens come from the cache after the first of its group.
    assert shared["ttft"]["mean_s"] < 0.5 * plain["ttft"]["mean_s"]
    sc = _one_replica_llm(shared_prefix={"tokens": 1800, "groups": 2})
    sc.override("workload.replica.prefix_caching=false")
    off = cs.run(sc).summary["serving"]
    assert off["ttft"]["mean_s"] == pytest.approx(plain["ttft"]["mean_s"], rel=0.05)


@pytest.mark.parametrize("gpu", ["A100-80GB-PCIe", "L40S", "RTX-PRO-6000", "H200", "B200"])
def test_serving_names_current_gpus(gpu):
    sc = _one_replica_llm()
    sc.override(f'hardware.gpu="{gpu}"')
    sc.override('fleet.prices={"on_demand": "$20/h"}')  # not every GPU has a catalog instance
    s = cs.run(sc).summary["serving"]
    assert s["completed"] > 0 and s["tpot"]["mean_s"] > 0


def test_tensor_parallel_all_reduces_pay_nccl_latency_over_pcie():
    """Two GPUs over PCIe: each of the 2 x 32 all-reduces of a decode step pays NCCL's latency
    (a few microseconds), so TP2 is slower than half of one GPU's step."""
    def tpot(gpus, fabric):
        sc = _one_replica_llm()
        sc.override('workload.arrivals={"process":"poisson","rate":"0.05/s"}')
        sc.override(f"workload.replica.gpus={gpus}")
        sc.override(f'hardware.node={{"gpus": 8, "fabric": "{fabric}"}}')
        return cs.run(sc).summary["serving"]["tpot"]["mean_s"]
    one, two_pcie, two_nvswitch = tpot(1, "pcie"), tpot(2, "pcie"), tpot(2, "nvswitch")
    assert two_nvswitch < two_pcie < one
    assert two_pcie - one / 2 > 64 * 5e-6


def test_without_p2p_the_tensor_parallel_all_reduces_are_staged_through_host_memory():
    """Two GPUs over PCIe without peer-to-peer: NCCL's SHM transport, each all-reduce at 0.248
    of the PCIe rate (data/nccl_tuning.json). A 2,000-token prompt of Llama 3 8B is one
    prefill chunk with 64 all-reduces of 2,000 x 4,096 x 2 bytes, so its TTFT grows by
    64 x 16.384 MB x (1 / (0.248 x 64 GB/s) - 1 / 64 GB/s) = 49.7 ms; latency terms are NCCL's
    PCI ones either way."""
    def ttft(p2p):
        sc = _one_replica_llm()
        sc.override('workload.arrivals={"process":"poisson","rate":"0.05/s"}')
        sc.override("workload.replica.gpus=2")
        sc.override(f'hardware.node={{"gpus": 8, "fabric": "pcie", "p2p": {json.dumps(p2p)}}}')
        return cs.run(sc).summary["serving"]["ttft"]["mean_s"]
    expected = 64 * 2000 * 4096 * 2 * (1 / (0.248 * 64e9) - 1 / 64e9)
    assert ttft(False) - ttft(True) == pytest.approx(expected, rel=0.03)


@pytest.mark.parametrize("key, value, path", [
    ("workload.request.shared_prefix", '{"tokens": -1}', "workload.request.shared_prefix.tokens"),
    ("workload.request.shared_prefix", '{"groups": 2}', "workload.request.shared_prefix"),
    ("workload.request.shared_prefix", '{"tokens": 100, "groups": 0}', "workload.request.shared_prefix.groups"),
    ("workload.replica.prefix_caching", '"yes"', "workload.replica.prefix_caching"),
    ("workload.replica.paged_kv_efficiency", "0", "workload.replica.paged_kv_efficiency"),
    ("workload.replica.paged_kv_efficiency", "1.5", "workload.replica.paged_kv_efficiency"),
])
def test_bad_prefix_options_name_their_path(key, value, path):
    proc = run_cli("run", DIURNAL_HPA, "--set", f"{key}={value}", "--set", "run.until=1min")
    assert proc.returncode == 2, proc.stderr
    assert path in proc.stderr


def test_a_trace_gives_shared_prefixes(tmp_path):
    trace = tmp_path / "trace.csv"
    rows = ["timestamp,prompt_tokens,output_tokens,prefix_id,prefix_tokens"]
    rows += [f"{i * 0.5},2000,20,{1 + i % 2},1800" for i in range(200)]
    trace.write_text("\n".join(rows) + "\n")
    sc = _one_replica_llm()
    sc.override(f'workload.arrivals={{"process":"trace","trace":"{trace}"}}')
    with_prefix = cs.run(sc).summary["serving"]
    trace.write_text("\n".join(r.rsplit(",", 2)[0] if i else "timestamp,prompt_tokens,output_tokens"
                               for i, r in enumerate(rows)) + "\n")
    without = cs.run(sc).summary["serving"]
    assert with_prefix["completed"] == without["completed"] == 200
    assert with_prefix["ttft"]["mean_s"] < 0.5 * without["ttft"]["mean_s"]
    bad = tmp_path / "bad.csv"
    bad.write_text("timestamp,prompt_tokens,prefix_id\n0,100,-3\n")
    proc = run_cli("run", DIURNAL_HPA, "--set", f'workload.arrivals={{"process":"trace","trace":"{bad}"}}')
    assert proc.returncode == 2 and "prefix_id" in proc.stderr
