"""Every scenario file in scenarios/ runs, gives the contract's keys, is deterministic, and
gives its checked-in numbers (tests/golden/, scripts/golden.py)."""
import json
import subprocess
import sys

import pytest

from conftest import ROOT, run_cli, scenario_files, without_wall_time

sys.path.insert(0, str(ROOT / "scripts"))
import golden  # noqa: E402

BLOCK_KEYS = {
    "traffic": {"flows", "makespan_s", "mean_fct_s", "p99_fct_s"},
    "collective": {"op", "algorithm", "ranks", "results"},
    "training": {"step_time_s", "tokens_per_s", "tflops_per_gpu", "model_tflops_per_gpu", "mfu", "bubble_fraction",
                 "compute_s", "exposed_comm_s", "memory_per_gpu_bytes", "fits"},
    "training_run": {"wall_time_s", "goodput", "interruptions", "failures", "checkpoints", "lost_work_s",
                     "restore_time_s", "cost_usd"},
    "jobs": {"submitted", "completed", "wait_mean_s", "wait_p95_s", "utilization", "preemptions",
             "lost_gpu_hours", "cost_usd", "queues"},
    "serving": {"requests", "completed", "dropped", "latency_mean_s", "latency_p50_s", "latency_p95_s",
                "latency_p99_s", "wait_mean_s", "slo_attainment", "replicas_mean", "replicas_max", "cost_usd"},
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
def test_scenario_gives_its_golden_numbers(path):
    expected_file = ROOT / "tests" / "golden" / f"{path.stem}.json"
    assert expected_file.exists(), f"no golden summary for {path.name}: run make golden"
    actual = golden.strip(json.loads(run_cli("run", path, "--json", check=True).stdout))
    moved = golden.differences(json.loads(expected_file.read_text()), actual)
    assert not moved, (f"{path.name} moved (if meant, run make golden and say why in the commit):\n  " +
                       "\n  ".join(moved[:30]))


def test_every_golden_file_has_its_scenario():
    stems = {p.stem for p in scenario_files()}
    assert {p.stem for p in (ROOT / "tests" / "golden").glob("*.json")} <= stems


def test_the_scenario_reference_is_up_to_date():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "schema_doc.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("path", scenario_files(), ids=lambda p: p.name)
def test_scenario_validates(path):
    assert run_cli("validate", path).returncode == 0
