"""Collectives end to end: closed forms per algorithm, both network models, groups, interference."""
import json
import math

import pytest

import clustersim as cs
from conftest import run_cli

# One 8-GPU NVSwitch node: every GPU-GPU route is GPU -> NVSwitch -> GPU, two 450 GB/s links
# of 0.7 us each: alpha = 1.4 us, B = 450 GB/s.
ALPHA, B, N = 1.4e-6, 450e9, 8


def node(n=N, protocol="none", model="flow", **workload):
    doc = {
        "name": "t",
        "hardware": {"node": {"gpus": n, "fabric": "nvswitch", "gpu_bandwidth": "450GB/s",
                              "gpu_latency": "0.7us"}},
        "topology": {"kind": "single_node"},
        "network": {"model": model, "protocol": protocol},
        "workload": {"kind": "collective", **workload},
    }
    return cs.Scenario.from_json(json.dumps(doc))


def fabric(nodes=4, protocol="none", model="flow", oversubscription=1, **workload):
    """DGX-like nodes (8 GPUs, 8 NICs) on a rail-optimized 2-tier fat-tree."""
    doc = {
        "name": "t",
        "hardware": {"node": {"gpus": 8, "fabric": "nvswitch", "gpu_bandwidth": "450GB/s",
                              "gpu_latency": "0.7us", "nics": 8, "nic_bandwidth": "400Gbps"}},
        "topology": {"kind": "fat_tree", "nodes": nodes, "switch_radix": 16, "rail_optimized": True,
                     "oversubscription": oversubscription,
                     "link_bandwidth": "400Gbps", "link_latency": "0.5us"},
        "network": {"model": model, "protocol": protocol},
        "workload": {"kind": "collective", **workload},
    }
    return cs.Scenario.from_json(json.dumps(doc))


def two_switches(**workload):
    """1-GPU nodes 0, 1 under switch s0 and 2, 3 under s1; every cable 100 GB/s, no latency.
    An all_reduce of 1e9 bytes, wire only: the scenario document."""
    cable = lambda a, b: {"a": a, "b": b, "bandwidth": "100GB/s", "latency": 0}
    return {
        "name": "t",
        "hardware": {"node": {"gpus": 1, "fabric": "pcie", "nics": 1, "nic_bandwidth": "100GB/s",
                              "pcie_bandwidth": "400GB/s"}},
        "topology": {"kind": "custom", "nodes": 4, "switches": ["s0", "s1"],
                     "links": [cable("n0", "s0"), cable("n1", "s0"), cable("n2", "s1"), cable("n3", "s1"),
                               cable("s0", "s1")]},
        "network": {"protocol": "none"},
        "workload": {"kind": "collective", "op": "all_reduce", "sizes": [1e9], **workload},
    }


def times(sc):
    return [r["time_s"] for r in cs.run(sc).summary["collective"]["results"]]


S = 64 * 2**20


@pytest.mark.parametrize("op,algorithm,expected", [
    ("send_recv", "direct", lambda n: ALPHA + S / B),
    ("all_reduce", "ring", lambda n: 2 * (n - 1) * (ALPHA + S / (n * B))),
    ("reduce_scatter", "ring", lambda n: (n - 1) * (ALPHA + S / (n * B))),
    ("all_gather", "ring", lambda n: (n - 1) * (ALPHA + S / (n * B))),
    ("broadcast", "ring", lambda n: (n - 1) * ALPHA + S / B),
    ("reduce", "ring", lambda n: (n - 1) * ALPHA + S / B),
    # NCCL's tree on one node: a chain through the GPUs, up and down, for each of its two trees
    # (the same chain, S/2 each): 2(n-1) steps; a GPU inside the chain sends S/2 up and S/2
    # down in each: 2S.
    ("all_reduce", "tree", lambda n: 2 * (n - 1) * ALPHA + 2 * S / B),
    ("all_reduce", "halving_doubling",
     lambda n: 2 * math.log2(n) * ALPHA + 2 * (n - 1) / n * S / B),
    ("all_gather", "halving_doubling", lambda n: math.log2(n) * ALPHA + (n - 1) / n * S / B),
    ("reduce_scatter", "halving_doubling", lambda n: math.log2(n) * ALPHA + (n - 1) / n * S / B),
    ("all_to_all", "direct", lambda n: ALPHA + (n - 1) / n * S / B),
    ("all_reduce", "direct", lambda n: 2 * (ALPHA + (n - 1) / n * S / B)),
])
@pytest.mark.parametrize("model", ["flow", "analytical"])
def test_closed_form_on_one_node(op, algorithm, expected, model):
    ranks = 2 if op == "send_recv" else N
    sc = node(n=N, model=model, op=op, algorithm=algorithm, sizes=[S], ranks=ranks)
    assert times(sc)[0] == pytest.approx(expected(ranks), rel=1e-9)


