"""Degraded fabrics (topology.failed) and growth (`topo --grow-to`) through the CLI."""
import json

import pytest

from conftest import ROOT, run_cli

FLAGSHIP = ROOT / "scenarios" / "fat_tree_allreduce.json"
ALL_TO_ALL = ROOT / "scenarios" / "oversubscribed_all_to_all.json"
DRAGONFLY = ROOT / "scenarios" / "dragonfly_group_shift.json"
TORUS = ROOT / "scenarios" / "torus_allreduce.json"


def topo_json(path, *sets):
    args = [a for s in sets for a in ("--set", s)]
    return json.loads(run_cli("topo", path, *args, "--json", check=True).stdout)


def test_one_spine_of_two_down_on_rails_the_bisection_stays_the_bound_halves():
    # 8 rail leaves of 16 NICs (one per node), each with 16 up-links in bundles of 8 to 2
    # spines. A split of the nodes keeps each rail's traffic inside its leaf: the bisection
    # (64 NICs x 50 GB/s) does not need the spines. The all-to-all does: a leaf's 16 GPUs send
    # to the 128 - 16 - 7 GPUs off their rail and node, 16 x 105 / 128 r over the leaf's live
    # up-links: 16 cables allow 60.95 GB/s (the NICs bind at 53.3), 8 allow 30.48.
    intact = topo_json(FLAGSHIP)
    r = topo_json(FLAGSHIP, 'topology.failed={"switches": ["spine0"]}')
    assert r["failed"] == {"cables": 64, "switches": 1}
    assert r["bisection_method"] == "max_flow"
    assert r["bisection_bandwidth_Bps"] == pytest.approx(intact["bisection_bandwidth_Bps"]) == 64 * 50e9
    assert intact["all_to_all_bound_limit"] == "nic"
    assert r["all_to_all_bound_limit"] == "leaf up-links"
    assert r["all_to_all_bound_per_gpu_Bps"] == pytest.approx(8 * 50e9 * 128 / (16 * 105))
    assert any(n.startswith("degraded: 64 cables down") for n in r["notes"])
    assert r["cost_usd"] == intact["cost_usd"]  # what failed was bought
    assert "failed" not in intact


def test_degraded_run_is_slower_and_never_crosses_a_dead_cable(tmp_path):
    # 24 nodes, radix 8 at 3:1: 4 leaves of 6 NICs with a bundle of 2 up-links to one spine.
    # One of leaf0's two cables down: its 6 GPUs' traffic off the leaf crosses one cable.
    base = json.loads(run_cli("run", ALL_TO_ALL, "--json", check=True).stdout)
    failed = 'topology.failed={"links": [{"a": "leaf0", "b": "spine0", "cables": 1}]}'
    out = tmp_path / "out"
    run_cli("run", ALL_TO_ALL, "--set", failed, "--out", out, check=True)
    degraded = json.loads((out / "summary.json").read_text())
    # leaf0 sends 6 x 18 flows of 4 MiB over one 50 GB/s cable: 9.06 ms (and the route's
    # 3 us of latency), twice the intact run.
    assert degraded["traffic"]["makespan_s"] == pytest.approx(6 * 18 * 4 * 2**20 / 50e9, rel=1e-3)
    assert degraded["traffic"]["makespan_s"] == pytest.approx(2 * base["traffic"]["makespan_s"], rel=1e-3)
    assert degraded["fabric"]["failed"] == {"cables": 1, "switches": 0}
    assert degraded["fabric"]["all_to_all_bound_per_gpu_Bps"] == pytest.approx(50e9 * 24 / (6 * 18))
    flows = (out / "flows.csv").read_text()
    assert "leaf0>spine0" in flows and "spine0>leaf0" in flows


