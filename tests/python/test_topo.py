"""`clustersim topo` and clustersim.Topology: the topology report, routes, networkx export."""
import json

import pytest

from conftest import ROOT, require, run_cli, scenario_files

FLAGSHIP = ROOT / "scenarios" / "fat_tree_allreduce.json"
CONTRACT_KEYS = {"gpus", "nodes", "switches", "links", "diameter_hops",
                 "bisection_bandwidth_Bps", "cost_usd", "power_w"}


@pytest.mark.parametrize("path", scenario_files(), ids=lambda p: p.stem)
def test_topo_json_keys_on_every_scenario(path):
    r = json.loads(run_cli("topo", path, "--json", check=True).stdout)
    assert CONTRACT_KEYS <= set(r)
    for key in ("switches_by_tier", "links_by_kind", "cables", "transceivers", "bill",
                "bisection_method", "diameter_method", "network_cost_usd", "network_power_w",
                "network_cost_per_gpu_usd", "network_usd_per_bisection_GBps", "pricing_basis",
                "switch_ports", "switch_ports_used", "racks", "notes"):
        assert key in r
    assert r["bisection_method"] in {"tree_cut", "max_flow", "closed_form", "none"}
    assert r["bisection_method"] != "max_flow" or r["kind"] != "fat_tree"
    assert r["diameter_method"] in {"bfs", "closed_form", "bfs_sampled"}
    assert r["gpus"] >= r["nodes"] >= 1
    assert r["switches"] == sum(r["switches_by_tier"].values())
    assert r["links"] == sum(v for k, v in r["links_by_kind"].items()
                             if k not in ("local", "global", "leaf_spine", "spine_core"))
    # Reach classes (topology/bill.hpp): optical = AOC (in a row) + fiber (between rows); a
    # module per fiber end at most, twin-port ones pairing a switch's ends.
    cables = r["cables"]
    assert cables["optical"] == cables["aoc"] + cables["fiber"]
    singles = sum(line["count"] for line in r["bill"] if line["item"].startswith("transceiver_"))
    twins = sum(line["count"] for line in r["bill"] if line["item"].startswith("twin_port_transceiver_"))
    assert r["transceivers"] == singles + twins and r["twin_port_transceivers"] == twins
    assert cables["fiber"] <= r["transceivers"] <= 2 * cables["fiber"]
    assert isinstance(r["warnings"], list)
    assert r["cost_usd"] == pytest.approx(sum(line["usd"] for line in r["bill"]))
    assert r["power_w"] == pytest.approx(sum(line["watts"] for line in r["bill"]))
    assert r["network_cost_usd"] == pytest.approx(
        sum(line["usd"] for line in r["bill"] if line["network"]))
    assert r["switch_ports_used"] <= r["switch_ports"]
    assert all(line["source"] for line in r["bill"])
    if r["kind"] == "fat_tree":
        assert r["tiers"] == len(r["oversubscription_by_tier"]) + 1
        assert r["tiers"] <= r["tiers_requested"] or r["tiers"] == 1
    if r["kind"] == "dragonfly":
        assert r["global_arrangement"] in {"absolute", "relative", "circulant"}


def test_flagship_numbers():
    r = json.loads(run_cli("topo", FLAGSHIP, "--json", check=True).stdout)
    # 16 nodes x 8 rails of 400G NICs, radix 64: 8 leaves (one per rail) of 16 NICs and 16
    # up-ports, which reach 2 spines by bundles of 8.
    assert (r["gpus"], r["nodes"], r["nics"]) == (128, 16, 128)
    assert r["switches_by_tier"] == {"leaf": 8, "spine": 2}
    assert r["oversubscription_by_tier"][0]["parallel_links"] == 8
    assert r["bisection_method"] == "tree_cut"
    assert r["bisection_bandwidth_Bps"] == pytest.approx(64 * 50e9)
    assert r["diameter_hops"] == 4
    # Rail leaves serve 4 racks: every NIC cable is optical. The 4 racks make one row (8 racks
    # per row), where leaves and spines sit too: every cable an AOC, no transceiver.
    assert r["cables"]["copper"] == 0 and r["cables"]["optical"] == 128 + 128
    assert (r["cables"]["aoc"], r["cables"]["fiber"], r["transceivers"], r["rows"]) == (256, 0, 0, 1)


