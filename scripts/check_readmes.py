#!/usr/bin/env python3
"""Checks that the folder READMEs (sim/*/README.md and those of common/, topology/, workloads/, cli/,
python/, bench/, fuzz/ and scripts/) name their folder's files, and name no file that does not exist.

A README names a file in backticks: its name (`flow_model.hpp`), its path
(`sim/network/flow_model.hpp`), its stem (`run_serving`), or a pattern (`parse_*.cpp`). Every
header and script of the folder must be named; a C++ source is covered when it is named or when
its stem is, or extends with `_...`, a named file's stem (`flow_model_solve.cpp` beside
`flow_model.hpp`). Every name with a C++ or script extension a README gives must exist: a bare
name (or pattern) in its folder, a path from the repository's root. Exits 1 naming each file left
out and each name that does not exist.
Usage: scripts/check_readmes.py [--root DIR]
"""
import argparse
import fnmatch
import re
import sys
from pathlib import Path

SOURCE = (".hpp", ".cpp", ".h", ".py", ".sh")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
TOKEN = re.compile(r"[\w*./-]+")
# Folders beside sim/ whose READMEs are held to the same rule.
EXTRA = ("common", "topology", "workloads", "cli", "python", "bench", "fuzz", "scripts")


def named_tokens(text):
    """Every word of every code span of the README (names, paths, patterns)."""
    for span in CODE_SPAN.findall(text):
        for token in TOKEN.findall(span):
            yield token.strip("./") if not token.startswith("../") else token


def is_named(name, tokens):
    stem = name.rsplit(".", 1)[0]
    for t in tokens:
        leaf = t.rsplit("/", 1)[-1]
        if leaf in (name, stem) or ("*" in leaf and fnmatch.fnmatchcase(name, leaf)):
            return True
    return False


def problems_of(readme, root):
    folder = readme.parent
    rel = folder.relative_to(root).as_posix()
    tokens = set(named_tokens(readme.read_text(encoding="utf-8")))
    files = sorted(p.name for p in folder.iterdir() if p.is_file() and p.suffix in SOURCE)
    problems = []
    named = [f for f in files if is_named(f, tokens)]
    named_stems = {f.rsplit(".", 1)[0] for f in named}
    for f in files:
        if f in named:
            continue
        stem = f.rsplit(".", 1)[0]
        if f.endswith(".cpp") and any(stem == s or stem.startswith(s + "_") for s in named_stems):
            continue
        problems.append(f"{rel}/README.md does not name {f}")
    for t in sorted(tokens):
        if not t.endswith(SOURCE):
            continue
        if "/" in t:
            if not (root / t).exists() and not (folder / t).exists():
                problems.append(f"{rel}/README.md names {t}, which does not exist")
        elif not any(fnmatch.fnmatchcase(f, t) for f in files):
            problems.append(f"{rel}/README.md names {t}, which is not in {rel}/")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=Path(__file__).resolve().parent.parent, type=Path)
    args = ap.parse_args()
    root = args.root.resolve()
    readmes = sorted(root.glob("sim/*/README.md")) + [root / f / "README.md" for f in EXTRA if (root / f / "README.md").is_file()]
    problems = [p for readme in readmes for p in problems_of(readme, root)]
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        return 1
    print(f"check_readmes: {len(readmes)} folder READMEs name every file of their folder, and only files that exist")
    return 0


if __name__ == "__main__":
    sys.exit(main())
