"""Statistics by default: clustersim.paired (and `clustersim sweep --paired`) compares variants
at common seeds and reports the paired difference's interval, warning when the seeds disagree;
sweep and compare give 95% intervals beside their means under replications, and compare and size
say when their winner is within the noise."""
import io
import json
import math
import statistics

import pandas as pd
import pytest

import clustersim as cs
from conftest import ROOT, run_cli

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


# ---- the CLI: sweep --replications / --paired, compare --replications, and size ----

def daly_file(tmp_path):
    path = tmp_path / "daly.json"
    path.write_text(json.dumps(DALY))
    return path


def read_csv(text):
    return pd.read_csv(io.StringIO(text), float_precision="round_trip", keep_default_na=False, na_values=[""])


def test_sweep_paired_from_the_cli_is_python_paired(tmp_path):
    proc = run_cli("sweep", daly_file(tmp_path), "--grid", "fleet.checkpoint.interval=618,640,155", "--paired", KEY,
                   "--replications", "20", "-j", "2", check=True)
    rows = read_csv(proc.stdout)
    assert list(rows.columns) == ["fleet.checkpoint.interval", "key", "mean", "ci95", "difference_mean",
                                  "difference_ci95", "conclusive", "lower", "higher", "equal"]
    assert list(rows["fleet.checkpoint.interval"]) == [618, 640, 155] and set(rows["key"]) == {KEY}
    assert rows["difference_mean"].isna().iloc[0]  # the baseline
    variants = {"618 s": {"fleet.checkpoint.interval": 618}, "640 s": {"fleet.checkpoint.interval": 640},
                "155 s": {"fleet.checkpoint.interval": 155}}
    with pytest.warns(UserWarning):
        p = cs.paired(cs.Scenario(DALY), variants, KEY, replications=20, jobs=2)
    diffs = {d["variant"]: d for d in p.result["differences"]}
    for (_, row), label in zip(rows.iloc[1:].iterrows(), ["640 s", "155 s"]):
        assert row["difference_mean"] == diffs[label]["mean"]
        assert row["difference_ci95"] == diffs[label]["ci95"]
        assert bool(row["conclusive"]) == diffs[label]["conclusive"]
    # 640 s against 618 s: the seeds disagree and the interval covers 0, said on stderr.
    assert "warning: " + KEY + ": fleet.checkpoint.interval=640 - fleet.checkpoint.interval=618" in proc.stderr
    assert "not significant" in proc.stderr


def test_sweep_replications_give_means_and_intervals(tmp_path):
    path = daly_file(tmp_path)
    proc = run_cli("sweep", path, "--grid", "fleet.nodes=4,8", "--replications", "3", check=True)
    rows = read_csv(proc.stdout)
    assert {KEY + ".mean", KEY + ".ci95"} <= set(rows.columns)
    assert (rows[KEY + ".ci95"] > 0).all()
    same = read_csv(run_cli("sweep", path, "--grid", "fleet.nodes=4,8", "--set", "run.replications=3",
                            check=True).stdout)
    assert list(rows[KEY + ".mean"]) == list(same[KEY + ".mean"])
    df = cs.sweep(cs.Scenario(DALY), {"fleet.nodes": [4, 8]}, replications=3)
    assert list(df[KEY + ".mean"]) == list(rows[KEY + ".mean"])


def test_sweep_paired_bad_input_exits_2(tmp_path):
    path = daly_file(tmp_path)
    proc = run_cli("sweep", path, "--grid", "fleet.nodes=4,8", "--paired", "training_run.wall_tme_s",
                   "--replications", "2")
    assert proc.returncode == 2 and "error: --paired:" in proc.stderr and "training_run.wall_time_s" in proc.stderr
    proc = run_cli("sweep", path, "--grid", "fleet.nodes=4", "--paired", KEY)
    assert proc.returncode == 2 and "error: --paired:" in proc.stderr and "at least two variants" in proc.stderr
    proc = run_cli("sweep", path, "--grid", "fleet.nodes=4,8", "--replications", "0")
    assert proc.returncode == 2 and proc.stdout == ""


def test_compare_flags_a_winner_within_the_noise(tmp_path):
    # Two fabrics alike under ECMP's hashed routes: at common seeds any winner is chance.
    doc = json.loads((ROOT / "scenarios" / "fat_tree_permutation.json").read_text())
    doc["network"]["routing"] = "ecmp"
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(doc))
    doc["topology"]["link_latency"] = "0.6us"
    b.write_text(json.dumps(doc))
    out = json.loads(run_cli("compare", a, b, "--replications", "4", "--json", check=True).stdout)
    # The mean FCT varies with the seed (the hashed routes), 2414.7 against 2415.1 us +- 296 us.
    assert all(r["mean_fct_s_ci95"] > 0 for r in out["results"])
    assert any(w.startswith("[a] traffic mean_fct_s: a (") and "not significant" in w for w in out["warnings"])
    table = run_cli("compare", a, b, "--replications", "4", check=True).stdout
    assert "warning: [a] traffic mean_fct_s: " in table
    with pytest.warns(UserWarning, match="not significant"):
        cmp = cs.compare([a, b], replications=4)
    assert cmp.warnings == out["warnings"]
    # One seed: no intervals, nothing to judge by.
    assert json.loads(run_cli("compare", a, b, "--json", check=True).stdout)["warnings"] == []


def test_size_says_when_the_cheapest_is_within_the_noise(tmp_path):
    # Two intervals 20 s apart, each run at 10 seeds: which finishes sooner is chance.
    sc = cs.Scenario(DALY).set("run.replications", 10)
    with pytest.warns(UserWarning, match="not significant"):
        best = cs.size(sc, vary={"fleet.checkpoint.interval": [620, 600]}, require=[f"{KEY}<=1e9"], minimize=KEY)
    assert any("not significant" in w and KEY in w for w in best.warnings)
