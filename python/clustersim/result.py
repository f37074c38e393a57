"""Running a scenario and what comes back."""
from __future__ import annotations

import io
import json
import os
import warnings

from . import _core, _views
from .scenario import Scenario

# The summary blocks whose plot a view module registers (_views.register_plotter), in the order
# plot() looks for them.
_PLOTTED_BLOCKS = ("collective", "training", "training_run", "serving")


class Result:
    """summary: dict identical to `clustersim run --json`; timeseries: pandas DataFrame with
    columns series, time_s, value (empty without run.timeseries_interval); trace: the
    Chrome/Perfetto trace as a dict, or None without run.trace; flows: for traffic workloads,
    a DataFrame with one row per flow (flow, src, dst, bytes, start_s, finish_s, fct_s; NaN
    finish for flows still running at run.until), else None; links: a DataFrame with one row
    per directed link that carried bytes (link, from, to, kind, capacity_Bps, bytes, busy_s,
    busy_share, peak_utilization, mean_utilization); jobs: for jobs workloads, a DataFrame with one
    row per job (job, class, queue, submit_s, start_s, end_s, gpus, nodes, spread, slowdown,
    preemptions, interruptions, wait_s, lost_work_s, completed; NaN start or end for a job that
    never started or did not finish), else None; step and memory: for a training step, where a
    GPU's step goes and the memory per pipeline stage (DataFrames); serving and fleet: a serving
    fleet's time series and a training run's states (DataFrames); plot(): the workload's natural
    view; save(dir): the files of `clustersim run --out DIR`, after which trace_path is the
    trace's path (None before, or without run.trace)."""

    def __init__(self, summary_json: str, timeseries_csv: str, trace_json: str, flows_csv: str,
                 links_csv: str = "", jobs_csv: str = "", run_warnings: list[str] | None = None):
        # What the run bounded instead of refusing (a coarsened time series), as the CLI
        # prints them on stderr.
        self.warnings = list(run_warnings or [])
        self.summary = json.loads(summary_json)
        self._timeseries_csv = timeseries_csv
        self._flows_csv = flows_csv
        self._links_csv = links_csv
        self._jobs_csv = jobs_csv
        self.trace = json.loads(trace_json) if trace_json else None
        # The scenario's run.trace file name (set by run()); trace_path: where save() wrote it.
        self._trace_name = None
        self.trace_path = None

    @property
    def flows(self):
        if not self._flows_csv:
            return None
        import pandas as pd

        return pd.read_csv(io.StringIO(self._flows_csv))

    @property
    def jobs(self):
        if not self._jobs_csv:
            return None
        import pandas as pd

        return pd.read_csv(io.StringIO(self._jobs_csv), keep_default_na=False,
                           na_values={"start_s": [""], "end_s": [""]})

    @property
    def links(self):
        import pandas as pd

        if not self._links_csv:
            return pd.DataFrame(columns=["link", "from", "to", "kind", "capacity_Bps", "bytes", "busy_s",
                                         "busy_share", "peak_utilization", "mean_utilization"])
        return pd.read_csv(io.StringIO(self._links_csv))

    @property
    def timeseries(self):
        import pandas as pd

        if not self._timeseries_csv:
            return pd.DataFrame(columns=["series", "time_s", "value"])
        return pd.read_csv(io.StringIO(self._timeseries_csv))

    @property
    def step(self):
        """Training: where a GPU's step goes, one row per component (training.step_frame)."""
        return _views.accessor("step")(self)

    @property
    def memory(self):
        """Training: memory per GPU of each pipeline stage (training.memory_frame)."""
        return _views.accessor("memory")(self)

    @property
    def serving(self):
        """Serving: the fleet's time series, one column per series (serving.serving_frame)."""
        return _views.accessor("serving")(self)

    @property
    def fleet(self):
        """Training run: the job's states as intervals (fleet.state_intervals)."""
        return _views.accessor("fleet")(self)

    def save(self, directory: str | os.PathLike) -> dict:
        """Writes the result as `clustersim run --out DIR` does: summary.json, and where they
        apply timeseries.csv, links.csv, flows.csv, jobs.csv and the trace (as run.trace names
        it, default trace.json), each written to a temporary first and renamed, so a file is
        whole or absent. Sets trace_path. Returns {name: path} of the files written."""
        directory = os.fspath(directory)
        os.makedirs(directory, exist_ok=True)
        files = {"summary.json": json.dumps(self.summary, indent=2) + "\n", "timeseries.csv": self._timeseries_csv,
                 "links.csv": self._links_csv, "flows.csv": self._flows_csv, "jobs.csv": self._jobs_csv}
        trace_name = None
        if self.trace is not None:
            trace_name = os.path.basename(self._trace_name or "trace.json")
            files[trace_name] = json.dumps(self.trace)
        written = {}
        for name, text in files.items():
            if not text:
                continue
            path = os.path.join(directory, name)
            tmp = path + ".tmp"
            with open(tmp, "w") as f:
                f.write(text)
            os.replace(tmp, path)
            written[name] = path
        self.trace_path = written.get(trace_name) if trace_name else None
        return written

    def plot(self, ax=None):
        """The natural view of the result's workload: a collective's time and busbw against
        size, a training step's breakdown, a training run's states and nodes over time, a
        serving fleet's replicas, latency and cost, a jobs cluster's queues and busy GPUs, a
        traffic workload's flow completion times. Returns what the helper returns."""
        import matplotlib.pyplot as plt

        s = self.summary
        for block in _PLOTTED_BLOCKS:
            if block in s:
                return _views.plotter(block)(self, ax)
        if "jobs" in s:
            if ax is None:
                _, ax = plt.subplots(figsize=(8, 3.5))
            ts = self.timeseries
            for name, d in ts[ts["series"].str.startswith("jobs.queue_length")].groupby("series"):
                ax.step(d["time_s"] / 3600, d["value"], where="post", label=name.removeprefix("jobs."))
            ax.set_xlabel("hours")
            ax.set_ylabel("jobs waiting")
            ax.legend(fontsize=8)
            return ax
        if self.flows is not None:
            if ax is None:
                _, ax = plt.subplots(figsize=(6, 3.5))
            fct = self.flows["fct_s"].dropna().sort_values() * 1e3
            ax.plot(fct.to_numpy(), [(i + 1) / len(fct) for i in range(len(fct))])
            ax.set_xlabel("flow completion time (ms)")
            ax.set_ylabel("CDF")
            return ax
        raise ValueError(f"no plot for this result ({', '.join(s)})")

    def __repr__(self) -> str:
        return f"Result({self.summary.get('scenario', '')!r}, sim_time_s={self.summary.get('sim_time_s')})"


def as_scenario(scenario) -> Scenario:
    """A Scenario from a Scenario, a dict, or a path to a scenario file (str or os.PathLike);
    a TypeError naming what was given otherwise."""
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, dict):
        return Scenario(scenario)
    if isinstance(scenario, (str, os.PathLike)):
        return Scenario.load(scenario)
    raise TypeError("expected a clustersim.Scenario, a dict or a path to a scenario file; got "
                    f"{type(scenario).__name__} {scenario!r}")


def run(scenario: Scenario | dict | str | os.PathLike, _cancel=None) -> Result:
    """Run a Scenario (or a dict, or a path to a scenario file). The GIL is released while
    the simulation runs, so threads can run several at once; Ctrl-C raises KeyboardInterrupt
    within a second."""
    scenario = as_scenario(scenario)
    result = Result(*_core.run(scenario.to_json(), _cancel))
    trace = scenario.get("run.trace") if result.trace is not None else None
    result._trace_name = trace if isinstance(trace, str) else None
    for line in result.warnings:
        warnings.warn(line, RuntimeWarning, stacklevel=2)
    return result
