"""clustersim: discrete-event simulation of GPU clusters.

    import clustersim as cs
    sc = cs.Scenario.load("scenarios/fat_tree_allreduce.json")
    sc.set("topology.nodes", 64)
    res = cs.run(sc)            # res.summary: dict, as `clustersim run --json` prints it
    df = cs.sweep(sc, {"topology.nodes": [16, 32, 64]}, jobs=2)
    best = cs.size("scenarios/serving_mmc_erlang_c.json", vary={"fleet.autoscaler.replicas": range(7, 31)},
                   require=["serving.wait_mean_s<=0.01"])   # best.point, best.summary, best.table
    plans = cs.plan("scenarios/gpt3_175b_1024_h100.json", jobs=2)   # ranked parallel plans
    topo = cs.Topology.from_scenario(sc)   # topo.report: dict, as `clustersim topo --json`
    cmp = cs.compare(["scenarios/compare_fat_tree_1k.json", "scenarios/compare_dragonfly_1k.json"])
    cmp.results                 # one row per fabric x case: time, busbw, $ per GB/s of busbw
    fig = cs.gantt(cs.run("scenarios/training_run_by_hand.json"))   # a training run's states
    df = cs.compare_markets(cs.Scenario.load("scenarios/training_run_spot_405b.json"),
                            mixes=[0, 0.7, 1], replications=20)  # days and dollars, 95% CIs
    fig = cs.serving_plot(cs.run("scenarios/serving_llm_diurnal_hpa.json"))  # replicas, latency, cost
    res = cs.run("scenarios/workstation_7b_offload.json"); res.step; res.memory; res.plot()
"""
from .errors import ScenarioError
from .scenario import Scenario
from .result import Result, run
from .sweep import grid_points, latin_hypercube, random_samples, schema, sweep
from .plan import plan
from .size import Sizing, size
from .paired import PairedComparison, paired
from .topology import Topology
from .compare import Comparison, compare
# The view modules: importing them registers Result's views (Result.step, .memory, .serving,
# .fleet and plot(); see _views), so keep them imported here even if a name moves.
from .fleet import compare_markets, gantt, job_states, state_intervals
from .plots import collective_sizes, goodput_vs_interval
from .serving import serving_frame, serving_plot
from .training import memory_frame, pipeline_timeline, step_breakdown, step_frame

__all__ = ["Scenario", "Result", "ScenarioError", "Topology", "Comparison", "compare", "run", "sweep", "plan",
           "grid_points", "random_samples", "latin_hypercube", "schema", "gantt",
           "compare_markets", "job_states", "state_intervals", "collective_sizes", "goodput_vs_interval",
           "serving_frame", "serving_plot", "step_frame", "memory_frame", "step_breakdown", "pipeline_timeline",
           "size", "Sizing", "paired", "PairedComparison"]
