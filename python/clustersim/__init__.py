"""clustersim: discrete-event simulation of GPU clusters.

    import clustersim as cs
    sc = cs.Scenario.load("scenarios/fat_tree_allreduce.json")
    sc.set("topology.nodes", 64)
    res = cs.run(sc)            # res.summary: dict, as `clustersim run --json` prints it
    df = cs.sweep(sc, {"topology.nodes": [16, 32, 64]}, jobs=2)
    plans = cs.plan("scenarios/gpt3_175b_1024_h100.json", jobs=2)   # ranked parallel plans
    topo = cs.Topology.from_scenario(sc)   # topo.report: dict, as `clustersim topo --json`
"""
from ._core import ScenarioError
from .scenario import Scenario
from .result import Result, run
from .sweep import sweep, schema
from .plan import plan
from .topology import Topology

__all__ = ["Scenario", "Result", "ScenarioError", "Topology", "run", "sweep", "plan", "schema"]
