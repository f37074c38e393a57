"""Training steps as tables and plots: where a GPU's step goes, its memory per pipeline stage,
the step breakdown of several results side by side, and the pipeline timeline of one step."""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import _views
from .result import Result  # at run time too: step_breakdown tells one Result from several

if TYPE_CHECKING:
    from typing import Mapping

# The summary's breakdown, in the order a step is read: work, then waits.
_COMPONENTS = ["compute", "optimizer", "exposed tp", "exposed cp", "exposed ep", "exposed pp", "exposed dp",
               "exposed offload", "bubble"]


def _training(result: Result) -> dict:
    t = result.summary.get("training") or result.summary.get("training_run", {}).get("step")
    if not t:
        raise ValueError("not a training result: its summary has no training block "
                         "(workload.kind \"training\", or a training_run with workload.training)")
    return t


def _mean(v):
    return v["mean"] if isinstance(v, dict) and "mean" in v else v


def step_frame(result: Result):
    """Where a GPU's step goes (means over GPUs): one row per component (compute, optimizer,
    exposed communication by group type, bubble) with seconds and share of the step. The
    seconds add up to the step time."""
    import pandas as pd

    t = _training(result)
    b = t["breakdown"]
    seconds = {"compute": _mean(b["compute_s"]), "optimizer": _mean(b["optimizer_s"])}
    for group, s in b["exposed_comm_s"].items():
        seconds[f"exposed {group}"] = _mean(s)
    seconds["bubble"] = _mean(b["bubble_s"])
    step = _mean(t["step_time_s"])
    rows = [(c, seconds.get(c, 0.0)) for c in _COMPONENTS if c in seconds]
    frame = pd.DataFrame(rows, columns=["component", "seconds"])
    frame["share"] = frame["seconds"] / step
    return frame


def memory_frame(result: Result):
    """Memory per GPU of each pipeline stage (bytes): parameters, gradients, optimizer,
    activations, ZeRO buffers, logits, recompute, overhead and the total, with the GPU's
    capacity in DataFrame.attrs["capacity_bytes"]."""
    import pandas as pd

    m = _training(result)["memory"]
    frame = pd.DataFrame(m["per_stage"]).set_index("stage")
    frame.columns = [c.removesuffix("_bytes") for c in frame.columns]
    frame.attrs["capacity_bytes"] = m["capacity_bytes"]
    return frame


def step_breakdown(results: Result | Mapping[str, Result], ax=None):
    """Stacked bars of where a GPU's step goes, one bar per result ({label: Result}, or one
    Result). Returns the Axes."""
    import matplotlib.pyplot as plt

    if isinstance(results, Result):
        results = {results.summary.get("scenario", "") or "step": results}
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 0.6 * len(results) + 1.5))
    frames = {label: step_frame(r).set_index("component")["seconds"] for label, r in results.items()}
    labels = list(frames)
    left = [0.0] * len(labels)
    for component in _COMPONENTS:
        widths = [frames[label].get(component, 0.0) for label in labels]
        if not any(widths):
            continue
        ax.barh(labels, widths, left=left, label=component)
        left = [a + b for a, b in zip(left, widths)]
    ax.invert_yaxis()
    ax.set_xlabel("seconds per step (mean over GPUs)")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return ax


def pipeline_timeline(result: Result, ax=None, max_gpus: int = 16, stream: str = "compute"):
    """The step's timeline from its trace (`run.trace` set): one row per GPU (the first
    max_gpus), a bar per task of the `stream` thread ("compute", or a communication stream
    such as "tp", "pp", "dp"), coloured by kind (forward, backward, recompute, optimizer...):
    the pipeline's fill, steady state and drain, and its bubbles as gaps. Returns the Axes."""
    import matplotlib.pyplot as plt

    if result.trace is None:
        raise ValueError("pipeline_timeline needs the step's trace: set run.trace in the scenario")
    events = result.trace["traceEvents"] if isinstance(result.trace, dict) else result.trace
    gpus = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    tids = {(e["pid"], e["tid"]) for e in events
            if e.get("ph") == "M" and e.get("name") == "thread_name" and e["args"]["name"] == stream}
    shown = sorted(gpus)[:max_gpus]
    row = {pid: i for i, pid in enumerate(shown)}
    bars = {}  # (kind, pid) -> [(start_ms, duration_ms)]: one collection per GPU and kind
    for e in events:
        if e.get("ph") == "X" and e["pid"] in row and (e["pid"], e["tid"]) in tids:
            bars.setdefault((e.get("cat", ""), e["pid"]), []).append((e["ts"] / 1e3, e["dur"] / 1e3))
    if ax is None:
        _, ax = plt.subplots(figsize=(11, 0.35 * len(shown) + 1.2))
    colours = {}
    for (kind, pid), spans in bars.items():
        first = kind not in colours
        colours.setdefault(kind, f"C{len(colours) % 10}")
        ax.broken_barh(spans, (row[pid] - 0.4, 0.8), color=colours[kind], label=kind if first else None)
    ax.set_yticks(range(len(shown)), [gpus[p].split(":")[0] for p in shown], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("time in the step (ms)")
    ax.legend(fontsize=8, ncol=4, loc="upper right")
    return ax


_views.register_accessor("step", step_frame)
_views.register_accessor("memory", memory_frame)
_views.register_plotter("training", lambda result, ax: step_breakdown(result, ax=ax))
