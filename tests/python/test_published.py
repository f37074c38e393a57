"""clustersim against published nccl-tests measurements and NCCL's own tuning model.

Each case is a scenario with catalog defaults only (the GPU sets the node fabric: NCCL's
NVLink rate, NVLS efficiency), the figure someone measured, and where it was published. The
tolerances are the gap we claim in the README; a model change that widens it fails here.
"""
import json

import pytest

import clustersim as cs


def collective(gpu, nodes=1, nics=None, nic="400Gbps", algorithm="ring", sizes=("8GiB",), protocol="auto",
               op="all_reduce"):
    node = {"gpus": 8}
    topology = {"kind": "single_node"}
    if nodes > 1:
        node.update({"nics": nics or 8, "nic_bandwidth": nic})
        topology = {"kind": "fat_tree", "nodes": nodes, "switch_radix": 64, "rail_optimized": True,
                    "link_bandwidth": nic, "link_latency": "0.5us"}
    doc = {"name": "published", "hardware": {"gpu": gpu, "node": node}, "topology": topology,
           "network": {"model": "analytical", "protocol": protocol},
           "workload": {"kind": "collective", "op": op, "algorithm": algorithm, "sizes": list(sizes)}}
    return cs.run(cs.Scenario.from_json(json.dumps(doc))).summary["collective"]["results"]


# (what, rows, measured low, measured high, tolerance, source)
BUSBW = [
    ("8 x H100 SXM, ring, 8 GiB", lambda: collective("H100-SXM"), 365, 370, 0.03,
     "NVIDIA/nccl issue 1455 (ALGO=RING busbw 365-370 GB/s on 2-8 GPUs); nccl-tests issue 212 (370 GB/s)"),
    ("8 x H100 SXM, NVLS, 8 GiB", lambda: collective("H100-SXM", algorithm="in_network"), 476, 480, 0.03,
     "Azure ND H100 v5 all_reduce_perf, NCCL 2.18.5 (478.87 GB/s); nccl-tests issue 212 (~480 GB/s)"),
    ("8 x A100 SXM, ring, 8 GiB", lambda: collective("A100-80GB"), 230, 232.5, 0.04,
     "Azure ND A100 v4 all_reduce_perf (231.58 GB/s); nccl-tests issue 175 (232.54 GB/s)"),
    ("4 x DGX A100, 8 x 200G IB, ring, 8 GiB", lambda: collective("A100-80GB", nodes=4, nic="200Gbps"), 192, 192,
     0.05, "NVIDIA/nccl issue 812 via 1576: 8 x 200 Gb/s IB per node measure 192 GB/s AllReduce busbw"),
    ("4 x DGX H100, 8 x 400G NDR, ring, 8 GiB", lambda: collective("H100-SXM", nodes=4), 8 * 46, 8 * 48, 0.04,
     "nccl-tests issue 290: 46-48 GB/s per NDR NIC"),
]


@pytest.mark.parametrize("what,rows,low,high,tolerance,source", BUSBW, ids=[c[0] for c in BUSBW])
def test_large_message_busbw_within_tolerance_of_published(what, rows, low, high, tolerance, source):
    busbw = rows()[-1]["busbw_GBps"]
    assert low * (1 - tolerance) <= busbw <= high * (1 + tolerance), (what, busbw, source)


def test_small_message_latency_matches_nccl_model_and_is_near_measured():
    # NCCL's tuner prices a ring LL all_reduce on 8 NVLink GPUs at baseLat 6.6 us + 2(n-1)
    # steps of 0.6 us = 15.0 us (tuning.cc, NCCL 2.20.3); the catalog's NVLink wire (0.3 us
    # each way) fits under that step, so clustersim gives NCCL's figure exactly. Measured on
    # an 8-GPU Hopper NVSwitch node (H20, deepseek-ai/DeepEP issue 303): 12.49 us at 8 B.
    rows = collective("H100-SXM", sizes=[8], protocol="ll")
    assert rows[0]["time_s"] == pytest.approx(15.0e-6, rel=1e-4)  # + 8 B of bandwidth
    assert 12.49e-6 <= rows[0]["time_s"] <= 1.25 * 12.49e-6


# A published nccl-tests all_reduce_perf run of two GPUs that cannot reach each other (RTX 2080
# Ti x 2 behind one PCIe Gen3 x16 switch, `nvidia-smi topo -p2p` "NS": NCCL's SHM transport
# through host memory), out-of-place times in us by size: Anthony-Hoo/Anthony-Hoo.github.io,
# posts/AutoDL_Multi-GPU_Interconnection_Test.md (2025-06-05). Not the box the SHM share
# (0.248 of the PCIe rate, NVIDIA/nccl issue 384) was taken from.
SHM_ALL_REDUCE_US = {8192: 13.07, 16384: 17.11, 65536: 40.10, 131072: 56.90, 1048576: 279.5,
                     16777216: 4209.7, 134217728: 33587.0}


def test_all_reduce_staged_through_host_memory_matches_a_published_run():
    """Two GPUs without P2P on PCIe Gen3 x16 (15.75 GB/s): from 8 KB to 128 MB the model (NCCL's
    PCI latencies, the SHM share of the link) is within 10% of the measured times; below, NCCL's
    launch floor (12 us measured at 8 B against 8.6 us) is not all modelled."""
    doc = {"name": "shm", "hardware": {"gpu": "T4", "node": {"gpus": 2, "fabric": "pcie",
                                                             "pcie_bandwidth": "15.75GB/s", "p2p": False}},
           "topology": {"kind": "single_node"}, "network": {"model": "analytical"},
           "workload": {"kind": "collective", "op": "all_reduce", "algorithm": "auto",
                        "sizes": list(SHM_ALL_REDUCE_US)}}
    rows = cs.run(cs.Scenario.from_json(json.dumps(doc))).summary["collective"]["results"]
    for row in rows:
        measured = SHM_ALL_REDUCE_US[int(row["bytes"])] * 1e-6
        assert row["time_s"] == pytest.approx(measured, rel=0.10), row


# NCCL's all_gather on 8 H100 SXM over NVSwitch (Azure ND H100 v5, NCCL 2.18.3, fp16, in-place), us
# by total size: the NCCL column of Azure/msccl's docs/performance-nd-h100-v5.md. These are the
# sizes of a tensor-parallel all-gather under sequence parallelism (docs/training.md, one layer).
H100_ALL_GATHER_US = {32 << 20: 104.7, 64 << 20: 192.4, 128 << 20: 368.3, 256 << 20: 699.5,
                      512 << 20: 1358.6, 1 << 30: 2663.8}


def test_h100_ring_all_gather_at_tensor_parallel_sizes_matches_a_published_run():
    """The ring at NCCL's NVLink rating and Simple latency is within 7% of the measured times from
    32 MB to 1 GB (measured over simulated 0.94 at 32 MB to 1.06 at 128 MB)."""
    rows = collective("H100-SXM", sizes=list(H100_ALL_GATHER_US), op="all_gather")
    for row in rows:
        measured = H100_ALL_GATHER_US[int(row["bytes"])] * 1e-6
        assert row["time_s"] == pytest.approx(measured, rel=0.07), row
