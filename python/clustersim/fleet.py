"""Long training runs on fleets: the job's states as a Gantt chart, and on-demand vs spot vs a
mix of the two for the same job."""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from . import _core, _views
from .result import run
from .scenario import Scenario, scenario_error

if TYPE_CHECKING:
    from .result import Result

# Colours of the job's states (matplotlib's tab10), by the names the C++ model gives them.
_STATE_COLOURS = {"starting": "tab:gray", "running": "tab:green", "checkpointing": "tab:blue",
                  "restoring": "tab:orange", "waiting": "tab:red", "reconfiguring": "tab:purple",
                  "done": "black"}
_DAY_S = 86400.0


def job_states() -> list[str]:
    """The training run's state names, indexed by the value of its "training_run.state" series."""
    return list(_core.training_run_states())


def state_intervals(result: Result, prefix: str = "training_run"):
    """The job's states as a DataFrame of intervals: state, start_s, end_s, duration_s (the
    last state lasts until the end of the simulation; zero-length states are left out)."""
    import pandas as pd

    ts = result.timeseries
    states = ts[ts["series"] == f"{prefix}.state"]
    if states.empty:
        raise ValueError(f"no '{prefix}.state' series: not a training_run result")
    names = job_states()
    times = list(states["time_s"]) + [float(_number(result.summary["sim_time_s"]))]
    rows = [{"state": names[int(v)], "start_s": t0, "end_s": t1, "duration_s": t1 - t0}
            for v, t0, t1 in zip(states["value"], times[:-1], times[1:]) if t1 > t0]
    return pd.DataFrame(rows, columns=["state", "start_s", "end_s", "duration_s"])


def gantt(result: Result, ax=None, nodes: bool = True, prefix: str = "training_run"):
    """A Gantt chart of a training run: one row per state over time and, with `nodes` (and no
    `ax` given), the nodes held per market below it. Times in hours, or days for runs longer
    than two days. Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt

    intervals = state_intervals(result, prefix)
    end_s = float(_number(result.summary["sim_time_s"]))
    scale, unit = (_DAY_S, "days") if end_s > 2 * _DAY_S else (3600.0, "hours")
    if ax is None:
        if nodes:
            fig, (ax, ax_nodes) = plt.subplots(2, 1, sharex=True, figsize=(10, 5),
                                               gridspec_kw={"height_ratios": [3, 2]})
        else:
            fig, ax = plt.subplots(figsize=(10, 3))
            ax_nodes = None
    else:
        fig, ax_nodes = ax.figure, None
    order = [s for s in job_states() if s in set(intervals["state"])]
    for row, state in enumerate(order):
        spans = intervals[intervals["state"] == state]
        ax.broken_barh(list(zip(spans["start_s"] / scale, spans["duration_s"] / scale)), (row - 0.4, 0.8),
                       facecolors=_STATE_COLOURS.get(state, "tab:cyan"))
    ax.set_yticks(range(len(order)), order)
    ax.set_ylim(-0.6, len(order) - 0.4)
    ax.invert_yaxis()
    ax.set_title(f"{result.summary.get('scenario') or 'training run'}: job state over time")
    if ax_nodes is not None:
        ts = result.timeseries
        for series, group in ts[ts["series"].str.startswith(f"{prefix}.nodes.")].groupby("series"):
            if group["value"].max() > 0:  # held until the next sample, the last until the end
                times = list(group["time_s"] / scale) + [end_s / scale]
                values = list(group["value"]) + [group["value"].iloc[-1]]
                ax_nodes.step(times, values, where="post", label=series.rsplit(".", 1)[-1])
        ax_nodes.set_ylabel("nodes held")
        ax_nodes.legend(loc="lower left")
        ax_nodes.set_xlabel(unit)
    else:
        ax.set_xlabel(unit)
    fig.tight_layout()
    return fig


def _number(v):
    """A summary number, or the mean of a replicated one."""
    return v["mean"] if isinstance(v, dict) else v


def _ci95(v):
    return v["ci95"] if isinstance(v, dict) else math.nan


def _market(mix):
    """A spot share (0..1) as the fleet.market value; a market name or share dict as given."""
    if isinstance(mix, (int, float)) and not isinstance(mix, bool):
        if not 0.0 <= mix <= 1.0:
            raise ValueError(f"a spot share is in [0, 1]; got {mix}")
        return "on_demand" if mix == 0 else "spot" if mix == 1 else {"spot": float(mix)}
    return mix


def _label(market) -> str:
    if isinstance(market, str):
        return market
    return " + ".join(f"{share:.0%} {name}" for name, share in market.items())


def compare_markets(scenario: Scenario, mixes=(0.0, 0.7, 1.0), replications: int = 20, jobs: int = 1):
    """The same training run bought on demand, on spot, and as mixes: each entry of `mixes` is
    a spot share (0 = on demand, 1 = all spot) or a fleet.market value ("reserved",
    {"spot": 0.5, "reserved": 0.2}). Each runs `replications` times (seeds seed, seed+1, ...).
    Returns a pandas DataFrame, one row per mix in the order given: market, spot_share, days
    (mean wall time) and days_ci95, cost_usd and cost_usd_ci95, goodput and goodput_ci95
    (half-widths of 95% confidence intervals; NaN with one replication), interruptions,
    failures and completed (the share of replications that finished before run.until)."""
    import pandas as pd

    if not isinstance(scenario, Scenario):  # a dict or a path
        scenario = Scenario(scenario) if isinstance(scenario, dict) else Scenario.load(scenario)
    kind = scenario.get("workload.kind")
    if kind != "training_run":
        raise scenario_error("workload.kind", f'a "training_run" workload (compare_markets compares training runs\' '
                                              f'markets); got {kind!r}: for a serving fleet, sweep fleet.market')
    markets = [_market(m) for m in mixes]
    scenarios = [scenario.copy().set("fleet.market", m).set("run.replications", int(replications))
                 for m in markets]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(run, scenarios))
    rows = []
    for market, res in zip(markets, results):
        tr = res.summary["training_run"]
        spot = 1.0 if market == "spot" else market.get("spot", 0.0) if isinstance(market, dict) else 0.0
        rows.append({"market": _label(market), "spot_share": spot,
                     "days": _number(tr["wall_time_s"]) / _DAY_S, "days_ci95": _ci95(tr["wall_time_s"]) / _DAY_S,
                     "cost_usd": _number(tr["cost_usd"]), "cost_usd_ci95": _ci95(tr["cost_usd"]),
                     "goodput": _number(tr["goodput"]), "goodput_ci95": _ci95(tr["goodput"]),
                     "interruptions": _number(tr["interruptions"]), "failures": _number(tr["failures"]),
                     "completed": _number(tr["job"]["completed"])})
    return pd.DataFrame(rows)


_views.register_accessor("fleet", state_intervals)
_views.register_plotter("training_run", lambda result, ax: gantt(result, ax=ax))
