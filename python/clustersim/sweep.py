"""Parameter sweeps: one simulation per point of a grid or of a sample, on threads, on any
concurrent.futures executor, or on a Dask cluster; rows defined by the C++ core (the same
rows as `clustersim sweep`)."""
from __future__ import annotations

import hashlib
import json
import math
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Mapping  # Mapping: isinstance at run time too

from . import _core
from .errors import ScenarioError
from .scenario import Scenario, axis_list, scenario_error, whole_number

if TYPE_CHECKING:
    from concurrent.futures import Executor
    from typing import Any, Iterable, Sequence


def schema() -> str:
    """The JSON Schema of scenario files."""
    return _core.schema()


# ---------------------------------------------------------------------------------- points
def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict]:
    """The cartesian product of {path: [values]}, the first path varying slowest (as
    itertools.product and `clustersim sweep --grid`). At most 1,000,000 points: a larger
    grid raises ScenarioError before any point is built."""
    axes = [[str(path), axis_list(path, values)] for path, values in grid.items()]
    return [dict(point) for point in json.loads(_core.grid_points(json.dumps(axes)))]


def _draw(spec, u: float):
    """The value at quantile u in [0, 1) of one path's range: (low, high) uniform, (low, high,
    "log") log-uniform, integers when low and high are ints; a list: one of its items."""
    if isinstance(spec, list):
        return spec[min(int(u * len(spec)), len(spec) - 1)]
    if not (isinstance(spec, tuple) and len(spec) in (2, 3)):
        raise ValueError(f"a sample range is (low, high), (low, high, 'log') or a list of values; got {spec!r}")
    low, high = spec[0], spec[1]
    if not high >= low:
        raise ValueError(f"a sample range needs low <= high; got {spec!r}")
    log = len(spec) == 3
    if log and (spec[2] != "log" or not low > 0):
        raise ValueError(f"a log range is (low, high, 'log') with 0 < low; got {spec!r}")
    if isinstance(low, int) and isinstance(high, int) and not log:
        return min(low + int(u * (high - low + 1)), high)
    if log:
        value = math.exp(math.log(low) + u * (math.log(high) - math.log(low)))
        return min(round(value), high) if isinstance(low, int) and isinstance(high, int) else value
    return low + u * (high - low)


def random_samples(ranges: Mapping[str, Any], n: int, seed: int = 0) -> list[dict]:
    """n points drawn independently and uniformly from `ranges` ({path: (low, high) |
    (low, high, "log") | [values]}), from numpy's PCG64 seeded with `seed`."""
    import numpy as np

    rng = np.random.default_rng(seed)
    u = rng.random((int(n), len(ranges)))
    return [{path: _draw(spec, u[i, d]) for d, (path, spec) in enumerate(ranges.items())} for i in range(int(n))]


def latin_hypercube(ranges: Mapping[str, Any], n: int, seed: int = 0) -> list[dict]:
    """n points of a Latin hypercube over `ranges` (as random_samples): along every path the
    n points fall one in each of n equal-probability strata, at a uniform position inside
    it, the strata matched at random across paths (McKay, Beckman and Conover, 1979)."""
    import numpy as np

    n = int(n)
    rng = np.random.default_rng(seed)
    u = np.empty((n, len(ranges)))
    for d in range(len(ranges)):
        u[:, d] = (rng.permutation(n) + rng.random(n)) / n
    return [{path: _draw(spec, u[i, d]) for d, (path, spec) in enumerate(ranges.items())} for i in range(n)]


# ---------------------------------------------------------------------------------- running
def _run_point(doc_json: str, cancel=None, draw_ahead: bool = True) -> tuple[str | None, ScenarioError | None]:
    """One point, in whichever process runs it: (summary JSON, None) or (None, its input
    error). A module-level function so that process pools and Dask workers can pickle it;
    `cancel`, a _core.CancelToken, only in this process; `draw_ahead` False: a jobs point draws
    its job stream in its own thread (points running at once are the parallel work)."""
    try:
        return _core.run(doc_json, cancel, draw_ahead)[0], None
    except ScenarioError as e:
        return None, e


