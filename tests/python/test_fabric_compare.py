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


def test_links_roll_up_by_class_and_over_time(tmp_path):
    sc = cs.Scenario.load(FLAGSHIP).set("run.timeseries_interval", 2e-4)
    res = cs.run(sc)
    classes = {c["class"]: c for c in res.summary["links"]["by_class"]}
    # A ring on rails: NVLink inside nodes, NIC to leaf across them, no spine.
    assert {"gpu>node_switch", "nic>leaf", "leaf>nic"} <= set(classes)
    assert not any(c.startswith("leaf>spine") for c in classes)
    assert classes["nic>leaf"]["links_used"] == 128
    links = res.links
    assert classes["nic>leaf"]["bytes"] == pytest.approx(
        links[links["from"].str.match(r"^n\d+(\.\d+)?$") & links["to"].str.startswith("leaf")]["bytes"].sum(), rel=1e-9)
    ts = res.timeseries
    util = ts[ts["series"] == "link_util_max.nic>leaf"]["value"]
    assert len(util) > 5 and 0 < util.max() <= 1 + 1e-9
    mean = ts[ts["series"] == "link_util_mean.nic>leaf"]["value"]
    assert (mean.values <= util.values + 1e-12).all()
    out = run_cli("run", FLAGSHIP, check=True).stdout
    assert "links by class:" in out and "nic>leaf" in out


def test_flows_csv_names_each_flows_route_and_topology_route_agrees(tmp_path):
    path = ROOT / "scenarios" / "fat_tree_permutation.json"
    sc = cs.Scenario.load(path).set("network.routing", "ecmp")
    flows = cs.run(sc).flows
    assert flows["route"].str.contains(">").all()
    topo = cs.Topology.from_scenario(sc)
    for _, f in flows.head(8).iterrows():
        hops = topo.route(int(f["src"]), int(f["dst"]), flow_key=int(f["flow"]))
        vertices = [hops[0].split("->")[0]] + [h.split("->")[1] for h in hops]
        assert f["route"] == ">".join(vertices)


def test_plot_draws_large_fabrics_by_tier_and_group():
    import matplotlib
    matplotlib.use("Agg")
    big = cs.Topology.from_scenario(cs.Scenario.load(FLAGSHIP).set("topology.nodes", 128))
    ax = big.plot()  # 1,024 GPUs: aggregated
    texts = " ".join(t.get_text() for t in ax.texts)
    assert "leaf" in texts and "spine" in texts and "128 nodes" in texts
    df = cs.Topology.from_scenario(cs.Scenario.load(ROOT / "scenarios" / "dragonfly_group_shift.json"))
    ax = df.plot(aggregate=True)
    assert sum("switches" in t.get_text() for t in ax.texts) == 9  # one box per group


def test_spray_routing_shares_an_oversubscribed_fabric_per_packet():
    """network.routing "spray" (per packet, fat-trees): on multi_job_interference's 2:1 fabric
    the ring beside a repeating all-to-all keeps most of its bandwidth where ECMP's collisions
    cost it many-fold, and the all-to-all itself runs faster than with D-mod-K's one path per
    flow; the sweep rows carry the routing; a dragonfly refuses it at network.routing."""
    sc = cs.Scenario.load(ROOT / "scenarios" / "multi_job_interference.json")
    rows = cs.sweep(sc, {"network.routing": ["dmodk", "ecmp", "spray"]})
    by = {r["network.routing"]: r for _, r in rows.iterrows() if r["collective.bytes"] == 64 * 2**20}
    assert by["spray"]["collective.busbw_GBps"] > 10 * by["ecmp"]["collective.busbw_GBps"]
    summaries = {r: cs.run(sc.copy().set("network.routing", r)).summary["collective"] for r in ("dmodk", "spray")}
    a2a = {r: s["background"][0]["mean_time_s"] for r, s in summaries.items()}
    assert a2a["spray"] < 0.8 * a2a["dmodk"]
    df = (cs.Scenario.load(ROOT / "scenarios" / "compare_dragonfly_1k.json")
          .set("network.routing", "spray"))
    with pytest.raises(cs.ScenarioError) as err:
        cs.run(df)
    assert err.value.path == "network.routing"
    proc = run_cli("run", ROOT / "scenarios" / "compare_dragonfly_1k.json", "--set", "network.routing=spray")
    assert proc.returncode == 2 and "network.routing" in proc.stderr and "fat_tree" in proc.stderr