def test_topo_text_is_a_table():
    proc = run_cli("topo", FLAGSHIP, check=True)
    for word in ("GPUs", "fabric switches", "diameter (hops)", "bisection (GB/s)", "cost (USD)",
                 "power (kW)", "network cost (USD)", "bill:", "rule:", "pricing:"):
        assert word in proc.stdout
    assert len(proc.stdout.splitlines()) >= 15


def test_prices_override_and_set():
    base = json.loads(run_cli("topo", FLAGSHIP, "--json", check=True).stdout)
    cheap = json.loads(run_cli("topo", FLAGSHIP, "--json", "--set",
                               "topology.prices.gpu_node.usd=0", check=True).stdout)
    node_line = next(line for line in base["bill"] if line["item"] == "gpu_node")
    assert cheap["cost_usd"] == pytest.approx(base["cost_usd"] - node_line["usd"])
    over = next(line for line in cheap["bill"] if line["item"] == "gpu_node")
    assert "override" in over["source"]
    bigger = json.loads(run_cli("topo", FLAGSHIP, "--json", "--set", "topology.nodes=32",
                                check=True).stdout)
    assert bigger["nodes"] == 32


def test_architect_keys_by_set():
    def topo(*sets):
        args = []
        for s in sets:
            args += ["--set", s]
        return json.loads(run_cli("topo", FLAGSHIP, "--json", *args, check=True).stdout)
    auto = topo("topology.nodes=128")
    assert auto["switches_by_tier"] == {"leaf": 32, "spine": 16}  # the DGX SuperPOD's 4 SUs
    single = topo("topology.nodes=128", "topology.parallel_links=1")
    assert single["switches_by_tier"] == {"leaf": 32, "spine": 32}
    assert single["bisection_bandwidth_Bps"] == pytest.approx(auto["bisection_bandwidth_Bps"])
    assert single["network_cost_usd"] > auto["network_cost_usd"]
    three = topo("topology.nodes=512", "topology.tiers=3", 'topology.parallel_links=[1,"auto"]')
    assert three["switches_by_tier"] == {"leaf": 128, "spine": 128, "core": 64}
    racks = topo("topology.rail_optimized=false", "topology.nodes_per_rack=4")
    assert racks["cables"]["copper"] == 128  # a leaf's 4 nodes share its rack


def test_cable_reach_classes_by_row():
    """A row per rack: the rail leaves' NICs span rows, so leaves and spines sit in the central
    row: NIC cables are fiber (a single-port transceiver at the NIC, twin-port modules pairing
    the leaf's 16 ends), leaf-spine cables AOCs in that row; without AOC prices those are fiber
    too, and without twin-port ones every end takes a single-port module."""
    def topo(*sets):
        args = [a for s in sets for a in ("--set", s)]
        return json.loads(run_cli("topo", FLAGSHIP, "--json", *args, check=True).stdout)

    rows = topo("topology.racks_per_row=1")
    assert rows["rows"] == 4
    assert (rows["cables"]["aoc"], rows["cables"]["fiber"]) == (128, 128)
    counts = {line["item"]: line["count"] for line in rows["bill"]}
    assert counts["transceiver_400Gbps"] == 128 and counts["twin_port_transceiver_800Gbps"] == 8 * 16 // 2
    assert counts["aoc_400Gbps"] == 128 and counts["optical_cable"] == 128
    plain = topo("topology.racks_per_row=1", "topology.prices.aoc=null", "topology.prices.twin_port_transceiver=null")
    assert (plain["cables"]["aoc"], plain["cables"]["fiber"], plain["transceivers"]) == (0, 256, 512)
    assert plain["twin_port_transceivers"] == 0
    # The twin-port module ($1,000) replaces two single-port ones ($700 each) at a leaf, and an
    # AOC ($800) a fiber ($60) with two single-port modules.
    saved = 64 * (2 * 700 - 1000) + 128 * (60 + 2 * 700 - 800)
    assert plain["network_cost_usd"] - rows["network_cost_usd"] == pytest.approx(saved)


