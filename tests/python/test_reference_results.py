"""scripts/reference_results.py regenerates every report (markdown and plots) from the scenario
files; the checked-in results/ list the same reports. One test per report, so that the test
workers share them; the validation report runs beside test_published_training.py (the same
xdist group) and reuses its training replay (scripts/replay_cache.py, conftest.py)."""
import os
import re
import subprocess

import pytest

from conftest import BUILD, ROOT

SHIPPED = sorted(p.stem for p in (ROOT / "results").glob("*.md") if p.name != "README.md")


def reference_results(out, *args, timeout=600):
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"), MPLBACKEND="Agg")
    return subprocess.run(["/usr/bin/python3", str(ROOT / "scripts" / "reference_results.py"), "--out", str(out),
                           *args], capture_output=True, text=True, env=env, timeout=timeout)


def images(markdown):
    """The files a report's markdown shows (its `![...](file)` lines)."""
    return [line.split("](")[1].rstrip(")") for line in markdown.splitlines() if line.startswith("![") and "](" in line]


def test_the_script_makes_the_shipped_reports():
    # Its usage lists the reports it makes by default: every one shipped in results/, no other.
    proc = reference_results("unused", "--help", timeout=120)
    assert proc.returncode == 0, proc.stderr
    listed = re.search(r"default all: ([^)]*)\)", " ".join(proc.stdout.split())).group(1)
    assert sorted(listed.split(", ")) == SHIPPED
    # results/ holds their markdown, the plots they show and the index, nothing else.
    shown = [image for name in SHIPPED for image in images((ROOT / "results" / f"{name}.md").read_text())]
    expected = ["README.md", *(f"{name}.md" for name in SHIPPED), *shown]
    assert sorted(p.name for p in (ROOT / "results").iterdir()) == sorted(expected)


def _nccl_tests(text):
    # The numbers are computed: the nccl-tests report quotes the ring's 8 GiB busbw of this build.
    assert "| ring | ring | simple |" in text


def _accelerator_costs(text):
    # A market an accelerator is not sold in is listed as refused, not priced: trn2 has no spot.
    assert "| Trainium2 | Llama 3 8B | spot |" not in text
    assert "aws.trn2.48xlarge is not sold in the spot market" in text


CONTENT_CHECKS = {"nccl_tests": _nccl_tests, "accelerator_costs": _accelerator_costs}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xdist_group("training_replay"))
                                  if n == "validation" else n for n in SHIPPED])
def test_report_regenerates(tmp_path, name):
    proc = reference_results(tmp_path, name)
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / f"{name}.md").read_text()
    # The report's files, as shipped: its markdown and the plots it shows; each plot it shows exists.
    shipped = images((ROOT / "results" / f"{name}.md").read_text())
    made = sorted(p.name for p in tmp_path.iterdir() if p.name != "README.md")
    assert made == sorted([f"{name}.md", *shipped])
    for image in images(text):
        assert (tmp_path / image).exists(), image
    assert f"[{name}]({name}.md)" in (tmp_path / "README.md").read_text()
    CONTENT_CHECKS.get(name, lambda text: None)(text)


def test_unknown_report_is_a_usage_error(tmp_path):
    proc = reference_results(tmp_path, "no_such_report", timeout=60)
    assert proc.returncode == 2 and "unknown report" in proc.stderr