def test_training_step_on_a_degraded_fabric():
    # Mixtral 8x7B with ep 8 on 8 nodes: 8 rail leaves under one spine by bundles of 8. Six
    # of each leaf's 8 cables down: the expert all-to-alls cross a quarter of the up-links,
    # exposed communication and the step grow (3.43 -> 3.76 s measured); compute moves only by
    # its slowdown beside communication (workload.comm_compute_share), within 2%: no compute runs
    # beside the backward all-to-alls (the experts' weight gradients come before them), so the
    # longer ones slow none (7.5 -> 7.1 ms of slowdown measured, as other overlaps shift).
    path = ROOT / "scenarios" / "mixtral_8x7b_ep.json"
    links = [{"a": f"leaf{i}", "b": "spine0", "cables": 6} for i in range(8)]
    base = json.loads(run_cli("run", path, "--json", check=True).stdout)["training"]
    r = json.loads(run_cli("run", path, "--set", "topology.failed=" + json.dumps({"links": links}), "--json",
                           check=True).stdout)
    t = r["training"]
    assert r["fabric"]["failed"] == {"cables": 48, "switches": 0}
    assert abs(t["compute_s"] - base["compute_s"]) < 0.02 * base["compute_s"]
    assert t["exposed_comm_s"] > 1.2 * base["exposed_comm_s"]
    assert t["step_time_s"] > 1.05 * base["step_time_s"]
    assert t["tokens_per_s"] < base["tokens_per_s"]


def test_dragonfly_routes_around_a_dead_global_cable():
    # Group 0's cable to group 1 down: routes between them detour, and still run.
    t = json.loads(run_cli("topo", DRAGONFLY, "--json", check=True).stdout)
    assert t["kind"] == "dragonfly"
    for routing in ("minimal", "valiant", "ugal"):
        r = json.loads(run_cli("run", DRAGONFLY, "--set", "network.routing=" + routing, "--set",
                               'topology.failed={"random_links": 3, "seed": 5}', "--json",
                               check=True).stdout)
        assert r["traffic"]["flows"] == 144


@pytest.mark.parametrize("sets,path,words", [
    (['topology.failed={"switches": ["leaf0"]}'], "topology.failed", "NICs off"),
    (['topology.failed={"switches": ["spine9"]}'], "topology.failed.switches.0", "no vertex named"),
    (['topology.failed={"links": [{"a": "leaf0", "b": "leaf1"}]}'], "topology.failed.links.0", "no live fabric cable"),
    (['topology.failed={"link_mtbf": "1000h"}'], "topology.failed.window", "go together"),
    (['topology.failed={"random_links": -1}'], "topology.failed.random_links", ""),
])
def test_bad_failures_exit_2(sets, path, words):
    proc = run_cli("run", FLAGSHIP, *[a for s in sets for a in ("--set", s)])
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: " + path)
    assert words in proc.stderr


def test_dor_refuses_a_degraded_torus_and_shortest_runs():
    failed = 'topology.failed={"random_links": 1}'
    proc = run_cli("run", TORUS, "--set", failed, "--set", "network.routing=dor")
    assert proc.returncode == 2 and "error: network.routing" in proc.stderr and "shortest" in proc.stderr
    run_cli("run", TORUS, "--set", failed, "--set", "network.routing=shortest", check=True)


def test_grow_to_reports_reused_bought_and_recabled():
    g = json.loads(run_cli("topo", FLAGSHIP, "--grow-to", "topology.nodes=32", "--json", check=True).stdout)
    assert (g["from"]["gpus"], g["to"]["gpus"]) == (128, 256)
    node = next(i for i in g["items"] if i["item"] == "gpu_node")
    assert (node["have"], node["need"], node["reused"], node["bought"]) == (16, 32, 16, 16)
    assert g["bought_usd"] == pytest.approx(sum(i["bought_usd"] for i in g["items"]))
    assert g["bought_network_usd"] == pytest.approx(g["bought_usd"] - node["bought_usd"])
    assert g["switches"]["kept"] == g["from"]["switches"]
    assert g["cables"]["kept"] + g["cables"]["unplugged"] == g["from"]["fabric_cables"]
    assert g["cables"]["kept"] + g["cables"]["laid"] == g["to"]["fabric_cables"]
    text = run_cli("topo", FLAGSHIP, "--grow-to", "topology.nodes=32", check=True).stdout
    assert "bought (USD)" in text and "unplugged" in text
