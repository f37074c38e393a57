"""Collectives sharing a fabric: both network models, background workloads, run.until cuts,
replications, and how the CLI shows auto's choices."""
import json

import pytest

import clustersim as cs
from conftest import ROOT

INTERFERENCE = ROOT / "scenarios" / "multi_job_interference.json"


def results(summary):
    """Times of the rows, in order."""
    return [r["time_s"] for r in summary["collective"]["results"]]


def fabric(model="flow", **workload):
    """8 single-GPU nodes on leaves of 3 with one up-link each (radix 4, 3:1)."""
    doc = {
        "name": "t",
        "hardware": {"node": {"gpus": 1, "nics": 1, "nic_bandwidth": "50GB/s"}},
        "topology": {"kind": "fat_tree", "nodes": 12, "switch_radix": 4, "oversubscription": 3,
                     "link_bandwidth": "50GB/s", "link_latency": "0.5us"},
        "network": {"model": model, "protocol": "simple"},
        "workload": {"kind": "collective", "op": "all_reduce", "sizes": [1e8, 1e9], **workload},
    }
    return cs.Scenario.from_json(json.dumps(doc))


@pytest.mark.parametrize("algorithm", ["ring", "halving_doubling", "direct", "tree"])
def test_identical_groups_sharing_uplinks_agree_in_both_models(algorithm):
    # Groups {0,3,6,9}, {1,4,7,10}, {2,5,8,11}: one member per leaf, so every stage of every
    # group crosses the leaves' single up-links beside the same stage of the others.
    kw = dict(algorithm=algorithm, groups={"size": 4, "stride": 3})
    flow = cs.run(fabric(**kw)).summary
    an = cs.run(fabric(model="analytical", **kw)).summary
    assert results(an) == pytest.approx(results(flow), rel=1e-9)
    alone = cs.run(fabric(model="analytical", algorithm=algorithm, ranks=[0, 3, 6, 9])).summary
    assert all(b > 1.5 * a for a, b in zip(results(alone), results(an)))


def test_background_runs_the_same_way_in_both_models():
    # The interference scenario: a ring all-reduce (one flow per channel) beside a repeating
    # all-to-all (many flows) under ECMP. The analytical stage fluid shares each link by flow
    # count, as max-min does, so the two models agree here; the background repeats in both.
    sc = cs.Scenario.load(str(INTERFERENCE))
    flow = cs.run(sc).summary
    an = cs.run(sc.copy().set("network.model", "analytical")).summary
    assert results(an) == pytest.approx(results(flow), rel=1e-6)
    bf, ba = flow["collective"]["background"][0], an["collective"]["background"][0]
    assert ba["completed"] == bf["completed"] > 1
    assert ba["mean_time_s"] == pytest.approx(bf["mean_time_s"], rel=1e-6)
    # Link shares stay shares: busy time is the time some bytes crossed, never more.
    assert 0 < an["links"]["busy_share_max"] <= 1 + 1e-9
    assert an["events"] < flow["events"] / 5  # stage boundaries, not flows


def test_background_traffic_runs_once_in_both_models():
    doc = json.loads(fabric().to_json())
    doc["workload"]["sizes"] = [1e9, 1e9, 1e9]
    doc["workload"]["ranks"] = [0, 3]
    doc["workload"]["background"] = [{"kind": "traffic", "pattern": "flows",
                                      "flows": [{"src": 1, "dst": 4, "bytes": 1e9, "start": 0}]}]
    out = {}
    for model in ("flow", "analytical"):
        doc["network"]["model"] = model
        out[model] = cs.run(cs.Scenario.from_json(json.dumps(doc))).summary
    flow, an = (results(out[m]) for m in ("flow", "analytical"))
    assert an == pytest.approx(flow, rel=1e-9)
    # The 1 GB flow shares the up-link with the first size only: it is slower than the others.
    assert flow[0] > 1.5 * flow[1] and flow[1] == pytest.approx(flow[2], rel=1e-9)
    for s in out.values():
        assert s["collective"]["background"][-1] == {"kind": "traffic", "flows": 1, "completed": 1}


def test_run_until_cuts_sizes_and_replications_combine_what_all_reached():
    sc = cs.Scenario.load(str(INTERFERENCE)).set("run.until", 0.1)
    one = cs.run(sc).summary["collective"]
    assert len(one["results"]) == 1 and one["sizes_not_run"] == 1
    # ECMP hashes differ by seed: some replications reach the second size, some do not. The
    # combined rows are those every replication has.
    reps = [cs.run(sc.copy().set("seed", s)).summary["collective"] for s in (2, 3, 4)]
    assert {len(r["results"]) for r in reps} == {1, 2}
    combined = cs.run(sc.copy().set("seed", 2).set("run.replications", 3)).summary["collective"]
    assert len(combined["results"]) == 1
    t = combined["results"][0]["time_s"]
    assert t["mean"] == pytest.approx(sum(r["results"][0]["time_s"] for r in reps) / 3, rel=1e-12)
    # ... and sizes_not_run counts what the combined table lacks: the most any left out.
    assert combined["sizes_not_run"] == max(r["sizes_not_run"] for r in reps) == 1
    assert combined["groups"] == 1