def test_topo_warns_of_narrow_links_as_compare_does():
    path = ROOT / "scenarios" / "compare_dragonfly_1k.json"
    r = json.loads(run_cli("topo", path, "--json", check=True).stdout)
    assert len(r["warnings"]) == 1 and "local" in r["warnings"][0]
    text = run_cli("topo", path, check=True).stdout
    assert "warning: " + r["warnings"][0] in text
    assert json.loads(run_cli("topo", FLAGSHIP, "--json", check=True).stdout)["warnings"] == []


@pytest.mark.parametrize("args,path", [
    (("topo", "/nonexistent/scenario.json"), None),
    (("topo", FLAGSHIP, "--set", "topology.prices.aoc=5"), "topology.prices.aoc"),
    (("topo", FLAGSHIP, "--set", "topology.racks_per_row=0"), "topology.racks_per_row"),
    (("topo", FLAGSHIP, "--set", "topology.prices.gpu_node.usd=-1"), "topology.prices"),
    (("topo", FLAGSHIP, "--set", "topology.prices.nic.fast={\"usd\":1}"), "topology.prices.nic"),
    (("topo", FLAGSHIP, "--set", "topology.switch_radix=3"), "topology.switch_radix"),
])
def test_topo_bad_input_exits_2(args, path):
    proc = run_cli(*args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: ")
    if path:
        assert path in proc.stderr


def test_topo_bad_json_file_exits_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    assert run_cli("topo", bad).returncode == 2


@pytest.fixture
def topo():
    import clustersim as cs
    return cs.Topology.from_scenario(cs.Scenario.load(FLAGSHIP))


def test_python_topology_counts_and_report(topo):
    cli = json.loads(run_cli("topo", FLAGSHIP, "--json", check=True).stdout)
    assert topo.report == cli
    assert (topo.gpus, topo.nodes, topo.nics, topo.switches) == (128, 16, 128, 8 + 2)
    assert topo.links == cli["links"]
    assert "fat_tree" in repr(topo)


def test_python_topology_route(topo):
    route = topo.route(0, 127)
    assert route[0].startswith("n0.gpu0->") and route[-1].endswith("->n15.gpu7")
    for a, b in zip(route, route[1:]):
        assert a.split("->")[1] == b.split("->")[0]
    assert topo.route(5, 5) == []
    assert len(topo.route(0, 1)) == 2  # through the node's NVSwitch
    import clustersim as cs
    with pytest.raises(cs.ScenarioError):
        topo.route(0, 128)


def test_python_topology_networkx(topo):
    nx = require("networkx", "install Debian's python3-networkx")
    g = topo.to_networkx()
    assert isinstance(g, nx.MultiGraph)
    assert g.number_of_edges() == topo.links
    kinds = nx.get_node_attributes(g, "kind")
    assert sum(k == "gpu" for k in kinds.values()) == 128
    assert sum(k == "switch" for k in kinds.values()) == topo.switches
    assert g.nodes["leaf0"]["tier"] == 1
    a, b, data = next(iter(g.edges(data=True)))
    assert data["bandwidth_Bps"] > 0 and data["latency_s"] >= 0
    # the route's links are cables of the graph
    for link in topo.route(0, 127):
        u, v = link.split("->")
        assert g.has_edge(u, v)


def test_python_topology_plot(topo):
    require("networkx", "install Debian's python3-networkx")
    require("matplotlib", "install Debian's python3-matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    ax = topo.plot()
    assert "fat_tree" in ax.get_title()
