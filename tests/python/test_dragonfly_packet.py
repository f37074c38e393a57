"""Valiant and UGAL per packet on dragonflies (network.routing = valiant_packet, ugal_packet)
through the CLI."""
import json

import pytest

from conftest import ROOT, run_cli

DRAGONFLY = ROOT / "scenarios" / "dragonfly_group_shift.json"
FLAGSHIP = ROOT / "scenarios" / "fat_tree_allreduce.json"


def makespan(*sets):
    args = [a for s in sets for a in ("--set", s)]
    return json.loads(run_cli("run", DRAGONFLY, *args, "--json", check=True).stdout)["traffic"]["makespan_s"]


def test_group_shift_at_the_per_packet_bound():
    # 9 groups of 16 GPUs (8 nodes of 2 GPUs, one 400G NIC each), one global cable per group
    # pair: every GPU sends 16 MB to the next group. Per packet, a group's flows spread over
    # the 7 intermediate groups; each global cable carries 2/7 of a group's injection, so a
    # GPU moves at 7 x 50 GB/s / (2 x 16) = 10.9 GB/s (a node 7/16 of its NIC): 1.463 ms and
    # the routes' few us of latency. Per flow, Valiant and UGAL leave cables doubly loaded.
    packet = makespan("network.routing=valiant_packet")
    assert packet == pytest.approx(16e6 / (7 * 50e9 / 32), rel=5e-3)
    assert packet < makespan("network.routing=ugal") < makespan("network.routing=minimal")


def test_group_shift_per_packet_on_a_degraded_fabric():
    # Two router cables down at random: the lanes through them take live detours (every
    # flow completes), and the shift runs no faster than on the intact fabric.
    failed = 'topology.failed={"random_links": 2, "seed": 3}'
    out = json.loads(run_cli("run", DRAGONFLY, "--set", "network.routing=valiant_packet", "--set", failed,
                             "--json", check=True).stdout)
    assert out["fabric"]["failed"] == {"cables": 2, "switches": 0}
    assert out["traffic"]["completed"] == out["traffic"]["flows"] == 144
    assert out["traffic"]["makespan_s"] >= makespan("network.routing=valiant_packet") * (1 - 1e-9)


def test_flows_csv_lists_every_lane(tmp_path):
    # GPU 0 (node 0, group 0) to GPU 16 (node 8, group 1): 7 paths, one through each of
    # groups 2 to 8, separated by "|".
    run_cli("run", DRAGONFLY, "--set", "network.routing=valiant_packet", "--out", tmp_path, check=True)
    first = (tmp_path / "flows.csv").read_text().splitlines()[1].split(",")
    lanes = first[-1].split("|")
    assert len(lanes) == 7
    assert all(lane.startswith("n0.gpu0>n0>g0.") and lane.endswith(">n8>n8.gpu0") for lane in lanes)
    for via, lane in zip(range(2, 9), lanes):
        assert any(v.startswith(f"g{via}.") for v in lane.split(">"))


def test_group_shift_adaptive_per_packet():
    # ugal_packet: each flow in 4 parts, each minimal or spread over the 7 intermediate groups
    # by the queues it sees; the 144 flows start together and settle their splits together.
    # Measured 1.206 ms, 18% below valiant_packet's 1.468 (one flow after another, the last
    # flows found the detours loaded: 1.593, 8.5% above), at least the best split's 2 I / g per
    # cable (1.138 ms), far below ugal's 2.56; with 800G local links 1.148 ms. Both models alike.
    packet = makespan("network.routing=valiant_packet")
    adaptive = makespan("network.routing=ugal_packet")
    assert 16e6 / (9 * 50e9 / 32) < adaptive < 1.05 * packet
    assert makespan("network.routing=ugal_packet", "network.model=analytical") == pytest.approx(adaptive, rel=1e-9)
    assert adaptive < 0.7 * makespan("network.routing=ugal")
    faster_local = ["topology.link_bandwidth=800Gbps"]
    assert makespan("network.routing=ugal_packet", *faster_local) < 0.85 * makespan("network.routing=valiant_packet", *faster_local)


def test_group_shift_adaptive_per_packet_on_a_degraded_fabric():
    failed = 'topology.failed={"random_links": 2, "seed": 3}'
    out = json.loads(run_cli("run", DRAGONFLY, "--set", "network.routing=ugal_packet", "--set", failed,
                             "--json", check=True).stdout)
    assert out["traffic"]["completed"] == out["traffic"]["flows"] == 144


@pytest.mark.parametrize("routing", ["valiant_packet", "ugal_packet"])
def test_per_packet_needs_a_dragonfly(routing):
    proc = run_cli("run", FLAGSHIP, "--set", f"network.routing={routing}", check=False)
    assert proc.returncode == 2
    assert "network.routing" in proc.stderr and "dragonfly" in proc.stderr
