"""Bad input through the CLI: exit 2, `error: <json path>: ...` on stderr, no output file,
never a crash or hang. The cases and their expected paths are tests/malformed/expected.json."""
import json
import os

import pytest

from conftest import ROOT, run_cli

MALFORMED = ROOT / "tests" / "malformed"
EXPECTED = json.loads((MALFORMED / "expected.json").read_text())


def assert_input_error(proc, path, out_dir, contains=""):
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    prefix = f"error: {path}:" if path else "error:"
    assert proc.stderr.startswith(prefix), proc.stderr
    assert contains in proc.stderr, proc.stderr
    assert not (out_dir / "summary.json").exists()
    assert proc.stdout == ""


def test_suite_is_large_enough():
    assert len(EXPECTED) >= 30


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_malformed_scenario(name, tmp_path):
    case = EXPECTED[name]
    out = tmp_path / "out"
    proc = run_cli("run", MALFORMED / name, "--out", out, "--json")
    assert_input_error(proc, case["path"], out, case.get("contains", ""))
    assert run_cli("validate", MALFORMED / name).returncode == 2


def test_directory_instead_of_file(tmp_path):
    proc = run_cli("run", MALFORMED, "--out", tmp_path / "o")
    assert_input_error(proc, "", tmp_path / "o")


def test_missing_file(tmp_path):
    proc = run_cli("run", tmp_path / "nope.json", "--out", tmp_path / "o")
    assert_input_error(proc, "", tmp_path / "o")


def test_deep_nesting_does_not_overflow(tmp_path):
    f = tmp_path / "deep.json"
    f.write_text('{"a":' + "[" * 1_000_000 + "]" * 1_000_000 + "}")
    proc = run_cli("run", f, "--out", tmp_path / "o")
    assert_input_error(proc, "", tmp_path / "o")


def test_unreadable_file(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads anything")
    f = tmp_path / "locked.json"
    f.write_text("{}")
    f.chmod(0)
    assert_input_error(run_cli("run", f, "--out", tmp_path / "o"), "", tmp_path / "o")
