"""clustersim compare / cs.compare: the same workloads on several fabrics, side by side. Each
pair's numbers are exactly what `clustersim run` gives for that fabric with that workload."""
import json

import pytest

from conftest import ROOT, run_cli

import clustersim as cs

FAT_TREE = ROOT / "scenarios" / "compare_fat_tree_1k.json"
DRAGONFLY = ROOT / "scenarios" / "compare_dragonfly_1k.json"
ALL_TO_ALL = ROOT / "scenarios" / "compare_all_to_all.json"
SMALL = ["--set", "topology.nodes=16"]  # 128 GPUs on the fat-tree


def small_dragonfly(tmp_path):
    """The dragonfly file at 128 GPUs (2 groups of 8 routers x 4 nodes... 1 group: 16 nodes)."""
    doc = json.loads(DRAGONFLY.read_text())
    doc["topology"].update({"groups": 2, "nodes_per_router": 1})
    path = tmp_path / "dragonfly_small.json"
    path.write_text(json.dumps(doc))
    return path


def small_fat_tree(tmp_path):
    doc = json.loads(FAT_TREE.read_text())
    doc["topology"]["nodes"] = 16
    path = tmp_path / "fat_tree_small.json"
    path.write_text(json.dumps(doc))
    return path


def test_each_pair_equals_a_plain_run_of_that_fabric_with_that_workload(tmp_path):
    fabrics = [small_fat_tree(tmp_path), small_dragonfly(tmp_path)]
    proc = run_cli("compare", *fabrics, "--workload", fabrics[0], "--workload", ALL_TO_ALL, "--json", "-j", "2",
                   check=True)
    comparison = json.loads(proc.stdout)
    assert [f["label"] for f in comparison["fabrics"]] == ["fat_tree_small", "dragonfly_small"]
    assert [f["topology"] for f in comparison["fabrics"]] == ["fat_tree", "dragonfly"]
    assert [f["routing"] for f in comparison["fabrics"]] == ["dmodk", "ugal"]
    workloads = {"fat_tree_small": json.loads(fabrics[0].read_text())["workload"],
                 "compare_all_to_all": json.loads(ALL_TO_ALL.read_text())["workload"]}
    by_pair = {}
    for row in comparison["results"]:
        by_pair.setdefault((row["fabric"], row["workload"]), []).append(row)
    assert len(by_pair) == 4
    for fabric_path, fabric in zip(fabrics, comparison["fabrics"]):
        for label, workload in workloads.items():
            sc = cs.Scenario.load(fabric_path)
            sc.set("workload", workload)
            summary = cs.run(sc).summary
            rows = by_pair[(fabric["label"], label)]
            assert [r["time_s"] for r in rows] == [r["time_s"] for r in summary["collective"]["results"]]
            assert [r["busbw_GBps"] for r in rows] == [r["busbw_GBps"] for r in summary["collective"]["results"]]
            # The fabric block is the run's, with its counts.
            for key in ("gpus", "switches", "copper_cables", "optical_cables", "aoc_cables", "fiber_cables",
                        "network_cost_usd", "bisection_bandwidth_Bps"):
                assert fabric[key] == summary["fabric"][key]
    # The counts agree with the topology report.
    report = cs.Topology.from_scenario(cs.Scenario.load(fabrics[1])).report
    assert comparison["fabrics"][1]["switches"] == report["switches"]
    assert comparison["fabrics"][1]["optical_cables"] == report["cables"]["optical"]
    assert comparison["fabrics"][1]["aoc_cables"] == report["cables"]["aoc"]
    assert comparison["fabrics"][1]["fiber_cables"] == report["cables"]["fiber"]


def test_table_lists_every_fabric_and_case_and_python_gives_the_same(tmp_path):
    fabrics = [small_fat_tree(tmp_path), small_dragonfly(tmp_path)]
    proc = run_cli("compare", *fabrics, check=True)
    text = proc.stdout
    header = text.splitlines()[0].split()
    assert header == ["fat_tree_small", "dragonfly_small"]
    for line in ("GPUs", "switches", "cables copper / AOC / fiber", "network cost ($M)", "network power (kW)",
                 "bisection (TB/s)", "[fat_tree_small] all_reduce 1GiB ring", "[fat_tree_small] all_reduce 1GiB auto",
                 "busbw (GB/s)", "network $ / (GPU x GB/s of busbw)"):
        assert line in text, line
    cmp = cs.compare(fabrics, jobs=1)
    assert cmp.table == text
    assert list(cmp.fabrics["label"]) == ["fat_tree_small", "dragonfly_small"]
    assert set(cmp.results["case"]) == {"all_reduce 1GiB ring", "all_reduce 1GiB auto"}
    cli_json = json.loads(run_cli("compare", *fabrics, "--json", check=True).stdout)
    assert cmp.summary == cli_json
    # Labels from a dict; workloads as dicts.
    again = cs.compare({"a": fabrics[0], "b": fabrics[1]},
                       {"ring": {"kind": "collective", "op": "all_reduce", "algorithm": "ring", "sizes": ["1GiB"]}})
    assert list(again.results["fabric"]) == ["a", "b"]
    assert list(again.results["time_s"]) == [r["time_s"] for r in cli_json["results"] if r["case"].endswith("ring")]


def test_same_result_for_any_jobs(tmp_path):
    fabrics = [small_fat_tree(tmp_path), small_dragonfly(tmp_path)]
    one = run_cli("compare", *fabrics, "--workload", ALL_TO_ALL, "--json", "-j", "1", check=True).stdout
    two = run_cli("compare", *fabrics, "--workload", ALL_TO_ALL, "--json", "-j", "2", check=True).stdout
    assert one == two


def test_traffic_workloads_compare_by_makespan(tmp_path):
    fabrics = [small_fat_tree(tmp_path), small_dragonfly(tmp_path)]
    cmp = cs.compare(fabrics, [{"kind": "traffic", "pattern": "permutation", "shift": 8, "bytes": "16MB"}])
    rows = cmp.results
    assert list(rows["case"]) == ["traffic", "traffic"]
    assert (rows["makespan_s"] > 0).all()
    assert "makespan (us)" in cmp.table


def test_bad_inputs_name_the_path_and_the_fabric(tmp_path):
    fabrics = [small_fat_tree(tmp_path), small_dragonfly(tmp_path)]
    proc = run_cli("compare", *fabrics, "--set", "topology.switch_radix=-1")
    assert proc.returncode == 2
    assert "error: topology.switch_radix:" in proc.stderr and "fabric fat_tree_small" in proc.stderr
    assert proc.stdout == ""
    run_file = ROOT / "scenarios" / "training_run_by_hand.json"
    proc = run_cli("compare", *fabrics, "--workload", run_file)
    assert proc.returncode == 2
    assert "error: workload.kind: collective, traffic or training" in proc.stderr
    proc = run_cli("compare", *fabrics, "--workload", tmp_path / "missing.json")
    assert proc.returncode == 2
    with pytest.raises(cs.ScenarioError, match="workload.kind"):
        cs.compare(fabrics, [{"kind": "training_run", "step_time": "1s", "steps": 10}])
