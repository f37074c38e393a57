"""`clustersim sweep FILE --grid PATH=V1,V2,... [-j N] [--out FILE.csv]` (docs/cli.md)."""
import io
import itertools

import pandas as pd
import pytest

import clustersim as cs
from conftest import ROOT, run_cli

PERMUTATION = ROOT / "scenarios" / "fat_tree_permutation.json"
ALLREDUCE = ROOT / "scenarios" / "single_node_allreduce.json"


def read_csv(text):
    # round_trip: read the shortest round-trip decimals back as the exact doubles.
    return pd.read_csv(io.StringIO(text), float_precision="round_trip", keep_default_na=False,
                       na_values=[""])


def sweep(*args, check=True):
    return run_cli("sweep", *args, check=check)


def test_one_row_per_point_first_grid_slowest():
    proc = sweep(PERMUTATION, "--grid", "network.routing=dmodk,ecmp", "--grid", "workload.shift=1,4,8")
    df = read_csv(proc.stdout)
    assert list(df.columns[:2]) == ["network.routing", "workload.shift"]
    assert list(zip(df["network.routing"], df["workload.shift"])) == list(
        itertools.product(["dmodk", "ecmp"], [1, 4, 8]))
    assert (df["traffic.flows"] == 32).all()
    assert (df["seed"] == 7).all()  # every point runs with the scenario's seed
    assert proc.stderr == ""


def test_collective_gives_one_row_per_point_and_size():
    df = read_csv(sweep(ALLREDUCE, "--grid", "workload.algorithm=ring,tree").stdout)
    sizes = [8 * 2**10, 2**20, 64 * 2**20, 2**30, 8 * 2**30]
    assert len(df) == 2 * len(sizes)
    assert list(df["collective.bytes"]) == sizes * 2
    assert list(df["workload.algorithm"]) == ["ring"] * 5 + ["tree"] * 5
    for col in ("collective.time_s", "collective.algbw_GBps", "collective.busbw_GBps"):
        assert (df[col] > 0).all()


def test_output_identical_whatever_jobs():
    grid = ["--grid", "network.routing=dmodk,ecmp", "--grid", "workload.shift=1,2,4,8"]
    one = read_csv(sweep(PERMUTATION, *grid, "-j", "1").stdout)
    two = read_csv(sweep(PERMUTATION, *grid, "-j", "2").stdout)
    assert len(one) == 8
    # wall_time_s measures the machine; every other cell must be the same.
    pd.testing.assert_frame_equal(one.drop(columns="wall_time_s"), two.drop(columns="wall_time_s"))


@pytest.mark.parametrize("scenario, grid", [
    (PERMUTATION, {"network.routing": ["dmodk", "ecmp"], "workload.shift": [1, 4]}),
    (ALLREDUCE, {"workload.algorithm": ["ring", "tree"], "hardware.node.gpus": [4, 8]}),
])
def test_matches_python_sweep(scenario, grid):
    py = cs.sweep(cs.Scenario.load(scenario), grid, jobs=2)
    args = [a for path, values in grid.items()
            for a in ("--grid", f"{path}={','.join(map(str, values))}")]
    cli = read_csv(sweep(scenario, *args, "-j", "2").stdout)
    assert list(cli.columns) == list(py.columns)
    assert len(cli) == len(py)
    for col in py.columns:
        if col == "wall_time_s":
            continue
        if pd.api.types.is_numeric_dtype(py[col]) and not pd.api.types.is_bool_dtype(py[col]):
            assert list(cli[col]) == pytest.approx(list(py[col]), rel=1e-12, nan_ok=True), col
        else:
            assert list(cli[col].astype(str)) == list(py[col].astype(str)), col


def test_out_writes_the_file_and_nothing_else(tmp_path):
    out = tmp_path / "sweep.csv"
    proc = sweep(PERMUTATION, "--grid", "workload.shift=1,4", "--out", out)
    assert proc.stdout == "" and proc.stderr == ""
    assert [p.name for p in tmp_path.iterdir()] == ["sweep.csv"]  # no temp file left
    written = read_csv(out.read_text())
    printed = read_csv(sweep(PERMUTATION, "--grid", "workload.shift=1,4").stdout)
    pd.testing.assert_frame_equal(written.drop(columns="wall_time_s"),
                                  printed.drop(columns="wall_time_s"))


@pytest.mark.parametrize("grid, path", [
    ("topology.nodez=16,32", "topology.nodez"),
    ("topology.nodes=16,banana", "topology.nodes"),    # only the second point is bad
    ("network.routing=dmodk,warp", "network.routing"),
])
def test_bad_grid_exits_2_naming_the_path_and_writes_nothing(tmp_path, grid, path):
    out = tmp_path / "sweep.csv"
    proc = sweep(PERMUTATION, "--grid", grid, "--out", out, check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {path}: ")
    assert proc.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_list_value_with_commas_stays_one_value():
    proc = sweep(ALLREDUCE, "--grid", "workload.sizes=[1e6,2e6],[4e6]")
    df = read_csv(proc.stdout)
    # Two points: the first runs two sizes, the second one.
    assert list(df["collective.bytes"]) == [1e6, 2e6, 4e6]
    assert df["workload.sizes"].nunique() == 2


def test_quoted_string_value_with_comma_stays_one_value():
    # A JSON string may hold a comma; it is one (here invalid) value, named in the error.
    proc = sweep(PERMUTATION, "--grid", 'network.routing="dmodk,ecmp"', check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: network.routing: ")
    assert "dmodk,ecmp" in proc.stderr


@pytest.mark.parametrize("grid, words", [
    ("topology.nodes", "no '='"),
    ("topology.nodes=", "no values"),
    ("topology.nodes=16,,32", "empty value"),
    ("=16", "empty path"),
])
def test_malformed_grid_exits_2(tmp_path, grid, words):
    out = tmp_path / "sweep.csv"
    proc = sweep(PERMUTATION, "--grid", grid, "--out", out, check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: --grid: ") and words in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_grid_is_required_and_jobs_positive():
    assert sweep(PERMUTATION, check=False).returncode == 2
    assert sweep(PERMUTATION, "--grid", "workload.shift=1", "-j", "0", check=False).returncode == 2
