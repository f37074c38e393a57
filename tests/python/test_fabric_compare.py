"""Comparing fabrics: every run's summary says what its fabric costs (the same figures as
`clustersim topo`), collective rows their cost per delivered GB/s, and one file sweeps across
topology families with the family's own routing (network.routing: "default")."""
import json

import pytest

import clustersim as cs
from conftest import ROOT, run_cli

FLAGSHIP = ROOT / "scenarios" / "fat_tree_allreduce.json"

FAMILIES = {
    "fat_tree": {"kind": "fat_tree", "nodes": 16, "switch_radix": 16, "link_bandwidth": "400Gbps"},
    "dragonfly": {"kind": "dragonfly", "routers_per_group": 2, "nodes_per_router": 2,
                  "global_links_per_router": 1, "groups": 3, "nodes": 12,
                  "link_bandwidth": "400Gbps", "global_bandwidth": "400Gbps"},
    "torus": {"kind": "torus", "dims": [4, 4], "nodes": 16, "link_bandwidth": "400Gbps"},
}


def small(sc):
    return (sc.set("hardware.node", {"gpus": 1, "nics": 1, "nic_bandwidth": "400Gbps"})
              .set("network.routing", "default").set("network.model", "analytical")
              .set("workload.sizes", [2**26]))


def test_summary_prices_its_fabric_as_topo_does():
    summary = cs.run(cs.Scenario.load(FLAGSHIP)).summary
    fabric = summary["fabric"]
    topo = json.loads(run_cli("topo", FLAGSHIP, "--json", check=True).stdout)
    for key in ("network_cost_usd", "network_power_w", "network_cost_per_gpu_usd",
                "network_usd_per_bisection_GBps"):
        assert fabric[key] == pytest.approx(topo[key], rel=1e-12), key
    assert fabric["bisection_bandwidth_Bps"] == pytest.approx(topo["bisection_bandwidth_Bps"], rel=1e-12)
    for row in summary["collective"]["results"]:
        assert row["network_usd_per_busbw_GBps"] == pytest.approx(
            fabric["network_cost_per_gpu_usd"] / row["busbw_GBps"], rel=1e-12)


def test_run_prints_the_fabric_and_the_builders_notes():
    out = run_cli("run", FLAGSHIP, "--set", "topology.tiers=3", check=True).stdout
    assert "fabric: network $" in out
    assert "note: tiers: 3 asked, 2 built" in out


def test_one_file_sweeps_across_families():
    sc = small(cs.Scenario.load(FLAGSHIP))
    df = cs.sweep(sc, {"topology": list(FAMILIES.values())}, jobs=2)
    assert len(df) == 3
    assert df["collective.busbw_GBps"].gt(0).all()
    assert df["fabric.network_cost_usd"].gt(0).all()
    assert df["fabric.network_usd_per_bisection_GBps"].gt(0).all()
    # Each family ran its own routing.
    kinds = [json.loads(t)["kind"] if isinstance(t, str) else t["kind"] for t in df["topology"]]
    assert kinds == list(FAMILIES)


def test_default_routing_is_the_familys():
    for family, topo in FAMILIES.items():
        sc = small(cs.Scenario.load(FLAGSHIP)).set("topology", topo)
        explicit = {"fat_tree": "dmodk", "dragonfly": "minimal", "torus": "dor"}[family]
        a = cs.run(sc).summary["collective"]["results"]
        b = cs.run(sc.copy().set("network.routing", explicit)).summary["collective"]["results"]
        assert a == b, family
