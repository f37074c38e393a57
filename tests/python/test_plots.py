"""Plot helpers draw what they are given: one line per labelled result and algorithm, a band
per group."""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from conftest import ROOT  # noqa: E402

import clustersim as cs  # noqa: E402


def test_collective_sizes_draws_a_line_per_result_and_algorithm():
    sweep = cs.run(ROOT / "scenarios" / "nccl_tests_sweep.json")
    flagship = cs.run(ROOT / "scenarios" / "fat_tree_allreduce.json")
    ax_time, ax_bw = cs.collective_sizes({"one node": sweep, "16 nodes": flagship})
    labels = [c.get_label() for c in ax_bw.containers]  # one errorbar container per line
    assert labels == ["one node ring", "one node tree", "one node in_network", "one node auto", "16 nodes ring"]
    ring = ax_bw.containers[-1].lines[0]
    assert list(ring.get_ydata()) == [r["busbw_GBps"] for r in flagship.summary["collective"]["results"]]
    with pytest.raises(ValueError, match="not a collective"):
        cs.collective_sizes(cs.run(ROOT / "scenarios" / "incast.json"))


def test_goodput_vs_interval_draws_a_band_per_market():
    sc = cs.Scenario.load(ROOT / "scenarios" / "training_run_spot_405b.json").set("run.replications", 4)
    df = cs.sweep(sc, {"fleet.market": ["on_demand", "spot"], "fleet.checkpoint.interval": ["300s", "900s"]}, jobs=2)
    ax = cs.goodput_vs_interval(df, by="fleet.market")
    assert [line.get_label() for line in ax.get_lines()] == ["on_demand", "spot"]
    assert len(ax.collections) == 2  # the confidence bands
    spot = ax.get_lines()[1]
    rows = df[df["fleet.market"] == "spot"]
    assert list(spot.get_xdata()) == list(rows["training_run.checkpoint.interval_s.mean"] / 60)  # whole steps of 5.85 s