def _build_id() -> str:
    """What identifies this build of the core for the cache: its file's size and mtime."""
    st = os.stat(_core.__file__)
    return f"{st.st_size}:{st.st_mtime_ns}"


def _cache_path(cache: Path, doc_json: str) -> Path:
    """The point's file in the cache: keyed by the build, the scenario, and the contents of every
    file it reads (a trace edited since is a different point; one missing or unreadable keys
    by its name alone, and the run reports it)."""
    canonical = json.dumps(json.loads(doc_json), sort_keys=True, separators=(",", ":"))
    key = hashlib.sha256((_build_id() + "\n" + canonical).encode())
    for name in _core.input_files(doc_json):
        key.update(b"\0" + name.encode())
        try:
            with open(name, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    key.update(block)
        except OSError:
            key.update(b"\0unreadable")
    return cache / f"{key.hexdigest()}.json"


def _as_executor(executor, jobs: int) -> tuple[Executor, bool]:
    """(an Executor, whether we own it). A Dask distributed Client becomes its executor."""
    if executor is None:
        return ThreadPoolExecutor(max_workers=max(1, int(jobs))), True
    if hasattr(executor, "get_executor"):  # dask.distributed.Client
        return executor.get_executor(pure=False), False
    if not hasattr(executor, "submit"):
        raise TypeError("executor: a concurrent.futures.Executor or a dask.distributed.Client")
    return executor, False


def _run_docs(pool: Executor, docs: list[str], cancel=None, bar=None,
              one_at_a_time: bool = False) -> list[tuple[str | None, ScenarioError | None]]:
    """Every document run on `pool` (_run_point), the outcomes in the documents' order; `bar`
    (a tqdm) advanced as each ends. On any failure or Ctrl-C the token `cancel` (only for a
    pool of this process) stops the runs in flight, those not started are dropped, and the
    exception propagates. Unless the pool runs `one_at_a_time` or there is one document, the
    runs draw their job streams in place (no second thread each: world::RunOptions::draw_ahead)."""
    from concurrent.futures import as_completed

    ahead = one_at_a_time or len(docs) == 1
    futures = {pool.submit(_run_point, doc, cancel, ahead): i for i, doc in enumerate(docs)}
    outcomes: list = [None] * len(docs)
    try:
        # Without a bar, in submission order: the lowest index's fault is the one raised.
        for future in (as_completed(futures) if bar is not None else futures):
            outcomes[futures[future]] = future.result()
            if bar is not None:
                bar.update(1)
    except BaseException:
        if cancel is not None:
            cancel.cancel()
        for f in futures:
            f.cancel()
        raise
    return outcomes


def sweep(scenario: Scenario | str | os.PathLike, grid: Mapping[str, Sequence[Any]] | Iterable[Mapping[str, Any]],
          jobs: int = 1, *, executor=None, progress: bool = False, cache: str | os.PathLike | None = None,
          errors: str = "row", replications: int | None = None):
    """Run `scenario` at every point and return a pandas DataFrame: the point's paths, then
    the summary flattened, one row per point (per size for collectives), in point order
    whatever runs them. The rows are the core's (the same as `clustersim sweep`).

    grid: {path: [values]} (the cartesian product, first path slowest) or a list of points
    [{path: value}, ...] (random_samples, latin_hypercube, or your own).
    jobs: threads when no executor is given (the GIL is released while simulating).
    executor: any concurrent.futures.Executor (a ProcessPoolExecutor, ...) or a
    dask.distributed.Client (a LocalCluster, or a scheduler with workers on other machines:
    every worker needs clustersim importable).
    progress: a tqdm progress bar.
    cache: a directory; a point whose scenario (and build of the core) ran before is read
    from it instead of simulated again.
    errors: "row" (a failed point becomes a row with its "error" message and "error_path",
    and the others go on) or
    "raise" (the first failed point, in point order, raises ScenarioError).
    replications: seeds per point (run.replications, as `clustersim sweep --replications`):
    every number becomes two columns, KEY.mean and KEY.ci95 (its 95% half-width), at common
    seeds for every point; None: the scenario's. For paired differences between points, see
    `paired`."""
    import pandas as pd

    if errors not in ("row", "raise"):
        raise ValueError('errors: "row" or "raise"')
    if executor is None:
        whole_number("jobs", jobs, 1, 1024)  # threads, as `clustersim sweep -j`
    base = scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
    if replications is not None:
        base = base.copy().set("run.replications", whole_number("replications", replications, 1, 1000))
    if isinstance(grid, Mapping):
        for path, values in grid.items():
            if not isinstance(path, str):
                raise scenario_error("grid", f"a path is a dot-separated string; got {path!r}")
            if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
                raise scenario_error(path, f"a grid axis is a list of values; got {type(values).__name__} {values!r}"
                                           f" (write [{values!r}] for one value)")
        points = grid_points(grid)  # the CLI's checks: a path once, none inside another, at most 1M points
    elif isinstance(grid, (list, tuple)) and all(isinstance(p, Mapping) for p in grid):
        points = [dict(p) for p in grid]
    else:
        raise scenario_error("grid", f"expected a dict {{path: [values]}} or a list of points [{{path: value}}]; "
                                     f"got {type(grid).__name__}")
    docs = []
    for point in points:
        sc = base.copy()
        for path, value in point.items():
            sc.set(path, value)
        docs.append(sc.to_json())
    # Every point is checked before any runs, as `clustersim sweep` does: a bad last point must
    # not cost the sweep's hours. Under errors="row" it becomes its row and is not run.
    invalid: dict[int, ScenarioError] = {}
    for i, doc in enumerate(docs):
        try:
            _core.validate(doc)
        except ScenarioError as e:
            if errors == "raise":
                raise
            invalid[i] = e

    cache_dir = Path(cache) if cache is not None else None
    if cache_dir is not None:
        cache_dir.mkdir(parents=True, exist_ok=True)
    outcomes: list[tuple[str | None, ScenarioError | None] | None] = [None] * len(docs)
    todo = []
    for i, doc in enumerate(docs):
        if i in invalid:
            outcomes[i] = (None, invalid[i])
        elif cache_dir is not None and _cache_path(cache_dir, doc).exists():
            outcomes[i] = (_cache_path(cache_dir, doc).read_text(), None)
        else:
            todo.append(i)

    if todo:
        pool, owned = _as_executor(executor, jobs)
        # In this process, one token for the sweep: Ctrl-C or a point's internal fault stops the
        # points in flight within their next poll and drops those not started.
        cancel = _core.CancelToken() if owned else None
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(todo), desc="sweep", unit="point")
        try:
            for i, outcome in zip(todo, _run_docs(pool, [docs[i] for i in todo], cancel, bar, owned and jobs == 1)):
                outcomes[i] = outcome
        finally:
            if bar is not None:
                bar.close()
            if owned:
                pool.shutdown(wait=True)
        if cache_dir is not None:
            for i in todo:
                summary, _ = outcomes[i]
                if summary is not None:
                    path = _cache_path(cache_dir, docs[i])
                    tmp = path.with_suffix(".tmp")
                    tmp.write_text(summary)
                    tmp.replace(path)

    rows = []
    for point, (summary, error) in zip(points, outcomes):
        pairs = [[path, value] for path, value in point.items()]
        if error is not None:
            if errors == "raise":
                raise error
            rows.append({**point, "error": str(error), "error_path": error.path})
            continue
        rows.extend(dict(row) for row in json.loads(_core.summary_rows(json.dumps(pairs), summary)))
    return pd.DataFrame(rows)
