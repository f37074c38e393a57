"""Computing a validation replay once for several processes (the test suite's workers and the
reference_results run it starts): set CLUSTERSIM_REPLAY_CACHE to a directory and `cached(name,
cs, compute)` stores what `compute()` returns there, keyed by the identity of everything the replay
reads: the clustersim package it runs (its extension module and Python files), data/, and the
validation scripts. A process asking for an entry another is computing waits on an exclusive lock
(fcntl.flock) and then loads it, so a replay is never computed twice at once; a changed build, data
file or script is a new key, never a stale entry. Unset (the default, e.g. when results/ are
regenerated): computed every time."""
from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import pickle
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
ENVIRONMENT = "CLUSTERSIM_REPLAY_CACHE"

_identities: dict[Path, str] = {}


def _identity(cs) -> str:
    """Hash of the package's files, data/ and the validation scripts (once per process)."""
    package = Path(cs.__file__).resolve().parent
    if package not in _identities:
        digest = hashlib.sha256()
        files = [p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
        files += [p for p in (ROOT / "data").rglob("*") if p.is_file()]
        files += sorted((ROOT / "scripts").glob("validation_*.py")) + [Path(__file__).resolve()]
        for path in sorted(files):
            digest.update(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name).encode())
            digest.update(path.read_bytes())
        _identities[package] = digest.hexdigest()[:20]
    return _identities[package]


def cached(name: str, cs, compute: Callable[[], Any]) -> Any:
    """compute(), or the value a process with the same identity stored under `name`."""
    directory = os.environ.get(ENVIRONMENT)
    if not directory:
        return compute()
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    entry = directory / f"{name}-{_identity(cs)}.pickle"
    with open(directory / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also on an exception
        if entry.exists():
            return pickle.loads(entry.read_bytes())
        value = compute()
        partial = entry.with_suffix(".partial")
        partial.write_bytes(pickle.dumps(value))
        os.replace(partial, entry)  # whole or absent: a killed writer leaves no entry
        return value


def replay(name: str) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """A replay `f(cs)` made `cached(name, cs, ...)`."""
    def wrap(f):
        @functools.wraps(f)
        def replay_once(cs):
            return cached(name, cs, lambda: f(cs))
        return replay_once
    return wrap
