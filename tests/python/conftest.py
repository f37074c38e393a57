import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CLUSTERSIM_BUILD", ROOT / "build"))
CLI = BUILD / "clustersim"
sys.path.insert(0, str(BUILD / "python"))
# The validation replays computed once for the session's workers and the processes they start
# (scripts/replay_cache.py: keyed by the build's, data/'s and the scripts' contents).
os.environ.setdefault("CLUSTERSIM_REPLAY_CACHE", str(BUILD / "replay-cache"))


def require(module, why):
    """Imports `module` for a test. `make test` (and so CI) installs every peer the tests use
    and sets CLUSTERSIM_REQUIRE_PEERS=1: there a missing one fails the test instead of
    skipping it, so a cross-check cannot silently stop running. Elsewhere it is skipped."""
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        message = f"{module} not importable ({exc}); {why}"
        if os.environ.get("CLUSTERSIM_REQUIRE_PEERS") == "1":
            pytest.fail(message, pytrace=False)
        pytest.skip(message, allow_module_level=True)


def run_cli(*args, check=False, cwd=None):
    """Run the clustersim CLI; returns CompletedProcess with text stdout/stderr."""
    proc = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True,
                          timeout=600, cwd=cwd)
    if check and proc.returncode != 0:
        raise AssertionError(f"clustersim {' '.join(map(str, args))} exited {proc.returncode}:\n"
                             f"{proc.stderr}")
    return proc


def without_wall_time(summary):
    """The summary minus the one number that measures the machine, not the model: the top
    level's wall_time_s (a training_run's own wall_time_s is simulated, and stays)."""
    return {k: v for k, v in summary.items() if k != "wall_time_s"}


@pytest.fixture
def cli():
    return run_cli


def scenario_files():
    return sorted(p for p in (ROOT / "scenarios").glob("*.json") if p.name != "schema.json")
