#!/usr/bin/python3
"""Compare the benchmarks' headline figures with the previous release's (bench/baseline.json).

The programs in bench/ print each headline number as a line
    figure: <name> = <value> <unit> (<lower|higher> is better)
`make bench` collects their output in build/bench.log and runs this script on it: one row per
figure with the baseline's value, today's, and the ratio today / baseline, flagging a figure
that got worse by more than 20% (the threshold at which a commit must say so). Benchmarks never
fail: the exit status is 0 unless the log cannot be read. `--save` writes today's figures as the
new baseline (at a release), with the commit they were measured on.
"""
import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIGURE = re.compile(r"^figure: (\S+) = (\S+) (\S+) \((lower|higher) is better\)$")
WORSE = 0.20  # a figure this much worse is flagged


def read_figures(text: str) -> dict:
    figures = {}
    for line in text.splitlines():
        m = FIGURE.match(line.strip())
        if m:
            name, value, unit, better = m.groups()
            figures[name] = {"value": float(value), "unit": unit, "better": better}
    return figures


def change(now: dict, base: dict) -> tuple:
    """(ratio now/base, how much worse as a share: > 0 worse, < 0 better)."""
    if base["value"] == 0 or now["value"] == 0:
        return float("nan"), 0.0
    ratio = now["value"] / base["value"]
    worse = ratio - 1 if now["better"] == "lower" else 1 / ratio - 1
    return ratio, worse


def table(figures: dict, baseline: dict) -> str:
    base = baseline.get("figures", {})
    rows = [f"{'figure':<58} {'baseline':>12} {'now':>12} {'unit':>9} {'now/base':>9}"]
    flagged = []
    for name, now in figures.items():
        if name not in base:
            rows.append(f"{name:<58} {'-':>12} {now['value']:>12.4g} {now['unit']:>9} {'new':>9}")
            continue
        ratio, worse = change(now, base[name])
        mark = f"  worse by {100 * worse:.0f}%" if worse > WORSE else ""
        if mark:
            flagged.append(name)
        rows.append(f"{name:<58} {base[name]['value']:>12.4g} {now['value']:>12.4g} {now['unit']:>9} "
                    f"{ratio:>8.2f}x{mark}")
    gone = sorted(set(base) - set(figures))
    if gone:
        rows.append(f"(not measured this time: {', '.join(gone)})")
    where = baseline.get("commit", "?")[:10]
    rows.append(f"baseline: commit {where}, {baseline.get('measured', '')}")
    if flagged:
        rows.append(f"{len(flagged)} figure(s) worse by more than {100 * WORSE:.0f}%: say so in the commit "
                    "(the machine may have been busy: re-run before believing it)")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", help="the benchmarks' output (build/bench.log)")
    ap.add_argument("--baseline", default=str(ROOT / "bench" / "baseline.json"))
    ap.add_argument("--save", metavar="FILE", help="write today's figures as the baseline to FILE")
    ap.add_argument("--note", default="", help="with --save: how the machine was while measuring")
    args = ap.parse_args(argv)
    try:
        figures = read_figures(Path(args.log).read_text())
    except OSError as e:
        print(f"error: {args.log}: {e.strerror}", file=sys.stderr)
        return 2
    if args.save:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        Path(args.save).write_text(json.dumps({"commit": commit, "measured": args.note, "figures": figures},
                                              indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(figures)} figures to {args.save}")
        return 0
    path = Path(args.baseline)
    baseline = json.loads(path.read_text()) if path.exists() else {}
    print(table(figures, baseline))
    return 0


if __name__ == "__main__":
    sys.exit(main())
