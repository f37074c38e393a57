"""Statistics by default (issue 26, item 4): clustersim.paired compares variants at common
seeds and reports the paired difference's interval, warning when the seeds disagree; compare
gives 95% intervals beside its means under replications."""
import math
import statistics

import pytest

import clustersim as cs
from conftest import ROOT

# Daly's setting: 8 nodes failing every 8 h each, 60 s checkpoints, 20,000 s of work.
DALY = {"name": "daly", "seed": 1,
        "workload": {"kind": "training_run", "step_time": "1s", "steps": 20000},
        "fleet": {"nodes": 8, "market": "on_demand", "failures": {"node_mtbf": "8h", "replacement_delay": "0s"},
                  "checkpoint": {"interval": "600s", "write_time": "60s", "mode": "sync"},
                  "restore": {"detection": "0s", "restart": "0s", "restart_per_node": 0, "warmup": "0s"}}}
KEY = "training_run.wall_time_s"


def test_paired_differences_at_common_seeds():
    variants = {"618 s": {"fleet.checkpoint.interval": 618}, "640 s": {"fleet.checkpoint.interval": 640},
                "155 s": {"fleet.checkpoint.interval": 155}}
    with pytest.warns(UserWarning, match="the seeds disagree"):
        p = cs.paired(cs.Scenario(DALY), variants, KEY, replications=20, jobs=2)
    assert p.result["seeds"] == list(range(1, 21))
    values = {v["label"]: v["numbers"][KEY]["values"] for v in p.result["variants"]}
    diffs = {d["variant"]: d for d in p.result["differences"]}
    # The paired interval: Student's t over the per-seed differences.
    d = [a - b for a, b in zip(values["155 s"], values["618 s"])]
    t975_19 = 2.093024054408263
    assert diffs["155 s"]["mean"] == pytest.approx(statistics.fmean(d))
    assert diffs["155 s"]["ci95"] == pytest.approx(t975_19 * statistics.stdev(d) / math.sqrt(20))
    # Checkpointing every 155 s instead of Daly's 618 s costs about 18% more time (closed form
    # 28,650 against 24,150 s): conclusive, every seed agreeing.
    assert diffs["155 s"]["conclusive"] and diffs["155 s"]["higher"] == 20
    # 618 against 640 s is within the noise: the seeds disagree, and that is warned about.
    near = diffs["640 s"]
    assert not near["conclusive"] and near["lower"] > 0 and near["higher"] > 0
    assert len(p.warnings) == 1 and p.warnings[0].startswith(f"{KEY}: 640 s - 618 s = ")
    # Common seeds: the failures fall at the same times, so the difference is far surer than
    # the two means' intervals side by side.
    ci = {v["label"]: v["numbers"][KEY]["ci95"] for v in p.result["variants"]}
    assert diffs["155 s"]["ci95"] < math.hypot(ci["155 s"], ci["618 s"])
    assert set(p.differences.columns) >= {"key", "variant", "baseline", "mean", "ci95", "conclusive"}
    assert "inconclusive" in repr(p)


def test_paired_errors():
    sc = cs.Scenario(DALY)
    with pytest.raises(cs.ScenarioError) as e:
        cs.paired(sc, {"a": {}}, KEY)
    assert e.value.path == "paired" and "at least two variants" in str(e.value)
    with pytest.raises(cs.ScenarioError) as e:
        cs.paired(sc, {"a": {}, "b": {"fleet.nodes": 4}}, "training_run.wall_tme_s", replications=2)
    assert e.value.path == "paired" and e.value.hint == 'did you mean "training_run.wall_time_s"?'
    with pytest.raises(cs.ScenarioError) as e:
        cs.paired(sc, {"a": {}, "b": {"fleet.nodes": -1}}, KEY, replications=2)
    assert e.value.path == "fleet.nodes" and "(variant b)" in str(e.value)


def test_compare_gives_intervals_under_replications():
    fabric = cs.Scenario.load(ROOT / "scenarios" / "fat_tree_permutation.json")
    cmp = cs.compare([fabric], sets=["network.routing=ecmp", "run.replications=4"])
    row = cmp.results.iloc[0]
    assert row["makespan_s_ci95"] >= 0 and row["mean_fct_s_ci95"] > 0
    single = cs.compare([fabric], sets=["network.routing=ecmp"])
    assert "makespan_s_ci95" not in single.results
