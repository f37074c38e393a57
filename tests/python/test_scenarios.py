"""Every scenario file in scenarios/ runs, gives the contract's keys, and is deterministic."""
import json

import pytest

from conftest import run_cli, scenario_files, without_wall_time

BLOCK_KEYS = {
    "traffic": {"flows", "makespan_s", "mean_fct_s", "p99_fct_s"},
    "collective": {"op", "algorithm", "ranks", "results"},
}


@pytest.mark.parametrize("path", scenario_files(), ids=lambda p: p.name)
def test_scenario_runs_and_is_deterministic(path):
    first = json.loads(run_cli("run", path, "--json", check=True).stdout)
    second = json.loads(run_cli("run", path, "--json", check=True).stdout)
    assert without_wall_time(first) == without_wall_time(second)
    blocks = [k for k in BLOCK_KEYS if k in first]
    assert len(blocks) == 1
    assert BLOCK_KEYS[blocks[0]] <= set(first[blocks[0]])
    assert first["sim_time_s"] > 0
    # Both models run on the engine (the analytical one has events at stage boundaries only).
    assert first["events"] > 0


@pytest.mark.parametrize("path", scenario_files(), ids=lambda p: p.name)
def test_scenario_validates(path):
    assert run_cli("validate", path).returncode == 0
