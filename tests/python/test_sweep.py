"""clustersim.sweep: grids and samples, any executor (threads, processes, a Dask cluster),
failed points as rows, the on-disk cache; rows identical whatever runs them."""
import math
import sys
from concurrent.futures import ProcessPoolExecutor

import pandas as pd
import pytest

from conftest import ROOT, require

import clustersim as cs

sweep_module = sys.modules["clustersim.sweep"]  # the attribute clustersim.sweep is the function

PERMUTATION = ROOT / "scenarios" / "fat_tree_permutation.json"
GRID = {"network.routing": ["dmodk", "ecmp"], "workload.shift": [1, 4]}


def test_a_grid_larger_than_a_million_points_is_refused_before_building_any():
    with pytest.raises(cs.ScenarioError, match="more than 1000000 points") as e:
        cs.sweep(PERMUTATION, {f"workload.x{i}": list(range(1000)) for i in range(3)})
    assert e.value.path == "grid"
    with pytest.raises(cs.ScenarioError, match="no values"):
        cs.sweep(PERMUTATION, {"workload.shift": []})


def test_grid_points_in_product_order():
    assert cs.grid_points({"a": [1, 2], "b": ["x", "y"]}) == [
        {"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 2, "b": "x"}, {"a": 2, "b": "y"}]


def test_latin_hypercube_puts_one_point_in_each_stratum_of_every_path():
    n = 16
    ranges = {"a": (0.0, 1.0), "b": (10.0, 20.0), "c": (1e6, 1e9, "log")}
    points = cs.latin_hypercube(ranges, n, seed=3)
    assert len(points) == n
    for path, (low, high, *log) in ranges.items():
        if log:
            u = [(math.log(p[path]) - math.log(low)) / (math.log(high) - math.log(low)) for p in points]
        else:
            u = [(p[path] - low) / (high - low) for p in points]
        assert sorted(int(x * n) for x in u) == list(range(n)), path
    assert points == cs.latin_hypercube(ranges, n, seed=3)
    assert points != cs.latin_hypercube(ranges, n, seed=4)


def test_samples_draw_integers_and_choices_within_range():
    points = cs.random_samples({"topology.nodes": (2, 8), "network.routing": ["dmodk", "ecmp"]}, 200, seed=1)
    nodes = [p["topology.nodes"] for p in points]
    assert all(isinstance(x, int) and 2 <= x <= 8 for x in nodes) and set(nodes) == set(range(2, 9))
    assert {p["network.routing"] for p in points} == {"dmodk", "ecmp"}
    with pytest.raises(ValueError, match="low <= high"):
        cs.random_samples({"a": (2, 1)}, 3)


def test_a_sample_sweeps_like_a_grid():
    points = cs.latin_hypercube({"workload.shift": (1, 7)}, 4, seed=0)
    df = cs.sweep(PERMUTATION, points, jobs=2)
    assert list(df["workload.shift"]) == [p["workload.shift"] for p in points]
    assert (df["traffic.makespan_s"] > 0).all()


def test_a_failed_point_is_a_row_and_the_others_complete():
    df = cs.sweep(PERMUTATION, {"workload.shift": [1, 100000, 4]}, jobs=2)
    assert list(df["workload.shift"]) == [1, 100000, 4]
    assert df["error"].isna().tolist() == [True, False, True]
    assert df.loc[1, "error_path"] == "workload.shift"
    assert df.loc[[0, 2], "traffic.makespan_s"].notna().all()
    with pytest.raises(cs.ScenarioError) as e:
        cs.sweep(PERMUTATION, {"workload.shift": [1, 100000]}, errors="raise")
    assert e.value.path == "workload.shift"


def test_rows_are_the_same_for_threads_and_processes():
    threads = cs.sweep(PERMUTATION, GRID, jobs=2).drop(columns=["wall_time_s"])
    with ProcessPoolExecutor(max_workers=2) as pool:
        processes = cs.sweep(PERMUTATION, GRID, executor=pool).drop(columns=["wall_time_s"])
    pd.testing.assert_frame_equal(threads, processes)


def test_a_dask_local_cluster_gives_the_in_process_rows():
    distributed = require("distributed", "install Debian's python3-distributed")
    local = cs.sweep(PERMUTATION, GRID, jobs=1).drop(columns=["wall_time_s"])
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        remote = cs.sweep(PERMUTATION, GRID, executor=client, progress=True).drop(columns=["wall_time_s"])
    pd.testing.assert_frame_equal(local, remote)


def test_the_cache_answers_a_rerun_without_simulating(tmp_path, monkeypatch):
    first = cs.sweep(PERMUTATION, GRID, jobs=2, cache=tmp_path)
    assert len(list(tmp_path.glob("*.json"))) == 4

    def must_not_run(doc_json, cancel=None, draw_ahead=True):
        raise AssertionError("a cached point was simulated again")

    monkeypatch.setattr(sweep_module, "_run_point", must_not_run)
    again = cs.sweep(PERMUTATION, GRID, jobs=2, cache=tmp_path)
    pd.testing.assert_frame_equal(first, again)
    # A changed point misses the cache.
    with pytest.raises(AssertionError, match="simulated again"):
        cs.sweep(PERMUTATION, {"workload.shift": [2]}, cache=tmp_path)


def test_points_running_at_once_draw_their_job_streams_in_place(monkeypatch):
    # A jobs run may draw its job stream ahead on a thread of its own; a sweep's points running
    # at once are its parallel work, so they do not (each would start one): only a sweep running
    # one point at a time lets them.
    seen = []
    real = sweep_module._core.run

    def recording(doc_json, cancel=None, draw_ahead=True):
        seen.append(draw_ahead)
        return real(doc_json, cancel, draw_ahead)

    monkeypatch.setattr(sweep_module._core, "run", recording)
    cs.sweep(PERMUTATION, GRID, jobs=2)
    assert len(seen) == 4 and not any(seen)
    seen.clear()
    cs.sweep(PERMUTATION, GRID, jobs=1)
    assert len(seen) == 4 and all(seen)
