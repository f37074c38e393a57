"""Every scenario file in scenarios/ runs, gives the contract's keys, and is deterministic."""
import json

import pytest

from conftest import run_cli, scenario_files, without_wall_time

BLOCK_KEYS = {
    "traffic": {"flows", "makespan_s", "mean_fct_s", "p99_fct_s"},
    "collective": {"op", "algorithm", "ranks", "results"},
    "training_run": {"wall_time_s", "goodput", "interruptions", "failures", "checkpoints", "lost_work_s",
                     "restore_time_s", "cost_usd"},
}


@pytest.mark.parametrize("path", scenario_files(), ids=lambda p: p.name)
def test_scenario_runs_and_is_deterministic(path):
    first = json.loads(run_cli("run", path, "--json", check=True).stdout)
    second = json.loads(run_cli("run", path, "--json", check=True).stdout)
    assert without_wall_time(first) == without_wall_time(second)
    blocks = [k for k in BLOCK_KEYS if k in first]
    assert len(blocks) == 1
    assert BLOCK_KEYS[blocks[0]] <= set(first[blocks[0]])
    mean = lambda v: v["mean"] if isinstance(v, dict) else v  # replicated numbers: {mean, ci95}
    assert mean(first["sim_time_s"]) > 0
    # Both models run on the engine (the analytical one has events at stage boundaries only).
    assert mean(first["events"]) > 0


@pytest.mark.parametrize("path", scenario_files(), ids=lambda p: p.name)
def test_scenario_validates(path):
    assert run_cli("validate", path).returncode == 0
