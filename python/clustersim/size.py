"""Sizing: the point of a varied space with the least objective (default the workload's
cost_usd) that meets every requirement, as `clustersim size`. The search is the C++ core's
(sim/studies/size_search.hpp): it asks for a round of runs, this module runs them on threads,
any concurrent.futures executor or a Dask cluster, and tells it the summaries."""
from __future__ import annotations

import json
import warnings
from typing import TYPE_CHECKING, Mapping

from . import _core
from .scenario import Scenario, axis_list, scenario_error, whole_number
from .sweep import _as_executor, _run_docs

if TYPE_CHECKING:
    import os
    from typing import Any, Iterable, Sequence


class Sizing:
    """What `size` returns. point: the best point {path: value} (None when no point tried
    meets every requirement); summary: its summary (as `clustersim run --json`); objective:
    its minimized number; requirements: per requirement its mean, ci95, replications and
    whether it is sure (its 95% interval clears the bound; None from one replication);
    table: every point tried, a pandas DataFrame (the point's paths, feasible, objective,
    replications, round, each requirement's mean, then the summary flattened as cs.sweep's
    rows); warnings: a line per requirement of the answer whose 95% interval reaches past its
    bound, and one when the answer's objective and the runner-up's have 95% intervals that
    overlap (not significant; also raised as UserWarning); result: the whole answer as `clustersim size --json`
    prints it."""

    def __init__(self, result_json: str):
        self.result = json.loads(result_json)
        best = self.result["best"]
        self.point = best["point"] if best else None
        self.summary = best["summary"] if best else None
        self.objective = best["objective"] if best else None
        self.requirements = best["requirements"] if best else []
        self.warnings = list(self.result["warnings"])
        self._text = _core.size_text(result_json)

    @property
    def table(self):
        import pandas as pd

        rows = []
        for p in self.result["points"]:
            row = dict(p["point"])
            row.update(feasible=p["feasible"], objective=p["objective"], replications=p["replications"],
                       round=p["round"])
            for text, r in p["requirements"].items():
                row[text] = r["mean"]
            if "error" in p:
                row.update(error=p["error"], error_path=p["error_path"])
            else:
                flat = json.loads(_core.summary_rows(json.dumps([]), json.dumps(p["summary"])))[0]
                for key, value in flat:
                    row.setdefault(key, value)
            rows.append(row)
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        return self._text

    def _repr_html_(self) -> str:
        return "<pre>" + self._text.replace("&", "&amp;").replace("<", "&lt;") + "</pre>"


def _axis_values(path, values) -> list:
    if not isinstance(path, str):
        raise scenario_error("vary", f"a path is a dot-separated string; got {path!r}")
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
        raise scenario_error(path, f"a varied path takes a list of values or a range; got {type(values).__name__} "
                                   f"{values!r} (write [{values!r}] for one value)")
    return axis_list(path, values)


def size(scenario: Scenario | str | os.PathLike, vary: Mapping[str, Sequence[Any] | range],
         require: Iterable[str] = (), minimize: str | None = None, jobs: int = 1, *, executor=None,
         progress: bool = False, confirm: int = 10, max_runs: int = 2000) -> Sizing:
    """The point of `vary` with the least `minimize` (a summary path; default the workload's
    cost_usd, e.g. "serving.cost_usd") meeting every `require` ("KEY<=VALUE", operators <=,
    >=, <, >; KEY a summary path such as "serving.slo_attainment"). A whole-number range
    (range(4, 41), consecutive values) is bisected for each combination of the other paths,
    assuming feasibility is monotone along it; other paths are enumerated; combinations that
    cannot beat the best found are pruned; a point near a bound is run again with `confirm`
    replications. The same answer for any jobs or executor.

    jobs: threads when no executor is given. executor: any concurrent.futures.Executor or a
    dask.distributed.Client (every worker needs clustersim importable). progress: a tqdm bar
    over the runs. max_runs: the run budget; a space that may need more raises ScenarioError,
    as do an empty space and requirements naming no summary number."""
    if executor is None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"jobs: expected a whole number of threads >= 1; got {jobs!r}")
    if isinstance(require, str):
        require = [require]
    if not isinstance(vary, Mapping):
        raise scenario_error("vary", f"expected a dict {{path: [values] or range}}; got {type(vary).__name__}")
    base = scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
    axes = [[path, _axis_values(path, values)] for path, values in vary.items()]
    # The CLI's ranges (clustersim size --confirm, --max-runs).
    confirm = whole_number("confirm", confirm, 1, 10000)
    max_runs = whole_number("max_runs", max_runs, 1, 1 << 30)
    search = _core.SizeSearch(base.to_json(), json.dumps(axes), [str(r) for r in require], minimize or "",
                              confirm, max_runs)
    pool, owned = _as_executor(executor, jobs)
    cancel = _core.CancelToken() if owned else None
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=search.run_bound, desc="size", unit="run")
    try:
        for docs in iter(search.next, []):
            if bar is not None and bar.n + len(docs) > bar.total:  # confirmations go past the bound
                bar.total = bar.n + len(docs)
                bar.refresh()
            outcomes = _run_docs(pool, docs, cancel, bar, owned and jobs == 1)
            search.tell([(summary, "", "", "") if error is None else ("", error.path, error.expected, error.hint)
                         for summary, error in outcomes])
    finally:
        if bar is not None:
            bar.close()
        if owned:
            pool.shutdown(wait=True)
    sizing = Sizing(search.result())
    for w in sizing.warnings:
        warnings.warn(w, UserWarning, stacklevel=2)
    return sizing
