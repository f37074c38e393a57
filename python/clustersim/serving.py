"""Serving fleets: the fleet's time series as a table, and a plot of replicas, latency and cost
over time."""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import _views

if TYPE_CHECKING:
    from .result import Result

_HOUR_S = 3600.0


def serving_frame(result: Result):
    """The serving fleet's time series as a DataFrame indexed by time_s, one column per series
    with the "serving." prefix dropped (arrival_rate: arrivals per second in the interval,
    warm-up included; replicas_ready, replicas_starting, replicas_waiting, replicas_draining,
    replicas_desired, queue_length; scaling_metric: what the autoscaler last saw, per ready
    replica, and scaling_metric_total: the fleet's total it comes from; latency_p50_s,
    latency_p95_s, latency_p99_s, ttft_p50_s, ttft_p99_s: of the requests completed in the
    interval, after the warm-up; cost_usd: the fleet's cost so far; "prefill.*" and "decode.*"
    per pool when disaggregated, with each pool's cost_usd). Each row is the interval that
    ends at time_s (run.timeseries_interval, 60 s by default)."""
    ts = result.timeseries
    ts = ts[ts["series"].str.startswith("serving.")]
    if ts.empty:
        raise ValueError("no 'serving.*' series: not a serving result, or run.timeseries_interval is 0")
    frame = ts.pivot_table(index="time_s", columns="series", values="value", aggfunc="last")
    frame.columns = [c[len("serving."):] for c in frame.columns]
    return frame


def _pools(frame):
    """The replica pools in the frame: [""] for one pool, ["prefill.", "decode."] when disaggregated."""
    return [p for p in ("prefill.", "decode.") if f"{p}replicas_ready" in frame.columns] or [""]


def serving_plot(result: Result, axes=None, slo: bool = True):
    """Replicas, latency and cost of a serving run over time, in three panels sharing the time
    axis (hours, or minutes for runs under two hours): replicas ready, starting (with those
    waiting for capacity) and desired per pool, with the arrival rate on a second axis; the
    latency percentiles of the requests completed in each interval (log scale), with the SLO's
    bound when the summary has one; the cumulative cost. `axes`: three matplotlib Axes to draw
    on (default: a new figure). Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt

    frame = serving_frame(result)
    end_s = float(frame.index.max())
    scale, unit = (_HOUR_S, "hours") if end_s >= 2 * _HOUR_S else (60.0, "minutes")
    t = frame.index / scale
    if axes is None:
        fig, axes = plt.subplots(3, 1, sharex=True, figsize=(10, 8), gridspec_kw={"height_ratios": [3, 2, 2]})
    else:
        fig = axes[0].figure
    ax_rep, ax_lat, ax_cost = axes

    for pool in _pools(frame):
        name = pool.rstrip(".") or "replicas"
        line, = ax_rep.step(t, frame[f"{pool}replicas_ready"], where="post", label=f"{name} ready")
        starting = frame[f"{pool}replicas_starting"] + frame.get(f"{pool}replicas_waiting", 0)
        ax_rep.step(t, starting, where="post", color=line.get_color(), alpha=0.4, label=f"{name} starting or waiting")
        ax_rep.step(t, frame[f"{pool}replicas_desired"], where="post", color=line.get_color(), linestyle=":",
                    label=f"{name} desired")
    ax_rep.set_ylabel("replicas")
    ax_rep.legend(loc="upper left", fontsize="small")
    if "arrival_rate" in frame.columns:
        ax_rate = ax_rep.twinx()
        ax_rate.plot(t, frame["arrival_rate"], color="gray", linewidth=0.8, alpha=0.7)
        ax_rate.set_ylabel("arrivals (1/s)", color="gray")

    for p, style in (("p50", "-"), ("p95", "--"), ("p99", ":")):
        col = f"latency_{p}_s"
        if col in frame.columns:
            values = frame[col].where(frame[col] > 0)  # intervals without completions: no point
            ax_lat.plot(t, values, linestyle=style, color="tab:blue", label=f"latency {p}")
    if "ttft_p99_s" in frame.columns:
        ax_lat.plot(t, frame["ttft_p99_s"].where(frame["ttft_p99_s"] > 0), color="tab:orange", label="TTFT p99")
    bound = (result.summary.get("serving", {}).get("slo", {}) or {}).get("latency_s")
    if isinstance(bound, dict):
        bound = bound.get("mean")
    if slo and bound:
        ax_lat.axhline(bound, color="tab:red", linewidth=1, label="SLO latency")
    ax_lat.set_yscale("log")
    ax_lat.set_ylabel("seconds")
    ax_lat.legend(loc="upper left", fontsize="small")

    ax_cost.plot(t, frame["cost_usd"], color="tab:green")
    ax_cost.set_ylabel("cost (USD)")
    ax_cost.set_xlabel(unit)
    ax_rep.set_title(f"{result.summary.get('scenario') or 'serving'}: replicas, latency and cost")
    fig.tight_layout()
    return fig


_views.register_accessor("serving", serving_frame)
_views.register_plotter("serving", lambda result, ax: serving_plot(result, axes=ax))
