"""scripts/reference_results.py regenerates every report (markdown and plots) from the scenario
files; the checked-in results/ list the same reports."""
import os
import subprocess

from conftest import BUILD, ROOT


def test_every_report_regenerates(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"), MPLBACKEND="Agg")
    proc = subprocess.run(["/usr/bin/python3", str(ROOT / "scripts" / "reference_results.py"), "--out", str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    made = sorted(p.name for p in tmp_path.iterdir())
    shipped = sorted(p.name for p in (ROOT / "results").iterdir())
    assert made == shipped
    for md in tmp_path.glob("*.md"):
        text = md.read_text()
        for line in text.splitlines():
            if line.startswith("![") and "](" in line:
                assert (tmp_path / line.split("](")[1].rstrip(")")).exists(), line
    # The numbers are computed: the nccl-tests report quotes the ring's 8 GiB busbw of this build.
    assert "| ring | ring | simple |" in (tmp_path / "nccl_tests.md").read_text()
    # A market an accelerator is not sold in is listed as refused, not priced: trn2 has no spot.
    costs = (tmp_path / "accelerator_costs.md").read_text()
    assert "| Trainium2 | Llama 3 8B | spot |" not in costs
    assert "aws.trn2.48xlarge is not sold in the spot market" in costs


def test_unknown_report_is_a_usage_error(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"))
    proc = subprocess.run(["/usr/bin/python3", str(ROOT / "scripts" / "reference_results.py"), "--out", str(tmp_path),
                           "no_such_report"], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2 and "unknown report" in proc.stderr
