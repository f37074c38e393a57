#!/usr/bin/python3
"""The expected summary of every scenario in scenarios/: tests/golden/<name>.json.

    /usr/bin/python3 scripts/golden.py [--build DIR]           # regenerate every golden file
    /usr/bin/python3 scripts/golden.py --build DIR NAME...     # only these scenarios (file stems)
    make golden                                                 # the same, after a build

A change meant to move numbers regenerates them and says in its commit which moved and why;
tests/python/test_scenarios.py compares every number of every scenario against these files
(relative tolerance 1e-9, wall time aside), so numbers never drift silently.
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
REL_TOL = 1e-9
ABS_TOL = 1e-15
# Numbers that measure the machine, not the model.
VOLATILE = {"wall_time_s"}


def scenario_files():
    return sorted(p for p in (ROOT / "scenarios").glob("*.json") if p.name != "schema.json")


def strip(value):
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def summary_of(cli, path):
    proc = subprocess.run([str(cli), "run", str(path), "--json"], capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"{path.name}: exit {proc.returncode}\n{proc.stderr}")
    return strip(json.loads(proc.stdout))


def differences(expected, actual, where=""):
    """Every place where actual differs from expected: numbers beyond the tolerance, other
    values unequal, keys missing or added."""
    out = []
    if isinstance(expected, dict) and isinstance(actual, dict):
        for k in expected.keys() | actual.keys():
            p = f"{where}.{k}" if where else k
            if k not in actual:
                out.append(f"{p}: missing (expected {json.dumps(expected[k])[:80]})")
            elif k not in expected:
                out.append(f"{p}: new key ({json.dumps(actual[k])[:80]})")
            else:
                out += differences(expected[k], actual[k], p)
    elif isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            out.append(f"{where}: {len(actual)} items, expected {len(expected)}")
        for i, (e, a) in enumerate(zip(expected, actual)):
            out += differences(e, a, f"{where}.{i}")
    elif isinstance(expected, (int, float)) and isinstance(actual, (int, float)) \
            and not isinstance(expected, bool) and not isinstance(actual, bool):
        if abs(actual - expected) > max(REL_TOL * max(abs(expected), abs(actual)), ABS_TOL):
            out.append(f"{where}: {actual!r}, expected {expected!r}")
    elif expected != actual:
        out.append(f"{where}: {json.dumps(actual)[:80]}, expected {json.dumps(expected)[:80]}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=str(ROOT / "build"), help="build directory holding clustersim")
    ap.add_argument("names", nargs="*", help="scenario file stems (default: all)")
    args = ap.parse_args()
    cli = Path(args.build) / "clustersim"
    GOLDEN.mkdir(exist_ok=True)
    for path in scenario_files():
        if args.names and path.stem not in args.names:
            continue
        out = GOLDEN / f"{path.stem}.json"
        new = summary_of(cli, path)
        old = json.loads(out.read_text()) if out.exists() else None
        out.write_text(json.dumps(new, indent=1, sort_keys=True) + "\n")
        moved = differences(old, new) if old is not None else ["(new)"]
        print(f"{path.stem}: {'unchanged' if not moved else f'{len(moved)} changes'}")
        for line in moved[:20]:
            print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
