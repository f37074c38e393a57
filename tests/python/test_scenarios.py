"""Every scenario file in scenarios/ runs, gives the contract's keys, is deterministic, gives
its checked-in numbers (tests/golden/, scripts/golden.py), and shows no inf or nan."""
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


# Each scenario runs twice. The first prints the summary JSON (--json): the contract's keys, and
# every number against the checked-in golden summary. The second prints the text report and
# writes the summary with the other output files (--out): the same summary (deterministic, and
# the files asked for leave the numbers alone), and no inf or nan in the text.
@pytest.mark.parametrize("path", scenario_files(), ids=lambda p: p.name)
def test_scenario_is_deterministic_and_gives_its_golden_numbers(path, tmp_path):
    first = json.loads(run_cli("run", path, "--json", check=True).stdout)
    blocks = [k for k in BLOCK_KEYS if k in first]
    assert len(blocks) == 1
    assert BLOCK_KEYS[blocks[0]] <= set(first[blocks[0]])
    mean = lambda v: v["mean"] if isinstance(v, dict) else v  # replicated numbers: {mean, ci95}
    assert mean(first["sim_time_s"]) > 0
    # Both models run on the engine (the analytical one has events at stage boundaries only).
    assert mean(first["events"]) > 0
    expected_file = ROOT / "tests" / "golden" / f"{path.stem}.json"
    assert expected_file.exists(), f"no golden summary for {path.name}: run make golden"
    moved = golden.differences(json.loads(expected_file.read_text()), golden.strip(first))
    assert not moved, (f"{path.name} moved (if meant, run make golden and say why in the commit):\n  " +
                       "\n  ".join(moved[:30]))

    text = run_cli("run", path, "--out", tmp_path / "out", check=True).stdout
    second = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert without_wall_time(first) == without_wall_time(second)
    assert "inf" not in text.replace("infer", "") and "nan" not in text.lower(), text


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
