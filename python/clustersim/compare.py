"""The architect's comparison: the same workloads on several fabrics, side by side
(`clustersim compare` from the command line; one implementation in the C++ core)."""
from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

from . import _core
from .scenario import Scenario, scenario_error, whole_number


def _label(item, index: int) -> str:
    if isinstance(item, (str, os.PathLike)):
        return Path(item).stem
    if isinstance(item, dict) and "kind" in item:  # a workload
        return str(item.get("op", item["kind"]))
    if isinstance(item, Scenario):
        name = item.get("name")
        if name:
            return str(name)
        if item.origin and not item.origin.startswith("<"):
            return Path(item.origin).stem
    return f"#{index + 1}"


def _scenario(item) -> Scenario:
    if isinstance(item, dict) and "kind" in item:  # a workload
        return str(item.get("op", item["kind"]))
    if isinstance(item, Scenario):
        return item
    if isinstance(item, dict):
        return Scenario(item)
    return Scenario.load(item)


def _labelled(items, what: str) -> list[tuple[str, object]]:
    """[(label, item)] from a dict {label: item} or a list (labels from files and names)."""
    pairs = list(items.items()) if isinstance(items, dict) else [(_label(x, i), x) for i, x in enumerate(items)]
    if not pairs:
        raise ValueError(f"compare: at least one {what}")
    seen: dict[str, int] = {}
    unique = []
    for i, (label, item) in enumerate(pairs):
        label = str(label)
        if label in seen:
            label = f"{label}#{i + 1}"
        seen[label] = i
        unique.append((label, item))
    return unique


class Comparison:
    """What `compare` returns. summary: the comparison as a dict ({"fabrics", "results"}, as
    `clustersim compare --json` prints it); fabrics: a DataFrame, one row per fabric (label,
    topology, routing, model, gpus, switches, cables, network cost and power, bisection,
    cluster_cost_usd and cluster_power_w (nodes + network), ...); fabric_warnings: {label:
    [narrow links]}; results: a DataFrame, one row per fabric x case (fabric, workload, case,
    time_s, busbw_GBps, network_usd_per_busbw_GBps (network $ per GPU per GB/s of busbw), ...;
    all_to_all rows network_usd_per_all_to_all_GBps; traffic: makespan_s, mean_fct_s,
    p99_fct_s; training: step_time_s, tokens_per_s, exposed_comm_s, mfu; under replications
    each with "<key>_ci95"); warnings: under replications, the cases whose fastest fabric's 95%
    interval overlaps the runner-up's (not significant; also raised as UserWarning); table: the
    CLI's side-by-side text."""

    def __init__(self, summary_json: str, table: str):
        self.summary = json.loads(summary_json)
        self.table = table
        # Under replications: cases whose fastest fabric's 95% interval overlaps the runner-up's.
        self.warnings = list(self.summary.get("warnings", []))

    @property
    def fabrics(self):
        import pandas as pd
        return pd.DataFrame(self.summary["fabrics"]).drop(columns=["notes", "warnings"], errors="ignore")

    @property
    def fabric_warnings(self) -> dict:
        """Per fabric label, where its links are narrower than the NICs inject."""
        return {f["label"]: list(f.get("warnings", [])) for f in self.summary["fabrics"]}

    @property
    def results(self):
        import pandas as pd
        return pd.DataFrame(self.summary["results"])

    def plot(self, ax=None):
        """Network cost per GB/s of delivered busbw against busbw, one marker per fabric x
        collective case (matplotlib); lower right is better."""
        import matplotlib.pyplot as plt
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        df = self.results
        if "busbw_GBps" not in df:
            raise ValueError("plot: no collective results to plot (traffic only)")
        df = df.dropna(subset=["busbw_GBps"])
        for fabric, rows in df.groupby("fabric", sort=False):
            ax.scatter(rows["busbw_GBps"], rows["network_usd_per_busbw_GBps"], label=fabric)
            for _, r in rows.iterrows():
                ax.annotate(r["case"], (r["busbw_GBps"], r["network_usd_per_busbw_GBps"]),
                            fontsize=7, xytext=(3, 3), textcoords="offset points")
        ax.set_xlabel("busbw (GB/s)")
        ax.set_ylabel("network $ / (GPU x GB/s of busbw)")
        ax.legend()
        return ax

    def __repr__(self) -> str:
        return self.table

    def _repr_html_(self) -> str:
        return "<pre>" + self.table.replace("&", "&amp;").replace("<", "&lt;") + "</pre>"


def compare(fabrics, workloads=None, *, sets: list[str] | None = None, jobs: int = 0,
            replications: int | None = None) -> Comparison:
    """Run the same workloads on each fabric. `fabrics`: scenario files or Scenario objects
    (a list, or a dict {label: scenario}); each contributes its hardware, topology, network
    and run sections. `workloads`: scenario files, Scenario objects or workload dicts (a list
    or {label: ...}); default: the first fabric's workload. `sets`: "PATH=VALUE" overrides
    applied to every fabric. `jobs`: pairs run at once (0: every core); the result is the same
    for any value. `replications`: seeds per pair (as `clustersim compare --replications`: each
    result the mean with its 95% half-width, a winner within the noise warned about); None:
    each file's run.replications. Raises ScenarioError naming the JSON path (and the fabric)
    on bad input."""
    fabric_pairs = _labelled(fabrics, "fabric")
    scenarios = [(label, _scenario(item)) for label, item in fabric_pairs]
    if workloads is None:
        workload_pairs = [(scenarios[0][0], scenarios[0][1].get("workload"))]
    else:
        workload_pairs = []
        for label, item in _labelled(workloads, "workload"):
            if isinstance(item, dict) and "kind" in item:
                workload_pairs.append((label, item))
            else:
                workload_pairs.append((label, _scenario(item).get("workload")))
    for label, w in workload_pairs:
        if w is None:
            raise ValueError(f"compare: {label} has no workload")
    # As `clustersim compare --set PATH=VALUE`: a list of such strings.
    if isinstance(sets, (str, bytes)) or not all(isinstance(a, str) and "=" in a for a in (sets or [])):
        raise scenario_error("sets", f'a list of "PATH=VALUE" strings, e.g. ["topology.nodes=64"]; got {sets!r}')
    sets = list(sets or [])
    if replications is not None:
        sets.append(f"run.replications={whole_number('replications', replications, 1, 1000)}")
    summary_json, table = _core.compare([(label, sc.to_json()) for label, sc in scenarios],
                                        [(label, json.dumps(w)) for label, w in workload_pairs],
                                        sets, whole_number("jobs", jobs, 0, 1024))
    result = Comparison(summary_json, table)
    for w in result.warnings:
        warnings.warn(w, UserWarning, stacklevel=2)
    return result