def test_tree_latency_is_2_chain_steps_on_one_node_and_its_bandwidth_term_is_linear():
    # NCCL's tree on one node is a chain (src/graph/connect.cc), pipelined up and down: latency
    # 2(n-1) steps; time is affine in S (extrapolate two sizes to S = 0).
    for n in (4, 6, 8, 12, 16, 32):
        t1, t2, t3 = times(node(n=n, op="all_reduce", algorithm="tree", sizes=[2**20, 2**21, 2**22]))
        latency = 2 * t1 - t2
        assert latency == pytest.approx(2 * (n - 1) * ALPHA, rel=1e-6)
        assert t3 - t2 == pytest.approx(2 * (t2 - t1), rel=1e-6)
        # Bandwidth: each of the two trees moves S/2 up and S/2 down the same chain, every edge
        # at one rate: a GPU inside the chain sends four such streams, so each runs at B/4.
        per_byte = (t2 - t1) / 2**20
        assert per_byte == pytest.approx(2 / B, rel=1e-9)


def test_tiny_messages_cost_latency_n_for_ring_and_one_nodes_tree_log_n_for_hd():
    ring = {n: times(node(n=n, op="all_reduce", algorithm="ring", sizes=[8]))[0] for n in (8, 64)}
    hd = {n: times(node(n=n, op="all_reduce", algorithm="halving_doubling", sizes=[8]))[0] for n in (8, 64)}
    assert ring[64] / ring[8] == pytest.approx(63 / 7, rel=1e-3)   # 2(n-1) steps
    assert hd[64] / hd[8] == pytest.approx(6 / 3, rel=1e-3)        # 2 log2 n steps
    # NCCL's tree inside one node is a chain: 2(n-1) steps, as many as the ring's.
    tree64 = times(node(n=64, op="all_reduce", algorithm="tree", sizes=[8]))[0]
    assert tree64 == pytest.approx(ring[64], rel=1e-3)


@pytest.mark.parametrize("op,algorithm", [
    ("all_reduce", "ring"), ("reduce_scatter", "ring"), ("all_gather", "ring"),
    ("all_to_all", "direct"), ("broadcast", "ring"), ("reduce", "ring"),
    ("all_reduce", "halving_doubling"), ("send_recv", "direct")])
def test_busbw_approaches_the_link_for_large_messages(op, algorithm):
    ranks = 2 if op == "send_recv" else N
    res = cs.run(node(op=op, algorithm=algorithm, sizes=["8GiB"], ranks=ranks)).summary
    busbw = res["collective"]["results"][0]["busbw_GBps"] * 1e9
    assert 0.98 * B < busbw <= B * (1 + 1e-9)


@pytest.mark.parametrize("op,algorithm", [
    ("all_reduce", "ring"), ("all_reduce", "tree"), ("all_reduce", "halving_doubling"),
    ("all_reduce", "direct"), ("all_reduce", "hierarchical"), ("all_gather", "ring"),
    ("reduce_scatter", "hierarchical"), ("all_gather", "hierarchical"), ("broadcast", "tree"),
    ("broadcast", "hierarchical"), ("reduce", "ring"), ("all_to_all", "direct")])
