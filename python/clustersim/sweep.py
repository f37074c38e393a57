"""Parameter sweeps: one simulation per grid point, in parallel threads."""
from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor

from . import _core
from .result import run
from .scenario import Scenario, scenario_error


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

    if not isinstance(grid, dict):
        raise scenario_error("grid", f"expected a dict {{path: [values]}}; got {type(grid).__name__}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs: expected a whole number of threads >= 1; got {jobs!r}")
    for path, values in grid.items():
        if not isinstance(path, str):
            raise scenario_error("grid", f"a path is a dot-separated string; got {path!r}")
        if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
            raise scenario_error(path, f"a grid axis is a list of values; got {type(values).__name__} {values!r}"
                                       f" (write [{values!r}] for one value)")
    # The CLI's checks: a path once, none inside another, at most its number of points.
    _core.check_grid([(path, len(values)) for path, values in grid.items()])
    paths = list(grid)
    points = [dict(zip(paths, values)) for values in itertools.product(*(grid[p] for p in paths))]
    scenarios = []
    for point in points:
        sc = scenario.copy()
        for path, value in point.items():
            sc.set(path, value)
        scenarios.append(sc)
    # Every point is checked before any runs, as `clustersim sweep` does: a bad last point
    # must not cost the sweep's hours.
    for sc in scenarios:
        sc.validate()
    # One token for the sweep: Ctrl-C or any point's failure stops the points in flight
    # within their next poll and drops those not started.
    cancel = _core.CancelToken()
    pool = ThreadPoolExecutor(max_workers=jobs)
    futures = [pool.submit(run, sc, cancel) for sc in scenarios]
    try:
        results = [f.result() for f in futures]
    except BaseException:
        cancel.cancel()
        for f in futures:
            f.cancel()
        raise
    finally:
        pool.shutdown(wait=True)
    rows = [row for point, res in zip(points, results) for row in _rows(point, res.summary)]
    return pd.DataFrame(rows)
