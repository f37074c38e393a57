"""compare's decision rows: a training step as a workload, the whole cluster's cost and power
(nodes + network), the cost metrics labelled for what they are, auto's choice in the text, and
warnings where a direct fabric's links are narrower than the NICs inject. Small fabrics (128
GPUs) so that each test takes a second or two."""
import json

import pytest

from conftest import ROOT, run_cli

import clustersim as cs

FAT_TREE = ROOT / "scenarios" / "compare_fat_tree_1k.json"
DRAGONFLY = ROOT / "scenarios" / "compare_dragonfly_1k.json"
ALL_TO_ALL = ROOT / "scenarios" / "compare_all_to_all.json"

# Llama 3 8B cut to 4 layers of 1,024 tokens, tp 8 x dp 16 over the 128 GPUs.
TRAINING = {"kind": "training", "model": {"preset": "llama3-8b", "layers": 4, "seq_len": 1024},
            "parallel": {"tp": 8, "dp": 16}, "batch": {"global": 16, "micro": 1}}

# data/ownership.json: an 8 x H100-SXM node at $250,000; its power, 8 x (700 W board + 575 W host).
NODE_USD = 250_000
NODE_W = 8 * (700 + 575)


def small(tmp_path, path, name, **topology):
    doc = json.loads(path.read_text())
    doc["topology"].update(topology)
    out = tmp_path / f"{name}.json"
    out.write_text(json.dumps(doc))
    return out


@pytest.fixture
def fabrics(tmp_path):
    # 16 nodes each: the fat-tree's 128 GPUs; the dragonfly's 2 groups of 8 routers x 1 node.
    return [small(tmp_path, FAT_TREE, "fat_tree_small", nodes=16),
            small(tmp_path, DRAGONFLY, "dragonfly_small", groups=2, nodes_per_router=1)]


def test_training_step_is_a_workload_and_equals_a_plain_run(fabrics):
    cmp = cs.compare(fabrics, {"step": TRAINING}, jobs=2)
    rows = cmp.results
    assert list(rows["case"]) == ["training step", "training step"]
    for fabric_path, (_, row) in zip(fabrics, rows.iterrows()):
        sc = cs.Scenario.load(fabric_path)
        sc.set("workload", TRAINING)
        t = cs.run(sc).summary["training"]
        for key in ("step_time_s", "tokens_per_s", "exposed_comm_s", "compute_s", "mfu"):
            assert row[key] == t[key], key
        assert row["tokens_per_s"] == pytest.approx(16 * 1024 / row["step_time_s"])
        cluster = next(f for f in cmp.summary["fabrics"] if f["label"] == row["fabric"])["cluster_cost_usd"]
        assert row["tokens_per_s_per_cluster_musd"] == pytest.approx(row["tokens_per_s"] / (cluster / 1e6))
    for line in ("[step] training step", "step time (ms)", "tokens/s", "exposed communication (ms)", "MFU",
                 "tokens/s per $M of nodes + network"):
        assert line in cmp.table, line


def test_whole_cluster_cost_and_power_are_nodes_plus_network(fabrics):
    cmp = cs.compare(fabrics, jobs=2)
    for path, f in zip(fabrics, cmp.summary["fabrics"]):
        # For H100 nodes the same figures as the topology report's whole bill (its gpu_node
        # line, data/prices.json, is the same $250,000 and 10.2 kW).
        topo = json.loads(run_cli("topo", path, "--json", check=True).stdout)
        assert f["cluster_cost_usd"] == pytest.approx(topo["cost_usd"])
        assert f["cluster_power_w"] == pytest.approx(topo["power_w"])
        # The achieved down:up of each fat-tree tier, as topo reports it (none on a dragonfly).
        assert f.get("oversubscription_by_tier", []) == [t["ratio"] for t in topo.get("oversubscription_by_tier", [])]
        assert f["nodes"] == 16
        assert f["nodes_cost_usd"] == 16 * NODE_USD
        assert f["cluster_cost_usd"] == pytest.approx(16 * NODE_USD + f["network_cost_usd"])
        assert f["cluster_cost_per_gpu_usd"] == pytest.approx(f["cluster_cost_usd"] / 128)
        assert f["nodes_power_w"] == 16 * NODE_W
        assert f["cluster_power_w"] == pytest.approx(16 * NODE_W + f["network_power_w"])
    assert cmp.summary["fabrics"][0]["oversubscription_by_tier"] == [1.0]
    for line in ("nodes + network cost ($M)", "nodes + network power (kW)", "nodes + network $ per GPU",
                 "down:up by tier, leaf first"):
        assert line in cmp.table, line


