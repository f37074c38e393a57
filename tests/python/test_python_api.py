import json
import threading

import pytest

import clustersim as cs
from conftest import ROOT, run_cli, without_wall_time

FLAGSHIP = ROOT / "scenarios" / "fat_tree_allreduce.json"


def test_summary_identical_to_cli():
    res = cs.run(cs.Scenario.load(FLAGSHIP))
    cli = json.loads(run_cli("run", FLAGSHIP, "--json", check=True).stdout)
    assert without_wall_time(res.summary) == without_wall_time(cli)


def test_set_takes_the_cli_paths():
    sc = cs.Scenario.load(FLAGSHIP)
    sc.set("topology.nodes", 2).set("workload.sizes", [1e6])
    assert sc.get("topology.nodes") == 2
    res = cs.run(sc)
    cli = json.loads(run_cli("run", FLAGSHIP, "--json", "--set", "topology.nodes=2",
                             "--set", "workload.sizes=[1e6]", check=True).stdout)
    assert without_wall_time(res.summary) == without_wall_time(cli)


def test_set_indexes_lists():
    sc = cs.Scenario.load(ROOT / "scenarios" / "custom_two_switches.json")
    sc.set("topology.links.4.bandwidth", "400Gbps")
    assert sc.get("topology.links.4.bandwidth") == "400Gbps"
    fast = cs.run(sc).summary["traffic"]["makespan_s"]
    slow = cs.run(cs.Scenario.load(ROOT / "scenarios" / "custom_two_switches.json")).summary
    assert fast < slow["traffic"]["makespan_s"]


def test_errors_are_scenario_errors_with_the_path():
    sc = cs.Scenario.load(FLAGSHIP).set("topology.nodse", 4)
    with pytest.raises(cs.ScenarioError, match=r"^error: topology.nodse:"):
        cs.run(sc)
    with pytest.raises(cs.ScenarioError):
        cs.Scenario.load(ROOT / "no-such-file.json")
    with pytest.raises(ValueError):  # ScenarioError is a ValueError
        sc.validate()


def test_timeseries_is_a_dataframe():
    res = cs.run(cs.Scenario.load(ROOT / "scenarios" / "incast.json"))
    df = res.timeseries
    assert list(df.columns) == ["series", "time_s", "value"]
    assert len(df) > 0 and set(df["series"]) >= {"active_flows"}


@pytest.mark.parametrize("model", ["flow", "analytical"])
def test_timeseries_sees_the_collectives_in_either_model(model):
    # The new-user path: the flagship on the analytical model with a time series.
    sc = cs.Scenario.load(FLAGSHIP).set("network.model", model).set("run.timeseries_interval", 1e-4)
    df = cs.run(sc).timeseries
    for series in ("active_flows", "active_transfers"):
        values = df[df["series"] == series]["value"]
        assert len(values) > 10 and values.max() > 0, series
    done = df[df["series"] == "transfers_completed"]["value"]
    assert done.is_monotonic_increasing and 3 <= done.max() <= 4  # four sizes, one after another


def test_runs_in_threads_concurrently_and_deterministically():
    sc = cs.Scenario.load(FLAGSHIP).set("workload.sizes", [2**26])
    results = [None] * 4
    def work(i):
        results[i] = cs.run(sc).summary
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    first = without_wall_time(results[0])
    assert all(without_wall_time(r) == first for r in results)


def test_sweep_gives_one_row_per_point_and_size_in_order():
    sc = cs.Scenario.load(FLAGSHIP).set("workload.sizes", [1e6, 1e8])
    df1 = cs.sweep(sc, {"topology.nodes": [2, 4], "network.routing": ["dmodk", "ecmp"]}, jobs=1)
    df2 = cs.sweep(sc, {"topology.nodes": [2, 4], "network.routing": ["dmodk", "ecmp"]}, jobs=2)
    assert len(df1) == 8
    assert list(df1["topology.nodes"]) == [2, 2, 2, 2, 4, 4, 4, 4]
    cols = ["topology.nodes", "network.routing", "collective.bytes", "collective.time_s"]
    assert df1[cols].equals(df2[cols])


