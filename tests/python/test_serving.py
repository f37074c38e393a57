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
            "serving.latency_p99_s", "serving.total_cost_usd"} <= series


def test_the_plot_helper_returns_a_figure():
    res = cs.run(short_llm())
    frame = cs.serving_frame(res)
    assert {"replicas_ready", "replicas_desired", "latency_p99_s", "total_cost_usd"} <= set(frame.columns)
    assert frame["replicas_desired"].between(2, 40).all()
    # The cost only grows.
    assert frame["total_cost_usd"].is_monotonic_increasing
    fig = cs.serving_plot(res)
    assert isinstance(fig, matplotlib.figure.Figure)
    assert len(fig.axes) >= 3


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