def test_cost_metrics_say_what_they_divide_and_all_to_all_has_its_own(fabrics):
    cmp = cs.compare(fabrics, [FAT_TREE, ALL_TO_ALL], jobs=2)
    fab = {f["label"]: f for f in cmp.summary["fabrics"]}
    for r in cmp.summary["results"]:
        per_gpu = fab[r["fabric"]]["network_cost_per_gpu_usd"]
        assert r["network_usd_per_busbw_GBps"] == pytest.approx(per_gpu / r["busbw_GBps"])
        if r["case"].startswith("all_to_all"):
            assert r["network_usd_per_all_to_all_GBps"] == pytest.approx(per_gpu / r["algbw_GBps"])
        else:
            assert "network_usd_per_all_to_all_GBps" not in r
    for f in fab.values():
        assert f["network_usd_per_all_to_all_bound_GBps"] == pytest.approx(
            f["network_cost_per_gpu_usd"] / (f["all_to_all_bound_per_gpu_Bps"] / 1e9))
        # One all-to-all size: the fabric's delivered figure is that row's algbw.
        a2a = [r for r in cmp.summary["results"] if r["fabric"] == f["label"] and r["case"].startswith("all_to_all")]
        assert len(a2a) == 1
        assert f["all_to_all_delivered_GBps"] == a2a[0]["algbw_GBps"]
        assert f["network_usd_per_all_to_all_GBps"] == a2a[0]["network_usd_per_all_to_all_GBps"]
        # Delivered never beats the bound.
        assert f["all_to_all_delivered_GBps"] <= f["all_to_all_bound_per_gpu_Bps"] / 1e9 * (1 + 1e-9)
    for line in ("network $ / (GPU x GB/s of busbw)", "network $ / (GPU x GB/s of all-to-all bound)",
                 "all-to-all delivered (GB/s per GPU)", "network $ / (GPU x GB/s of all-to-all delivered)"):
        assert line in cmp.table, line
    # Without an all-to-all there is no delivered figure.
    plain = cs.compare(fabrics, jobs=2)
    assert "all-to-all delivered" not in plain.table
    assert all("all_to_all_delivered_GBps" not in f for f in plain.summary["fabrics"])


def test_auto_choice_is_in_the_text_table(fabrics):
    cmp = cs.compare(fabrics, jobs=2)
    auto = [r for r in cmp.summary["results"] if r["case"].endswith(" auto")]
    assert len(auto) == 2 and all(r["requested_algorithm"] == "auto" for r in auto)
    lines = cmp.table.splitlines()
    at = next(i for i, l in enumerate(lines) if l.endswith("all_reduce 1GiB auto"))
    chosen = lines[at + 1].split()
    assert chosen[:2] == ["chosen", "algorithm"]
    # Each fabric's cell: its algorithm and protocol, in column order.
    assert " ".join(chosen[2:]) == " ".join(f"{r['algorithm']} {r['protocol']}" for r in auto)
    ring = next(i for i, l in enumerate(lines) if l.endswith("all_reduce 1GiB ring"))
    assert "chosen" not in lines[ring + 1]


def test_narrow_dragonfly_local_links_and_torus_links_warn(tmp_path, fabrics):
    # The small rail dragonfly: 8 NICs on each router (one per node of its group, 8 nodes),
    # 400 GB/s against 7 local cables of 50 GB/s = 350 GB/s.
    torus = tmp_path / "torus.json"
    torus.write_text(json.dumps({
        "name": "torus", "hardware": {"gpu": "H100-SXM", "node": {"gpus": 8, "nics": 8, "nic_bandwidth": "400Gbps"}},
        "topology": {"kind": "torus", "dims": [4, 4], "link_bandwidth": "400Gbps"},
        "network": {"model": "analytical"},
        "workload": {"kind": "collective", "op": "all_reduce", "sizes": ["1MiB"]}}))
    proc = run_cli("compare", *fabrics, torus, "--workload", torus, "--json", check=True)
    warnings = {f["label"]: f["warnings"] for f in json.loads(proc.stdout)["fabrics"]}
    assert warnings["fat_tree_small"] == []
    assert len(warnings["dragonfly_small"]) == 1
    assert "350.0 GB/s" in warnings["dragonfly_small"][0] and "400.0 GB/s" in warnings["dragonfly_small"][0]
    assert len(warnings["torus"]) == 1 and "50.0 GB/s" in warnings["torus"][0]
    text = run_cli("compare", *fabrics, torus, "--workload", torus, check=True).stdout
    assert "warning: dragonfly_small: dragonfly: router" in text
    assert "warning: torus: torus: a bundle" in text
    assert cs.compare(fabrics + [torus], [torus]).fabric_warnings["torus"] == warnings["torus"]
