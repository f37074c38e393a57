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


@pytest.mark.parametrize("args,says", [
    (["--only"], "usage: "),                    # no case named
    (["--only", "llm_week"], "--only takes"),   # a case it does not have
])
def test_bench_serving_only_names_one_of_its_cases(args, says):
    r = subprocess.run([str(BUILD / "bench" / "bench_serving"), *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    assert says in r.stderr
    assert "llm_70b_tp4" in r.stderr  # the cases it has, named
    assert r.stdout == ""
