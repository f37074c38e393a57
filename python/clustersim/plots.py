"""Plot helpers (matplotlib) for the common views. Each takes results or tables the package
returns and an optional Axes, and returns the Axes (or Figure) it drew on."""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import _views
from .result import Result  # at run time too: collective_sizes tells one Result from several

if TYPE_CHECKING:
    from typing import Mapping


def _mean(v):
    return v["mean"] if isinstance(v, dict) else v


def _ci(v):
    return v["ci95"] if isinstance(v, dict) else 0.0


def collective_sizes(results: Result | Mapping[str, Result], axes=None):
    """Time and busbw against message size for collective results: one Result, or several as
    {label: Result} (one line per label and requested algorithm; replicated runs get error
    bars). Returns the two Axes (time, busbw)."""
    import matplotlib.pyplot as plt
    import pandas as pd

    if isinstance(results, Result):
        results = {results.summary.get("scenario", ""): results}
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(11, 4))
    ax_time, ax_bw = axes
    for label, res in results.items():
        if "collective" not in res.summary:
            raise ValueError(f"collective_sizes: {label!r} is not a collective result")
        rows = pd.DataFrame(res.summary["collective"]["results"])
        by = "requested_algorithm" if "requested_algorithm" in rows else "algorithm"
        for algorithm, d in rows.groupby(by, sort=False):
            name = f"{label} {algorithm}".strip()
            sizes = d["bytes"].map(_mean)
            ax_time.errorbar(sizes, d["time_s"].map(_mean) * 1e6, yerr=d["time_s"].map(_ci) * 1e6,
                             marker=".", label=name)
            ax_bw.errorbar(sizes, d["busbw_GBps"].map(_mean), yerr=d["busbw_GBps"].map(_ci), marker=".", label=name)
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size (bytes)")
    ax_time.set_yscale("log")
    ax_time.set_ylabel("time (us)")
    ax_bw.set_ylabel("busbw (GB/s)")
    ax_bw.legend(fontsize=8)
    return axes


def goodput_vs_interval(sweep_rows, interval_column: str = "training_run.checkpoint.interval_s.mean",
                        by: str | None = None, ax=None):
    """Goodput against the checkpoint interval from a `sweep` of training runs with
    replications: the mean with its 95% confidence band, one line per value of the `by`
    column (e.g. "fleet.market"). Returns the Axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 4))
    groups = sweep_rows.groupby(by, sort=False) if by else [("", sweep_rows)]
    for label, d in groups:
        d = d.sort_values(interval_column)
        x = d[interval_column] / 60.0
        m = d["training_run.goodput.mean"]
        ci = d["training_run.goodput.ci95"] if "training_run.goodput.ci95" in d else 0.0
        ax.plot(x, m, marker="o", label=label or None)
        ax.fill_between(x, m - ci, m + ci, alpha=0.25)
    ax.set_xscale("log")
    ax.set_xlabel("checkpoint interval (min)")
    ax.set_ylabel("goodput")
    if by:
        ax.legend()
    return ax


_views.register_plotter("collective", lambda result, ax: collective_sizes(result, axes=ax))