@pytest.mark.parametrize("protocol", ["none", "simple", "ll128"])
def test_analytical_equals_flow_when_nothing_contends(op, algorithm, protocol):
    # 4 DGX-like nodes on a rail-optimized fat-tree. direct and all-to-all patterns contend
    # inside a node's NVSwitch ports only symmetrically, so max-min and the bottleneck agree.
    kw = dict(op=op, algorithm=algorithm, sizes=[4096, "16MiB", "1GiB"], protocol=protocol)
    flow = times(fabric(model="flow", **kw))
    analytical = times(fabric(model="analytical", **kw))
    assert analytical == pytest.approx(flow, rel=1e-2)


def test_hierarchical_is_its_phases():
    # Intra-node ring reduce_scatter + per-rail ring all_reduce of S/8 across nodes + intra
    # all_gather, each priced as its own ring.
    k, m = 4, 8
    rs = times(node(n=m, op="reduce_scatter", algorithm="ring", sizes=[S]))[0]
    inter = times(fabric(nodes=k, op="all_reduce", algorithm="ring", sizes=[S / m],
                         ranks=[j * m for j in range(k)]))[0]
    hier = times(fabric(nodes=k, op="all_reduce", algorithm="hierarchical", sizes=[S]))[0]
    assert hier == pytest.approx(2 * rs + inter, rel=1e-9)


def test_groups_run_at_once_and_each_completes():
    # 4 nodes: 8 rail groups (stride 8) of 4 ranks each: on a rail-optimized fabric each rail
    # is its own leaf, so the groups do not meet and each takes the single-group time.
    one = times(fabric(op="all_reduce", sizes=["256MiB"], ranks=[0, 8, 16, 24]))[0]
    res = cs.run(fabric(op="all_reduce", sizes=["256MiB"], groups={"size": 4, "stride": 8})).summary
    c = res["collective"]
    assert c["groups"] == 8 and c["ranks"] == 4
    assert c["results"][0]["time_s"] == pytest.approx(one, rel=1e-9)
    assert c["results"][0]["fastest_group_time_s"] == pytest.approx(one, rel=1e-9)


def test_two_allreduces_sharing_a_spine_link_slow_each_other_as_max_min_says():
    # 2:1 oversubscribed leaves, non-rail fabric: groups on different leaves cross the spine.
    doc = two_switches(ranks=[0, 2])
    alone = times(cs.Scenario.from_json(json.dumps(doc)))[0]
    # Ring of 2 over the s0-s1 cable: each direction carries S (2(n-1)/n S, n = 2): S / B.
    latency = alone - 1e9 / 100e9
    assert 0 <= latency < 1e-5
    doc["workload"]["background"] = [{"kind": "collective", "op": "all_reduce", "ranks": [1, 3],
                                      "sizes": [1e9]}]
    both = cs.run(cs.Scenario.from_json(json.dumps(doc))).summary
    # Max-min: the two rings share each direction of the spine cable equally: twice as long.
    assert both["collective"]["results"][0]["time_s"] == pytest.approx(latency + 2 * 1e9 / 100e9, rel=1e-9)
    doc["network"]["model"] = "analytical"
    an = cs.run(cs.Scenario.from_json(json.dumps(doc))).summary
    assert an["collective"]["results"][0]["time_s"] == pytest.approx(latency + 2 * 1e9 / 100e9, rel=1e-9)


