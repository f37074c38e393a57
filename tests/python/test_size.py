"""`clustersim size` and clustersim.size: the least-cost point that meets every requirement
(docs/cli.md, docs/python.md); the same answer from the CLI, from Python's threads and from a
Dask cluster."""
import json
import math

import pandas as pd
import pytest

import clustersim as cs
from conftest import ROOT, require, run_cli

ERLANG_C = ROOT / "scenarios" / "serving_mmc_erlang_c.json"
# The M/M/c file shortened (40 simulated minutes, 4 replications) to keep the tests quick.
SHORT = ["--set", "run.until=40min", "--set", "run.replications=4"]


def mmc_mean_wait(c, lam=64.0, mu=10.0):
    """Erlang C's mean wait in queue of M/M/c."""
    a = lam / mu
    head = sum(a**k / math.factorial(k) for k in range(c))
    tail = a**c / math.factorial(c) * c / (c - a)
    return tail / (head + tail) / (c * mu - lam)


def short_scenario():
    return cs.Scenario.load(ERLANG_C).set("run.until", "40min").set("run.replications", 4)


def test_cli_size_json_finds_erlang_c_least_replicas():
    least = next(c for c in range(7, 31) if mmc_mean_wait(c) <= 0.006)
    assert least == 10
    proc = run_cli("size", ERLANG_C, *SHORT, "--vary", "fleet.autoscaler.replicas=7..30",
                   "--require", "serving.wait_mean_s<=0.006", "-j", "2", "--json", check=True)
    result = json.loads(proc.stdout)
    assert result["best"]["point"] == {"fleet.autoscaler.replicas": least}
    assert result["best"]["summary"]["serving"]["replicas_max"]["mean"] == least
    assert result["minimize"] == "serving.cost_usd"
    assert result["searched"] == "fleet.autoscaler.replicas"
    req = result["best"]["requirements"][0]
    assert req["sure"] is True and req["mean"] + req["ci95"] <= 0.006
    tried = [p["point"]["fleet.autoscaler.replicas"] for p in result["points"]]
    assert tried == [7, 8, 9, 10]  # bisected, not enumerated; in point order
    assert {p["point"]["fleet.autoscaler.replicas"]: p["feasible"] for p in result["points"]}[least - 1] is False
    assert all({"point", "feasible", "objective", "replications", "round"} <= set(p) for p in result["points"])
    text = run_cli("size", ERLANG_C, *SHORT, "--vary", "fleet.autoscaler.replicas=7..30",
                   "--require", "serving.wait_mean_s<=0.006", check=True).stdout
    assert text.startswith(f"best: fleet.autoscaler.replicas={least}  serving.cost_usd = ")
    assert "sure: its 95% interval clears the bound" in text


def test_python_size_matches_the_cli_and_tabulates_every_point():
    best = cs.size(short_scenario(), vary={"fleet.autoscaler.replicas": range(7, 31)},
                   require=["serving.wait_mean_s<=0.006"], minimize="serving.cost_usd", jobs=2, progress=True)
    cli = json.loads(run_cli("size", ERLANG_C, *SHORT, "--vary", "fleet.autoscaler.replicas=7..30",
                             "--require", "serving.wait_mean_s<=0.006", "--json", check=True).stdout)
    assert best.point == cli["best"]["point"] == {"fleet.autoscaler.replicas": 10}
    assert best.objective == cli["best"]["objective"]
    assert isinstance(best.table, pd.DataFrame)
    assert list(best.table["fleet.autoscaler.replicas"]) == [p["point"]["fleet.autoscaler.replicas"]
                                                             for p in cli["points"]]
    assert list(best.table["objective"]) == [p["objective"] for p in cli["points"]]
    assert "serving.wait_mean_s<=0.006" in best.table and "serving.latency_p99_s.mean" in best.table
    assert best.summary["serving"]["cost_usd"]["mean"] == best.objective
    assert "best: fleet.autoscaler.replicas=10" in repr(best)


