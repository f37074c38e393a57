"""Collectives on Trainium1 against AWS's published nccom-test runs (Neuron SDK 2.10's
tools/neuron-sys-tools/nccom-test.rst in aws-neuron/aws-neuron-sdk): the chip runs Neuron's
collectives library, whose latency terms (sim/network/neuron_ccom.cpp) come from these tables'
small-message rows, and NeuronLink at the catalog's rate. A rank is a NeuronCore, as nccom-test
counts them: a node of 2 or 32 ranks on a ring of NeuronLinks.
"""
import json

import pytest

import clustersim as cs

KIB = 1024


def neuron_collective(ranks, op, sizes, nodes=1):
    # nccom-test's 2-rank plateau, 52.8 GB/s of bus bandwidth, is one NeuronLink-v2 (51.5 GB/s a
    # direction, the catalog's per-link rate): a rank's ring neighbour over one link.
    node = {"gpus": ranks, "mesh": "ring", "gpu_bandwidth": "51.5GB/s"}
    topology = {"kind": "single_node"}
    if nodes > 1:
        node.update({"nics": 8, "nic_bandwidth": "100Gbps"})
        topology = {"kind": "fat_tree", "nodes": nodes, "switch_radix": 64, "link_bandwidth": "100Gbps"}
    doc = {"name": "nccom-test", "hardware": {"gpu": "Trainium1", "node": node}, "topology": topology,
           "network": {"model": "analytical"},
           "workload": {"kind": "collective", "op": op, "algorithm": "ring", "sizes": list(sizes)}}
    rows = cs.run(cs.Scenario.from_json(json.dumps(doc))).summary["collective"]["results"]
    return {int(r["bytes"]): r["time_s"] * 1e6 for r in rows}


# nccom-test -r 2 allr, trn1.32xlarge, fp32: size (B) -> time (us)
ALL_REDUCE_2 = {1 * KIB: 58, 4 * KIB: 58, 16 * KIB: 58, 64 * KIB: 58, 256 * KIB: 60, 1024 * KIB: 68,
                4096 * KIB: 107, 16384 * KIB: 332, 65536 * KIB: 1214, 262144 * KIB: 4750, 1048576 * KIB: 18930}
# nccom-test -r 32 allg, trn1.32xlarge, fp32
ALL_GATHER_32 = {1 * KIB: 151, 8 * KIB: 149, 64 * KIB: 150, 512 * KIB: 179}
# nccom-test -r 64 -N 2 allr, two trn1.32xlarge over EFA, fp32: the latency floor (8-64 B)
ALL_REDUCE_64_ON_2 = {8: 520, 16: 520, 32: 523, 64: 525}


def test_small_messages_replay_the_latency_floor_the_constants_come_from():
    """The rows the two NeuronLink terms are fitted to, within 3% (58 us at 2 ranks, 150 at 32)."""
    two = neuron_collective(2, "all_reduce", [s for s in ALL_REDUCE_2 if s <= 64 * KIB])
    thirty_two = neuron_collective(32, "all_gather", list(ALL_GATHER_32)[:3])
    for table, simulated in ((ALL_REDUCE_2, two), (ALL_GATHER_32, thirty_two)):
        for size, us in simulated.items():
            assert us == pytest.approx(table[size], rel=0.03), (size, us)


def test_two_instance_floor_replays_within_five_percent():
    simulated = neuron_collective(32, "all_reduce", list(ALL_REDUCE_64_ON_2), nodes=2)
    for size, us in simulated.items():
        assert us == pytest.approx(ALL_REDUCE_64_ON_2[size], rel=0.05), (size, us)


def test_mid_and_large_messages_are_within_the_stated_tolerance():
    """Not fitted: 256 KiB to 1 GiB at 2 ranks and 512 KiB at 32 ranks. TOLERANCE holds the
    largest gap measured: x1.30 at 4 MiB (139.5 us simulated, 107 measured), x1.10 at 1 GiB; the
    32-rank 512 KiB all-gather 155 us for 179 (docs/network.md states the table)."""
    two = neuron_collective(2, "all_reduce", [s for s in ALL_REDUCE_2 if s > 64 * KIB])
    for size, us in two.items():
        assert us == pytest.approx(ALL_REDUCE_2[size], rel=TOLERANCE), (size, us)
    thirty_two = neuron_collective(32, "all_gather", [512 * KIB])
    assert thirty_two[512 * KIB] == pytest.approx(ALL_GATHER_32[512 * KIB], rel=TOLERANCE)


TOLERANCE = 0.31


def test_gpus_keep_nccl_latencies():
    doc = {"name": "h100", "hardware": {"gpu": "H100-SXM", "node": {"gpus": 2}}, "topology": {"kind": "single_node"},
           "network": {"model": "analytical", "protocol": "simple"},
           "workload": {"kind": "collective", "op": "all_reduce", "algorithm": "ring", "sizes": [1024]}}
    row = cs.run(cs.Scenario.from_json(json.dumps(doc))).summary["collective"]["results"][0]
    # NCCL's ring Simple: base 8.4 us + 2 steps x 3.4 us over NVLink, plus the wire's bytes.
    assert row["time_s"] * 1e6 == pytest.approx(8.4 + 2 * 3.4, rel=0.02)