def test_auto_picks_the_fastest_by_the_analytical_model():
    sizes = [8, 2**20, 2**30]
    res = cs.run(fabric(nodes=4, protocol="simple", op="all_reduce", algorithm="auto", sizes=sizes)).summary
    picked = [r["algorithm"] for r in res["collective"]["results"]]
    assert set(picked) <= {"ring", "tree"}  # what NCCL runs here (no SHARP, no NVLS declared)
    for size, alg, t in zip(sizes, picked, (r["time_s"] for r in res["collective"]["results"])):
        for other in ("ring", "tree"):
            t_other = times(fabric(nodes=4, protocol="simple", model="analytical", op="all_reduce",
                                   algorithm=other, sizes=[size]))[0]
            assert t <= t_other * 1.01, (size, alg, other)
    # Latency-bound, with the protocol free too: the tree's log-depth, not the 2(n-1)-step ring.
    small = cs.run(fabric(nodes=4, protocol="auto", op="all_reduce", algorithm="auto", sizes=[8])).summary
    assert small["collective"]["results"][0]["algorithm"] == "tree"


def test_auto_on_one_a100_node_runs_ring_at_tensor_parallel_sizes_never_direct(cli, tmp_path):
    # NCCL has no all-pairs all-reduce: on one 8 x A100 node (no NVLS) auto weighs ring and
    # tree, and ring wins from 32 MiB to 1 GiB. With NVLS declared (H100), it is NVLS.
    sizes = ["32MiB", "128MiB", "1GiB"]
    for gpu, expected in (("A100-80GB", "ring"), ("H100-SXM", "in_network")):
        doc = {"name": "t", "hardware": {"gpu": gpu, "node": {"gpus": 8}}, "topology": {"kind": "single_node"},
               "network": {"model": "analytical"},
               "workload": {"kind": "collective", "op": "all_reduce", "algorithm": "auto", "sizes": sizes}}
        path = tmp_path / f"{gpu}.json"
        path.write_text(json.dumps(doc))
        rows = json.loads(cli("run", path, "--json", check=True).stdout)["collective"]["results"]
        assert [r["algorithm"] for r in rows] == [expected] * 3, gpu
        table = cli("run", path, check=True).stdout
        assert table.count(expected) >= 3 and "direct" not in table, table


def test_several_algorithms_give_one_table_each(cli, tmp_path):
    sc = node(op="all_reduce", algorithm=["ring", "tree"], sizes={"min": 8, "max": "8GiB", "factor": 4})
    path = tmp_path / "s.json"
    path.write_text(sc.to_json())
    proc = cli("run", path, check=True)
    assert "# \"ring\"" in proc.stdout and "# \"tree\"" in proc.stdout
    summary = json.loads(cli("run", path, "--json", check=True).stdout)
    rows = summary["collective"]["results"]
    assert len(rows) == 2 * 16 and rows[0]["bytes"] == 8 and rows[15]["bytes"] == 8 * 4**15


@pytest.mark.parametrize("setting,path,needle", [
    ({"network": {"granularity": "step"}, "workload": {"algorithm": "tree"}}, "network.granularity", "ring all_reduce only"),
    ({"workload": {"algorithm": "tree", "op": "all_to_all"}}, "workload.algorithm", "tree"),
    ({"workload": {"groups": {"size": 3}}}, "workload.groups", "multiple of 3"),
    ({"workload": {"ranks": [0, 0]}}, "workload.ranks.1", "listed twice"),
    ({"workload": {"op": "send_recv", "ranks": [0, 1, 2]}}, "workload.ranks", "groups of 2"),
    ({"workload": {"algorithm": "halving_doubling", "op": "all_gather", "ranks": 6}}, "workload.algorithm", "power-of-two"),
    ({"workload": {"sizes": {"min": 1, "max": "1TB", "factor": 1.1}}}, "workload.sizes", "more than 64"),
])
def test_bad_collectives_are_input_errors(cli, tmp_path, setting, path, needle):
    doc = {"name": "t", "hardware": {"node": {"gpus": 8}}, "topology": {"kind": "single_node"},
           "workload": {"kind": "collective"}}
    for section, values in setting.items():
        doc.setdefault(section, {}).update(values)
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))
    proc = cli("run", f)
    assert proc.returncode == 2, proc.stderr
    assert f"error: {path}:" in proc.stderr and needle in proc.stderr