def test_replications_give_mean_and_ci():
    sc = cs.Scenario.load(ROOT / "scenarios" / "fat_tree_permutation.json")
    sc.set("network.routing", "ecmp").set("run.replications", 5)
    s = cs.run(sc).summary
    assert s["replications"] == 5
    assert set(s["traffic"]["makespan_s"]) == {"mean", "ci95"}
    assert s["traffic"]["flows"] == 32


def test_flow_table_is_a_dataframe():
    res = cs.run(cs.Scenario.load(ROOT / "scenarios" / "incast.json"))
    df = res.flows
    assert list(df.columns) == ["flow", "src", "dst", "bytes", "start_s", "finish_s", "fct_s", "route"]
    assert len(df) == 15 and (df["dst"] == 0).all()
    assert df["finish_s"].max() == pytest.approx(res.summary["traffic"]["makespan_s"])
    assert cs.run(cs.Scenario.load(FLAGSHIP).set("topology.nodes", 1)).flows is None


def test_override_and_from_json_take_the_cli_forms():
    sc = cs.Scenario.from_json(cs.Scenario.load(FLAGSHIP).to_json())
    sc.override("topology.nodes=2").override("network.routing=ecmp")
    assert sc.get("topology.nodes") == 2 and sc.get("network.routing") == "ecmp"
    with pytest.raises(cs.ScenarioError, match=r"^error:"):
        sc.override("no_equals_sign")


def test_scenario_error_carries_the_json_path_and_survives_pickling():
    import pickle

    sc = cs.Scenario.load(ROOT / "scenarios" / "incast.json").set("topology.nodes", -3)
    with pytest.raises(cs.ScenarioError) as e:
        sc.validate()
    err = e.value
    assert isinstance(err, ValueError)
    assert err.path == "topology.nodes" and "integer" in err.expected
    assert str(err).startswith("error: topology.nodes: ")
    again = pickle.loads(pickle.dumps(err))
    assert (type(again), again.path, again.expected, str(again)) == (cs.ScenarioError, err.path, err.expected, str(err))


def test_core_stub_lists_every_compiled_function():
    import ast
    import clustersim._core as core

    stub = ast.parse((ROOT / "python" / "clustersim" / "_core.pyi").read_text())
    stubbed = {n.name for n in stub.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    compiled = {name for name in dir(core) if not name.startswith("_") and callable(getattr(core, name))}
    assert stubbed == compiled
    assert (cs.__file__ and (ROOT / "python" / "clustersim" / "py.typed").exists())


def test_save_writes_what_the_cli_writes_and_sets_trace_path(tmp_path):
    sc = cs.Scenario.load(ROOT / "scenarios" / "incast.json").set("run.trace", "incast_trace.json")
    res = cs.run(sc)
    assert res.trace_path is None  # nothing written yet
    written = res.save(tmp_path / "py")
    assert res.trace_path == str(tmp_path / "py" / "incast_trace.json")
    assert json.loads((tmp_path / "py" / "incast_trace.json").read_text()) == res.trace
    proc = run_cli("run", ROOT / "scenarios" / "incast.json", "--set", "run.trace=incast_trace.json",
                   "--out", tmp_path / "cli", check=True)
    assert proc.returncode == 0
    cli_files = sorted(p.name for p in (tmp_path / "cli").iterdir())
    assert sorted(written) == cli_files
    for name in cli_files:
        if name.endswith(".csv"):
            assert (tmp_path / "py" / name).read_text() == (tmp_path / "cli" / name).read_text()
    summary = json.loads((tmp_path / "py" / "summary.json").read_text())
    assert without_wall_time(summary) == without_wall_time(json.loads((tmp_path / "cli" / "summary.json").read_text()))
    assert not list((tmp_path / "py").glob("*.tmp"))


def test_serving_and_fleet_tables():
    serving = cs.run(ROOT / "scenarios" / "serving_mmc_erlang_c.json")
    assert "replicas_ready" in serving.serving.columns
    run = cs.run(ROOT / "scenarios" / "training_run_by_hand.json")
    states = run.fleet
    assert states["duration_s"].sum() == pytest.approx(run.summary["sim_time_s"])