def test_auto_table_is_one_block_naming_each_choice(cli, tmp_path):
    doc = {"name": "t", "hardware": {"node": {"gpus": 8, "fabric": "nvswitch", "nvls": True}},
           "topology": {"kind": "single_node"}, "network": {"protocol": "auto"},
           "workload": {"kind": "collective", "op": "all_reduce", "algorithm": "auto",
                        "sizes": [8, "1GiB"]}}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    out = cli("run", path, check=True).stdout
    assert out.count("# \"auto\"") == 1 and out.splitlines()[3].split()[-1] == "algorithm"
    rows = json.loads(cli("run", path, "--json", check=True).stdout)["collective"]["results"]
    assert all(r["requested_algorithm"] == "auto" for r in rows)
    table = out.splitlines()[4:4 + len(rows)]
    assert [line.split()[-1] for line in table] == [r["algorithm"] for r in rows]
    assert rows[-1]["algorithm"] == "in_network"
    # NVLS runs the Simple protocol whatever the tuner compared it under.
    assert all(r["protocol"] == "simple" for r in rows if r["algorithm"] == "in_network")


def test_step_granularity_is_flow_model_only(cli, tmp_path):
    doc = json.loads(fabric(model="analytical", algorithm="ring", ranks=[0, 3]).to_json())
    doc["network"]["granularity"] = "step"
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    proc = cli("run", path)
    assert proc.returncode == 2 and "error: network.granularity:" in proc.stderr


def test_step_granularity_runs_one_textbook_ring_per_channel():
    # 4 DGX-like nodes with 8 NICs: the pipelined plan runs 8 rings, one per rail; the
    # textbook rings (every step its own flow) follow the same 8 rings, each with 1/8 of S, so
    # the bandwidth term is the same and only the per-step latency differs.
    doc = json.loads(cs.Scenario.load(str(ROOT / "scenarios" / "fat_tree_allreduce.json")).to_json())
    doc["topology"]["nodes"] = 4
    doc["network"]["protocol"] = "simple"
    doc["workload"]["sizes"] = ["1GiB", "2GiB"]
    pipe = results(cs.run(cs.Scenario.from_json(json.dumps(doc))).summary)
    doc["network"]["granularity"] = "step"
    step = results(cs.run(cs.Scenario.from_json(json.dumps(doc))).summary)
    assert step[1] - step[0] == pytest.approx(pipe[1] - pipe[0], rel=1e-6)
    assert step[0] >= pipe[0]
    doc["workload"]["channels"] = 1
    one_ring = results(cs.run(cs.Scenario.from_json(json.dumps(doc))).summary)
    assert one_ring[1] - one_ring[0] > 7 * (step[1] - step[0])


def test_background_traffic_under_ecmp_takes_the_flow_models_routes():
    # ECMP hashes each traffic flow by its index, in both models: an all-to-all beside a ring
    # all-reduce over the even ranks of an oversubscribed fat-tree gives the same times.
    doc = {"name": "t", "hardware": {"node": {"gpus": 4, "nics": 2, "nic_bandwidth": "400Gbps"}},
           "topology": {"kind": "fat_tree", "nodes": 16, "switch_radix": 8, "oversubscription": 3,
                        "link_bandwidth": "400Gbps", "link_latency": "0.5us"},
           "network": {"routing": "ecmp", "protocol": "simple"},
           "workload": {"kind": "collective", "op": "all_reduce", "sizes": [1e6, 1e8],
                        "ranks": list(range(0, 64, 2)),
                        "background": [{"kind": "traffic", "pattern": "all_to_all", "bytes": "1MB"}]}}
    out = {}
    for model in ("flow", "analytical"):
        doc["network"]["model"] = model
        out[model] = results(cs.run(cs.Scenario.from_json(json.dumps(doc))).summary)
    assert out["analytical"] == pytest.approx(out["flow"], rel=1e-6)


def test_cli_table_shows_means_under_replications(cli):
    out = cli("run", INTERFERENCE, "--set", "run.replications=3", check=True).stdout
    lines = out.splitlines()
    assert "(means of 3 replications)" in lines[0] and "{" not in lines[0]
    rows = [l for l in lines if "time +-" in l]
    assert len(rows) == 2 and all("{" not in l for l in rows)
    assert "sizes not run" not in out