def test_step_and_pipeline_rings_differ_only_in_latency():
    # One node: every hop alike, the textbook ring (every step a flow) and the pipelined ring
    # take the same time. Across nodes the textbook ring pays the slowest hop every step, the
    # pipeline the mean hop; the bandwidth terms are equal.
    kw = dict(op="all_reduce", algorithm="ring", channels=1)
    for sc_of in (lambda **k: node(**k), lambda **k: fabric(nodes=2, **k)):
        pipe = times(sc_of(sizes=["64MiB", "128MiB"], **kw))
        step = times(sc_of(sizes=["64MiB", "128MiB"], **kw).set("network.granularity", "step"))
        assert step[1] - step[0] == pytest.approx(pipe[1] - pipe[0], rel=1e-9)
        assert step[0] >= pipe[0] * (1 - 1e-12)
    one_node = times(node(sizes=["64MiB"], **kw).set("network.granularity", "step"))[0]
    assert one_node == pytest.approx(times(node(sizes=["64MiB"], **kw))[0], rel=1e-9)


def test_channels_put_one_ring_on_each_rail():
    # 4 DGX-like nodes, 8 NICs of 50 GB/s: NCCL's 8 rings each leave every node on a different
    # rail, so the ring all-reduce's busbw approaches 8 x 50 GB/s; one ring gets one NIC's.
    kw = dict(op="all_reduce", algorithm="ring", sizes=["8GiB"])
    eight = cs.run(fabric(**kw)).summary["collective"]["results"][0]["busbw_GBps"]
    one = cs.run(fabric(channels=1, **kw)).summary["collective"]["results"][0]["busbw_GBps"]
    assert 0.97 * 400 < eight <= 400 * (1 + 1e-9)
    assert 0.97 * 50 < one <= 50 * (1 + 1e-9)


def test_channels_on_uneven_nodes_still_use_every_nic():
    # 12 ranks on 8-GPU nodes: 8 on node 0, 4 on node 1. NCCL's 8 rings leave node 0 from each
    # of its GPUs and node 1 twice from each of its 4: node 1's NICs carry 2/8 of the ring's
    # 2(n-1)/n S each, so busbw is 4 NICs' 4 x 50 GB/s, as with 4 ranks on each of 3 nodes
    # (4 rings, one per NIC). One ring, all through one NIC, got 50 GB/s.
    kw = dict(op="all_reduce", algorithm="ring", sizes=["8GiB"])
    for model in ("flow", "analytical"):
        uneven = cs.run(fabric(model=model, ranks=list(range(12)), **kw)).summary["collective"]["results"][0]
        even = cs.run(fabric(model=model, ranks=[0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19], **kw)).summary
        assert 0.99 * 200 < uneven["busbw_GBps"] <= 200 * (1 + 1e-9)
        assert uneven["busbw_GBps"] == pytest.approx(even["collective"]["results"][0]["busbw_GBps"], rel=1e-3)


@pytest.mark.parametrize("model", ["flow", "analytical"])
def test_multi_node_tree_runs_both_trees_on_every_rail(model):
    # 4 DGX-like nodes, 8 channels: NCCL runs trees A and B on every channel's rail, S/16 each.
    # A head relaying in one tree (S/16 up, 2 x S/16 down) is a leaf in the other (S/16 up):
    # its NIC sends S/4 at 50 GB/s, so algbw approaches 200 GB/s and busbw 200 x 2(n-1)/n.
    res = cs.run(fabric(model=model, op="all_reduce", algorithm="tree", sizes=["8GiB"])).summary
    busbw = res["collective"]["results"][0]["busbw_GBps"]
    ideal = 200 * 2 * 31 / 32
    assert 0.99 * ideal < busbw <= ideal * (1 + 1e-9)


