"""Parameter sweeps: one simulation per grid point, in parallel threads."""
from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor

from . import _core
from .result import run
from .scenario import Scenario


def schema() -> str:
    """The JSON Schema of scenario files."""
    return _core.schema()


def _flatten(prefix: str, value, out: dict) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else k, v, out)
    elif not isinstance(value, list):
        out[prefix] = value


def _rows(point: dict, summary: dict) -> list[dict]:
    base = dict(point)
    _flatten("", summary, base)
    # A collective reports one result per size: one row each.
    results = summary.get("collective", {}).get("results")
    if not results:
        return [base]
    rows = []
    for r in results:
        row = dict(base)
        for k, v in r.items():
            row[f"collective.{k}"] = v
        rows.append(row)
    return rows


def sweep(scenario: Scenario, grid: dict, jobs: int = 1):
    """Run `scenario` at every point of the Cartesian product of `grid` ({path: [values]}).
    Returns a pandas DataFrame, one row per point (per size for collectives), in grid order
    whatever `jobs` is; the grid paths are columns."""
    import pandas as pd

    paths = list(grid)
    points = [dict(zip(paths, values)) for values in itertools.product(*(grid[p] for p in paths))]
    scenarios = []
    for point in points:
        sc = scenario.copy()
        for path, value in point.items():
            sc.set(path, value)
        scenarios.append(sc)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(run, scenarios))
    rows = [row for point, res in zip(points, results) for row in _rows(point, res.summary)]
    return pd.DataFrame(rows)
