"""`make bench`'s comparison (scripts/bench_compare.py): the figures the benchmarks print are
read, set beside the baseline's as ratios, and one worse by more than 20% is flagged whichever
way it improves; --save writes a baseline the next comparison reads; the shipped baseline names
every figure the benchmarks `make bench` runs print (checked against the programs' sources)."""
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "bench_compare.py"

LOG = """some table the program prints
figure: ring/gpus_1024/cpu = 1.3 s (lower is better)
figure: engine/pending_1000 = 8e6 events/s (higher is better)
figure: startup/validate = 0.0060 s (lower is better)
"""


def compare(tmp_path, log, baseline):
    (tmp_path / "bench.log").write_text(log)
    (tmp_path / "base.json").write_text(json.dumps(baseline))
    r = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "bench.log"), "--baseline",
                        str(tmp_path / "base.json")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_ratios_and_the_twenty_percent_flag_follow_each_figures_direction(tmp_path):
    base = {"commit": "abc", "figures": {
        "ring/gpus_1024/cpu": {"value": 1.0, "unit": "s", "better": "lower"},       # 30% slower
        "engine/pending_1000": {"value": 1e7, "unit": "events/s", "better": "higher"},  # 25% worse
        "startup/validate": {"value": 0.0066, "unit": "s", "better": "lower"},       # faster
        "gone/figure": {"value": 1.0, "unit": "s", "better": "lower"}}}
    out = compare(tmp_path, LOG, base)
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert "1.30x" in lines["ring/gpus_1024/cpu"] and "worse by 30%" in lines["ring/gpus_1024/cpu"]
    assert "0.80x" in lines["engine/pending_1000"] and "worse by 25%" in lines["engine/pending_1000"]
    assert "0.91x" in lines["startup/validate"] and "worse" not in lines["startup/validate"]
    assert "not measured this time: gone/figure" in out
    assert "2 figure(s) worse by more than 20%" in out


def test_save_then_compare_gives_ratio_one(tmp_path):
    (tmp_path / "bench.log").write_text(LOG)
    saved = tmp_path / "baseline.json"
    r = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "bench.log"), "--save", str(saved),
                        "--note", "test"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    data = json.loads(saved.read_text())
    assert data["measured"] == "test" and len(data["figures"]) == 3
    out = compare(tmp_path, LOG, data)
    assert out.count("1.00x") == 3 and "worse" not in out


def test_an_unreadable_log_is_an_input_error(tmp_path):
    r = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "missing.log")], capture_output=True, text=True)
    assert r.returncode == 2 and "missing.log" in r.stderr


def test_the_shipped_baseline_covers_the_benchmarks_make_bench_runs():
    baseline = json.loads((ROOT / "bench" / "baseline.json").read_text())
    recipe = re.search(r"^bench:.*?\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), flags=re.M).group(1)
    programs = set(re.findall(r"/bench/bench_(\w+)", recipe))
    prefixes = {name.split("/")[0] for name in baseline["figures"]}
    # Each program's figures are named after it (bench_engine_hold -> engine_hold/...).
    assert programs == prefixes, (programs, prefixes)
    for name, fig in baseline["figures"].items():
        assert fig["value"] > 0 and fig["better"] in ("lower", "higher"), name