def test_a_dask_local_cluster_gives_the_in_process_answer():
    distributed = require("distributed", "install Debian's python3-distributed")
    sc = short_scenario().set("run.until", "20min").set("run.replications", 2)
    kwargs = dict(vary={"fleet.autoscaler.replicas": range(7, 21)}, require=["serving.wait_mean_s<=0.02"])
    local = cs.size(sc, **kwargs)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        remote = cs.size(sc, executor=client, **kwargs)
    assert remote.point == local.point == {"fleet.autoscaler.replicas": 9}
    drop = ["wall_time_s"]
    pd.testing.assert_frame_equal(local.table.drop(columns=drop), remote.table.drop(columns=drop))


def test_no_point_meets_the_requirements():
    best = cs.size(short_scenario().set("run.until", "15min"), vary={"fleet.autoscaler.replicas": [7, 8]},
                   require=["serving.wait_mean_s<=0.0001"], confirm=1)
    assert best.point is None and best.summary is None
    assert list(best.table["feasible"]) == [False, False]
    proc = run_cli("size", ERLANG_C, "--set", "run.until=15min", "--vary", "fleet.autoscaler.replicas=7,8",
                   "--require", "serving.wait_mean_s<=0.0001", "--json", check=True)
    assert json.loads(proc.stdout)["best"] is None


@pytest.mark.parametrize("args, message", [
    (["--vary", "fleet.autoscaler.replicas=9..4"], "error: fleet.autoscaler.replicas: '9..4' is an empty range"),
    (["--vary", "fleet.autoscaler.replicas"], "error: --vary: 'fleet.autoscaler.replicas' has no '='"),
    (["--vary", "fleet.autoscaler.replicas=1..5000", "--vary", "seed=1,2,3,4,5,6,7,8,9,10", "--max-runs", "100"],
     "error: --vary: the space may need 240 runs (10 combinations x up to 24 points each); the run budget is 100"),
    (["--vary", "fleet.autoscaler.replicas=8,9", "--require", "serving.wait_mean<=0.01"],
     "error: --require: 'serving.wait_mean' names no number of the summary\n  hint: did you mean \"serving.wait_mean_s\"?"),
    (["--vary", "fleet.autoscaler.replicas=8,9", "--require", "serving.wait_mean_s=0.01"],
     "error: --require: 'serving.wait_mean_s=0.01' has no comparison"),
    (["--vary", "fleet.autoscaler.replicas=8,9", "--minimize", "serving.price"],
     "error: --minimize: 'serving.price' names no number of the summary"),
    (["--vary", "fleet.autoscaler.replicaz=8,9"], "error: fleet.autoscaler.replicaz"),
])
def test_cli_size_errors_name_their_path(args, message):
    proc = run_cli("size", ERLANG_C, "--set", "run.until=11min", "--set", "run.replications=1", *args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(message), proc.stderr
    assert proc.stdout == ""


def test_python_size_errors():
    sc = short_scenario().set("run.until", "11min").set("run.replications", 1)
    with pytest.raises(cs.ScenarioError) as e:
        cs.size(sc, vary={}, require=["serving.wait_mean_s<=0.01"])
    assert e.value.path == "vary" and "nothing to vary" in str(e.value)
    with pytest.raises(cs.ScenarioError) as e:
        cs.size(sc, vary={"fleet.autoscaler.replicas": range(4, 4)})
    assert e.value.path == "vary" and "has no values" in str(e.value)
    with pytest.raises(cs.ScenarioError) as e:
        cs.size(sc, vary={"fleet.autoscaler.replicas": range(1, 1000), "seed": list(range(100))}, max_runs=50)
    assert e.value.path == "vary" and "(max_runs)" in str(e.value)
    with pytest.raises(cs.ScenarioError) as e:
        cs.size(sc, vary={"fleet.autoscaler.replicas": [8, 9]}, require=["serving.slo_atainment>=0.9"])
    assert e.value.path == "require" and e.value.hint == 'did you mean "serving.slo_attainment"?'
    with pytest.raises(cs.ScenarioError) as e:
        cs.size(sc, vary={"fleet.autoscaler.replicas": 8})
    assert e.value.path == "fleet.autoscaler.replicas"
