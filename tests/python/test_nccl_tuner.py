"""`network.protocol: auto` chooses as NCCL's tuner does: NCCL's cost model for a ring all-reduce
(its latencies from data/nccl_tuning.json, its bus bandwidth refinements and LL's ceiling, with
the fabric's bandwidth as this simulator measures it) is restated here independently, and the
protocol it prefers is compared with the one clustersim runs, over sizes and node counts. Sizes
where NCCL's two best protocols are within 15% of each other are skipped: there the step
latency's small differences (clustersim prices a ring's steps by its edges, NCCL counts 2(k-1)
inter-node steps) may flip a near tie."""
import json

import pytest

import clustersim as cs
from conftest import ROOT

FLAGSHIP = ROOT / "scenarios" / "fat_tree_allreduce.json"
TUNING = json.loads((ROOT / "data" / "nccl_tuning.json").read_text())


def nccl_times(n_ranks, n_nodes, size, busbw_Bps, channels=8):
    """NCCL's predicted seconds per protocol for a ring all-reduce of `size` bytes (Hopper, 8 NICs
    a node: one channel each)."""
    lat = TUNING["nccl_algorithms"]["ring"]
    refine = TUNING["bandwidth_refinements"]
    ceiling = refine["ll_max_busbw_GBps"]
    ll_max = (ceiling["single_node"]["hopper"] if n_nodes == 1 else
              ceiling["two_nodes"] if n_nodes == 2 else ceiling["more_nodes"]) * 1e9
    nsteps = 2 * (n_ranks - 1)
    inter = 0 if n_nodes == 1 else 2 * (n_nodes - 1)
    intra_class = "nvlink"
    ring = refine["efficiency"]["ring"]  # LL x 1/2, LL128 x 0.92
    bw = {"simple": busbw_Bps,
          "ll": min(ll_max, ring["ll"] * busbw_Bps),
          "ll128": ring["ll128"] * busbw_Bps}
    times = {}
    for p, b in bw.items():
        c = lat[p]
        latency = (c["base_latency_us"] + (nsteps - inter) * c["step_latency_us"][intra_class]
                   + inter * c["step_latency_us"]["net"]) * 1e-6
        plateau = refine["ring_plateau"]  # ncclTopoGetAlgoTime: large Simple rings across nodes
        comm_channels = min(plateau["channels_per_ring"] * channels, plateau["max_channels"])
        if (p == "simple" and n_nodes > 1
                and size / (comm_channels * n_ranks) >= plateau["min_bytes_per_rank_and_channel"]):
            latency *= plateau["other"]
        algbw = b * n_ranks / nsteps
        times[p] = latency + size / algbw
    return times


@pytest.mark.parametrize("nodes", [1, 2, 4, 16])
def test_auto_protocol_matches_nccls_tuner(nodes):
    sc = (cs.Scenario.load(FLAGSHIP).set("network.model", "analytical")
            .set("topology.nodes", nodes))
    if nodes == 1:
        sc.set("topology", {"kind": "single_node"}).set("network.routing", "default")
    # The fabric's bus bandwidth for Simple at a size where latency is nothing.
    big = cs.run(sc.copy().set("network.protocol", "simple").set("workload.sizes", [2**36]))
    busbw = big.summary["collective"]["results"][0]["busbw_GBps"] * 1e9
    ranks = big.summary["collective"]["ranks"]
    sizes = [2**k for k in range(10, 35)]
    rows = cs.run(sc.copy().set("workload.sizes", sizes)).summary["collective"]["results"]
    compared = 0
    for size, row in zip(sizes, rows):
        t = nccl_times(ranks, nodes, size, busbw)
        best, second = sorted(t.values())[:2]
        if second < 1.15 * best:
            continue
        nccl_pick = min(t, key=t.get)
        assert row["protocol"] == nccl_pick, (nodes, size, row["protocol"], t)
        compared += 1
    assert compared >= 10