@pytest.mark.parametrize("op", ["broadcast", "reduce"])
@pytest.mark.parametrize("model", ["flow", "analytical"])
def test_rooted_rings_stripe_over_the_channels(op, model):
    # 4 DGX-like nodes: NCCL runs broadcast and reduce as one chain per channel, each ring
    # opened at the root carrying S/8. Every NIC carries one chain's S/8 each way, so busbw
    # (= algbw) approaches 8 x 50 GB/s; with one channel one chain crosses one NIC: 50 GB/s.
    kw = dict(model=model, op=op, algorithm="ring", sizes=["8GiB"])
    eight = cs.run(fabric(**kw)).summary["collective"]["results"][0]["busbw_GBps"]
    one = cs.run(fabric(channels=1, **kw)).summary["collective"]["results"][0]["busbw_GBps"]
    assert 0.99 * 400 < eight <= 400 * (1 + 1e-9)
    assert 0.99 * 50 < one <= 50 * (1 + 1e-9)


def test_channels_spread_over_the_nics_when_gpus_outnumber_them():
    # 8 GPUs and 4 or 2 NICs per node: the default channels (one per NIC) enter and leave
    # every node on different NICs, so busbw approaches all the NICs' bandwidth.
    for nics in (4, 2):
        sc = fabric(op="all_reduce", algorithm="ring", sizes=["8GiB"]).set("hardware.node.nics", nics)
        busbw = cs.run(sc).summary["collective"]["results"][0]["busbw_GBps"]
        assert 0.97 * 50 * nics < busbw <= 50 * nics * (1 + 1e-9), nics


def test_link_usage_in_summary_csv_and_dataframe(cli, tmp_path):
    sc = fabric(op="all_reduce", sizes=["1GiB"])
    res = cs.run(sc)
    links = res.summary["links"]
    assert links["links_used"] > 0 and 0 < links["busy_share_max"] <= 1
    hottest = links["hottest"]
    assert len(hottest) == 10
    assert [h["busy_share"] for h in hottest] == sorted((h["busy_share"] for h in hottest), reverse=True)
    df = res.links
    assert len(df) == links["links_used"]
    assert {"link", "from", "to", "kind", "bytes", "busy_s", "peak_utilization"} <= set(df.columns)
    # Every byte of a 1 GiB ring all-reduce over 32 ranks crosses each NIC uplink it uses:
    # 8 rings x 2(n-1)/n x S/8 per rank's send edge.
    nic_up = df[df["kind"] == "fabric"]
    assert nic_up["peak_utilization"].max() == pytest.approx(1.0, rel=1e-9)
    # The CLI writes the same table and names the hottest links.
    path = tmp_path / "s.json"
    path.write_text(sc.to_json())
    proc = cli("run", path, "--out", tmp_path / "out", check=True)
    assert "hottest links:" in proc.stdout
    csv = (tmp_path / "out" / "links.csv").read_text().splitlines()
    assert csv[0].startswith("link,from,to,kind") and len(csv) == links["links_used"] + 1


def test_analytical_link_busy_time_matches_the_flow_model_for_large_messages():
    kw = dict(op="all_reduce", sizes=["4GiB"], protocol="none")
    flow = cs.run(fabric(**kw)).links.set_index("link")
    an = cs.run(fabric(model="analytical", **kw)).links.set_index("link")
    assert set(flow.index) == set(an.index)
    assert an["bytes"].sort_index().values == pytest.approx(flow["bytes"].sort_index().values, rel=1e-9)
    # On the bottleneck (the most bytes per capacity: a NIC link, busy at full rate) the
    # analytical busy time (load / capacity) is the flow model's busy time.
    bottleneck = (flow["bytes"] / flow["capacity_Bps"]).idxmax()
    assert flow.loc[bottleneck, "peak_utilization"] == pytest.approx(1.0)
    assert an.loc[bottleneck, "busy_s"] == pytest.approx(flow.loc[bottleneck, "busy_s"], rel=1e-3)


