#!/usr/bin/env python3
"""Checks every #include "..." between the project's folders against docs/dependencies.md.

The table there (one row per folder: the folder, then the folders it may include) is the one
place that says who may use whom. An include of a file in the same folder is always allowed;
an include of another folder's header must be listed in the including folder's row. Exits 1
naming every edge the table does not list, and every folder with code that has no row.
Usage: scripts/check_includes.py [--root DIR] [--edges]   (--edges prints the edges found)
"""
import argparse
import re
import subprocess
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
ROW = re.compile(r'^\|\s*`([^`]+)`\s*\|([^|]*)\|')


def read_table(path):
    """{folder: set of folders it may include} from the markdown table's rows."""
    allowed = {}
    for line in path.read_text().splitlines():
        m = ROW.match(line)
        if m:
            allowed[m.group(1).rstrip('/')] = {x.strip('`/ ') for x in re.findall(r'`[^`]+`', m.group(2))}
    return allowed


def folder_of(path, folders):
    """The longest listed folder that holds `path` (a repository-relative path), or None."""
    best = None
    for f in folders:
        if path == f or path.startswith(f + '/'):
            if best is None or len(f) > len(best):
                best = f
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--root', default=Path(__file__).resolve().parent.parent, type=Path)
    ap.add_argument('--edges', action='store_true', help='print every edge between folders found')
    args = ap.parse_args()
    root = args.root
    allowed = read_table(root / 'docs' / 'dependencies.md')
    if not allowed:
        print('check_includes: no table rows in docs/dependencies.md', file=sys.stderr)
        return 1
    files = subprocess.run(['git', 'ls-files', '*.cpp', '*.hpp', '*.h'], cwd=root, capture_output=True,
                           text=True, check=True).stdout.split()
    problems, edges = [], {}
    for f in files:
        src = folder_of(f, allowed)
        if src is None:
            problems.append(f'{f}: its folder has no row in docs/dependencies.md')
            continue
        text = (root / f).read_text(errors='replace')
        for m in INCLUDE.finditer(text):
            inc = m.group(1)
            if not (root / inc).exists():
                continue  # relative to the file's own folder (tests' helpers) or generated
            dst = folder_of(inc, allowed)
            if dst is None or dst == src:
                continue
            line = text.count('\n', 0, m.start()) + 1
            edges.setdefault((src, dst), []).append(f'{f}:{line}')
            if dst not in allowed[src]:
                problems.append(f'{f}:{line}: includes {inc}, but {src} may not use {dst} (docs/dependencies.md)')
    if args.edges:
        for (s, d), where in sorted(edges.items()):
            print(f'{s} -> {d}  ({len(where)} includes, e.g. {where[0]})')
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f'check_includes: {len(problems)} include(s) not allowed', file=sys.stderr)
        return 1
    print(f'check_includes: {sum(len(w) for w in edges.values())} includes across {len(edges)} edges between '
          f'{len(allowed)} folders, all allowed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
