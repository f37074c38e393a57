"""The benchmarks' command lines refuse what they do not understand: a usage line and exit code 2,
before any case runs (`bench_training --help` once ran a case of 0 GPUs)."""
import subprocess

import pytest

from conftest import BUILD


@pytest.mark.parametrize("bench,args", [
    ("bench_training", ["--help"]),
    ("bench_training", ["0"]),
    ("bench_collective", ["1024x"]),
    ("bench_collective", ["-8"]),
    ("bench_jobs", ["--year"]),
    ("bench_serving", ["--full"]),
])
def test_a_bad_argument_prints_the_usage_and_exits_2(bench, args):
    r = subprocess.run([str(BUILD / "bench" / bench), *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    assert r.stderr.startswith("usage: ")
    assert r.stdout == ""