def test_in_network_all_reduce_moves_s_each_way_in_one_step():
    # NVLS: the NVSwitch reads every GPU's S to reduce it and multicasts the reduced shards:
    # each GPU sends S + S/n up and receives S/n + S down, in one step: alpha + (n+1)/n S/B,
    # where a ring needs 2(n-1)/n S per GPU over 2(n-1) steps. (Wire only: with NCCL's tables
    # NVLS also runs at its efficiency, 0.85 on Hopper.)
    for model in ("flow", "analytical"):
        t = times(node(model=model, op="all_reduce", algorithm="in_network", sizes=[S]))[0]
        assert t == pytest.approx(ALPHA + (N + 1) / N * S / B, rel=1e-9)
    # auto prefers it for every size on an NVLS node
    res = cs.run(node(op="all_reduce", algorithm="auto", sizes=[8, S])).summary
    assert [r["algorithm"] for r in res["collective"]["results"]] == ["in_network", "in_network"]


def test_in_network_across_nodes_needs_sharp(cli, tmp_path):
    sc = fabric(op="all_reduce", algorithm="in_network", sizes=["1GiB"])
    path = tmp_path / "s.json"
    path.write_text(sc.to_json())
    proc = cli("run", path)
    assert proc.returncode == 2 and "error: workload.algorithm:" in proc.stderr and "SHARP" in proc.stderr
    sharp = cs.run(sc.copy().set("topology.sharp", True)).summary["collective"]["results"][0]
    ring = cs.run(fabric(op="all_reduce", algorithm="ring", sizes=["1GiB"])).summary["collective"]["results"][0]
    # SHARP halves what crosses each NIC (each rail's S/8 each way against the ring's
    # 2(n-1)/n S/8): nearly twice as fast.
    assert 1.8 < ring["time_s"] / sharp["time_s"] < 2.0
    no_nvls = fabric(op="all_reduce", algorithm="in_network").set("hardware.node.fabric", "pcie")
    path.write_text(no_nvls.set("topology.sharp", True).to_json())
    proc = cli("run", path)
    assert proc.returncode == 2 and "NVLS" in proc.stderr


def test_sharp_time_does_not_depend_on_the_order_of_the_ranks():
    # 1-GPU nodes 0, 1 under switch s0 and 2, 3 under s1, one 100 GB/s cable between them.
    # SHARP sends S up and S down per switch: every link carries S each way, S/B + latency,
    # in any rank order; a ring in the list's order [0, 2, 1, 3] used to cross s0-s1 twice
    # each way and take twice as long.
    doc = two_switches(algorithm="in_network", ranks=[0, 1, 2, 3])
    doc["topology"]["sharp"] = True
    for model in ("flow", "analytical"):
        doc["network"]["model"] = model
        sorted_time = times(cs.Scenario.from_json(json.dumps(doc)))[0]
        assert 0 <= sorted_time - 1e9 / 100e9 < 1e-5
        for ranks in ([0, 2, 1, 3], [3, 1, 2, 0], [2, 0, 3, 1]):
            doc["workload"]["ranks"] = ranks
            assert times(cs.Scenario.from_json(json.dumps(doc)))[0] == pytest.approx(sorted_time, rel=1e-12)
        doc["workload"]["ranks"] = [0, 1, 2, 3]


def test_protocol_auto_picks_the_fastest_protocol_per_size():
    sizes = [8, 2**20, 2**30]
    picked = cs.run(fabric(protocol="auto", op="all_reduce", algorithm="ring", sizes=sizes)).summary
    rows = picked["collective"]["results"]
    for row, size in zip(rows, sizes):
        per_protocol = {p: times(fabric(protocol=p, op="all_reduce", algorithm="ring", sizes=[size]))[0]
                        for p in ("ll", "ll128", "simple")}
        assert row["time_s"] == pytest.approx(min(per_protocol.values()), rel=1e-9)
        assert row["protocol"] == min(per_protocol, key=per_protocol.get)
    assert rows[0]["protocol"] == "ll"          # latency-bound: NCCL's LL
    assert rows[-1]["protocol"] != "ll"         # LL halves the bandwidth
