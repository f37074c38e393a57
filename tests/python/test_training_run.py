"""training_run scenarios end to end: the CLI and Python agree, replications give the mean and
95% CI of the single runs, on-demand vs spot vs a mix, the Gantt chart, input errors."""
import json
import math
import statistics

import pytest

import clustersim as cs
from conftest import ROOT, run_cli, without_wall_time

BY_HAND = ROOT / "scenarios" / "training_run_by_hand.json"
SPOT_405B = ROOT / "scenarios" / "training_run_spot_405b.json"
CONTRACT_KEYS = {"wall_time_s", "goodput", "interruptions", "failures", "checkpoints", "lost_work_s",
                 "restore_time_s", "cost_usd"}


@pytest.mark.parametrize("path", [BY_HAND, SPOT_405B], ids=lambda p: p.name)
def test_cli_and_python_give_the_same_summary(path):
    cli = json.loads(run_cli("run", path, "--json", check=True).stdout)
    py = cs.run(cs.Scenario.load(path)).summary
    assert without_wall_time(cli) == without_wall_time(py)
    block = py["training_run"]
    numbers = {k for k, v in block.items() if not isinstance(v, dict) or set(v) == {"mean", "ci95"}}
    assert numbers == CONTRACT_KEYS
    assert {"job", "checkpoint", "fleet", "time_in_state_s", "cost_usd_by_market",
            "node_hours_by_market"} <= set(block)


def test_the_hand_worked_numbers():
    s = cs.run(BY_HAND).summary
    t = s["training_run"]
    assert s["sim_time_s"] == 9300
    assert (t["wall_time_s"], t["checkpoints"], t["failures"], t["lost_work_s"], t["restore_time_s"]) == \
        (9300, 4, 1, 1020, 120)
    assert t["goodput"] == pytest.approx(7200 / 9300)
    assert t["cost_usd"] == pytest.approx((4 * 9300 - 600) / 3600 * 98.32)
    assert sum(t["time_in_state_s"].values()) == pytest.approx(9300)


def test_cli_prints_a_readable_summary_and_writes_the_time_series(tmp_path):
    proc = run_cli("run", BY_HAND, "--out", tmp_path, check=True)
    assert "training run: completed" in proc.stdout
    assert "goodput 0.7742" in proc.stdout and "$999.59" in proc.stdout
    assert proc.stderr == ""
    lines = (tmp_path / "timeseries.csv").read_text().splitlines()
    assert lines[0] == "series,time_s,value"
    series = {line.split(",")[0] for line in lines[1:]}
    assert {"training_run.state", "training_run.nodes.on_demand", "training_run.cost_usd",
            "training_run.committed_work_s"} <= series
    assert json.loads((tmp_path / "summary.json").read_text())["training_run"]["checkpoints"] == 4


def test_replications_give_the_mean_and_ci_of_the_single_runs():
    base = cs.Scenario.load(BY_HAND).set("fleet.failures.node_mtbf", "20h").set("fleet.nodes", 16)
    base.set("seed", 5)
    replicated = cs.run(base.copy().set("run.replications", 5)).summary
    assert replicated["replications"] == 5
    walls = [cs.run(base.copy().set("seed", 5 + r)).summary["training_run"]["wall_time_s"] for r in range(5)]
    stat = replicated["training_run"]["wall_time_s"]
    assert stat["mean"] == pytest.approx(statistics.mean(walls))
    t_975_df4 = 2.7764451051977987  # Student's t, two-sided 95%, 4 degrees of freedom
    assert stat["ci95"] == pytest.approx(t_975_df4 * statistics.stdev(walls) / math.sqrt(5))
    assert stat["ci95"] > 0
    # The CLI's table shows the interval.
    proc = run_cli("run", BY_HAND, "--set", "fleet.failures.node_mtbf=20h", "--set", "run.replications=5", check=True)
    assert "(means of 5 replications)" in proc.stdout and "+-" in proc.stdout


def test_compare_markets_on_demand_spot_and_a_mix():
    sc = cs.Scenario.load(SPOT_405B).set("workload.steps", 150000)  # 10 days of training
    df = cs.compare_markets(sc, mixes=[0, 0.7, 1.0, {"spot": 0.5, "reserved": 0.5}], replications=8)
    assert list(df["market"]) == ["on_demand", "70% spot", "spot", "50% spot + 50% reserved"]
    assert list(df["spot_share"]) == [0.0, 0.7, 1.0, 0.5]
    assert {"days", "days_ci95", "cost_usd", "cost_usd_ci95", "goodput", "goodput_ci95"} <= set(df.columns)
    on_demand, mix, spot = (df.iloc[i] for i in range(3))
    assert on_demand["interruptions"] == 0 and spot["interruptions"] > mix["interruptions"] > 0
    # Spot is cheaper per node-hour and slower: reclaims cost time.
    assert spot["cost_usd"] < mix["cost_usd"] < on_demand["cost_usd"]
    assert spot["days"] > on_demand["days"] > 150000 * 5.85 / 86400
    assert (df["days_ci95"] > 0).all() and (df["cost_usd_ci95"] > 0).all()
    assert (df["completed"] == 1).all()
    # The same as running each market alone.
    alone = cs.run(sc.copy().set("fleet.market", {"spot": 0.7}).set("run.replications", 8)).summary
    assert mix["days"] == pytest.approx(alone["training_run"]["wall_time_s"]["mean"] / 86400)


def test_gantt_returns_a_figure_of_the_job_states():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    res = cs.run(BY_HAND)
    intervals = cs.state_intervals(res)
    assert list(intervals["state"][:6]) == ["starting", "running", "checkpointing", "running", "waiting", "restoring"]
    assert list(intervals["start_s"][:6]) == [0, 120, 1920, 1980, 3000, 3600]
    assert intervals["duration_s"].sum() == pytest.approx(9300)
    fig = cs.gantt(res)
    assert isinstance(fig, Figure)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == \
        ["starting", "running", "checkpointing", "restoring", "waiting"]
    assert len(fig.axes) == 2  # states, then nodes per market
    assert len(cs.gantt(res, nodes=False).axes) == 1
    with pytest.raises(ValueError, match="not a training_run"):
        cs.state_intervals(cs.run(ROOT / "scenarios" / "incast.json"))


@pytest.mark.parametrize("path, value, where, says", [
    ("workload.training", {"model": {"preset": "llama3-70b"}}, "workload.step_time", "not both"),
    ("fleet.prices.spot", 39.33, "fleet.prices.spot", "$39.33/h"),
    ("fleet.interruptions.rate", 0.0003, "fleet.interruptions.rate", "0.0003/h"),
    ("fleet.checkpoint.storage", "lustre", "fleet.checkpoint.storage", "parallel_fs"),
    ("fleet.market", {"spot": 0.9, "reserved": 0.2}, "fleet.market", "more than 1"),
])
def test_input_errors_name_the_path(path, value, where, says, tmp_path):
    sc = cs.Scenario.load(BY_HAND).set(path, value)
    with pytest.raises(cs.ScenarioError, match=rf"^error: {where}:") as err:
        cs.run(sc)
    assert says in str(err.value)
    with pytest.raises(cs.ScenarioError):
        sc.validate()
    proc = run_cli("run", BY_HAND, "--set", f"{path}={json.dumps(value)}", "--out", tmp_path / "o")
    assert proc.returncode == 2 and proc.stderr.startswith(f"error: {where}:")
    assert says in proc.stderr and not (tmp_path / "o" / "summary.json").exists()
