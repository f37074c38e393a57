"""TPU slices, Trainium and Inferentia through the same workloads: a collective's closed form on a
slice's ICI torus, a training step on a slice and on a trn2 server, an LLM replica on TPU v5e,
v6e and inf2, and the errors a slice shape or a model that does not fit give."""
import json

import pytest

import clustersim as cs
from conftest import run_cli


def slice_doc(gpu, shape, workload, network=None):
    return {"name": "t", "hardware": {"gpu": gpu}, "topology": {"kind": "tpu_slice", "shape": shape},
            "network": network or {"model": "flow", "protocol": "none"}, "workload": workload}


def test_ring_all_reduce_on_a_v5e_slice_runs_at_one_ici_link():
    """16 chips of a 4x4 v5e slice in rank order, dimension-order routes: every ring edge takes its
    own x+ link (and the row ends one y+ link more), so the ring moves at one link's 50 GB/s each
    way: busbw = B, time = 2 (n-1)/n S / B + the per-hop latencies (none with protocol none but
    the wire's 0.5 us per hop)."""
    size = 256 * 2**20
    doc = slice_doc("TPU-v5e", [4, 4], {"kind": "collective", "op": "all_reduce", "algorithm": "ring",
                                         "sizes": [size], "ranks": "all"})
    row = cs.run(cs.Scenario.from_json(json.dumps(doc))).summary["collective"]["results"][0]
    n, bandwidth = 16, 50e9
    wire = 2 * (n - 1) / n * size / bandwidth
    assert row["busbw_GBps"] == pytest.approx(50, rel=0.01)
    assert row["time_s"] == pytest.approx(wire, rel=0.01)


def test_training_on_a_slice_and_on_a_trn2_server():
    llama8b = {"preset": "llama3-8b", "seq_len": 2048}
    doc = slice_doc("TPU-v6e", [2, 4], {"kind": "training", "model": llama8b,
                                        "parallel": {"tp": 4, "dp": 2, "zero": 1},
                                        "batch": {"global": 8, "micro": 1}, "precision": "bf16",
                                        "recompute": "full"}, network={"model": "analytical"})
    tpu = cs.run(cs.Scenario.from_json(json.dumps(doc))).summary["training"]
    assert 0 < tpu["mfu"] < 0.8  # tp 4 across chips: allowed on a slice, its all-reduces on ICI
    trn = {"name": "t", "hardware": {"gpu": "Trainium2"}, "topology": {"kind": "single_node"},
           "network": {"model": "analytical"},
           "workload": {"kind": "training", "model": llama8b, "parallel": {"tp": 4, "dp": 4, "zero": 1},
                        "batch": {"global": 16, "micro": 1}, "precision": "bf16", "recompute": "full"}}
    step = cs.run(cs.Scenario.from_json(json.dumps(trn))).summary["training"]
    assert 0 < step["mfu"] < 0.8
    # MFU is over the chip's own dense bf16 peak: Trainium2's 667 TFLOP/s.
    assert step["model_tflops_per_gpu"] == pytest.approx(step["mfu"] * 667, rel=1e-6)


@pytest.mark.parametrize("gpu,gpus", [("TPU-v5e", 4), ("TPU-v6e", 1), ("Inferentia2", 2)])
def test_an_llm_replica_on_tpu_and_inferentia(gpu, gpus):
    doc = {"name": "t", "hardware": {"gpu": gpu},
           "workload": {"kind": "serving", "model": {"preset": "llama3-8b"},
                        "arrivals": {"process": "poisson", "rate": "2/s"},
                        "request": {"prompt_tokens": 500, "output_tokens": 50},
                        "replica": {"gpus": gpus}},
           "fleet": {"autoscaler": {"policy": "fixed", "replicas": 1}, "prices": {"on_demand": "$10/h"}},
           "run": {"until": "2min"}}
    s = cs.run(cs.Scenario.from_json(json.dumps(doc))).summary["serving"]
    assert s["completed"] > 0 and s["tpot"]["mean_s"] > 0


def _lone_tpot_ms(gpu, replica):
    doc = {"name": "t", "hardware": {"gpu": gpu},
           "workload": {"kind": "serving", "model": {"preset": "llama3-8b"},
                        "arrivals": {"process": "poisson", "rate": "0.01/s"},
                        "request": {"prompt_tokens": 100, "output_tokens": 32}, "replica": replica},
           "fleet": {"autoscaler": {"policy": "fixed", "replicas": 1}, "prices": {"on_demand": "$10/h"}},
           "run": {"until": "300s"}}
    s = cs.run(cs.Scenario.from_json(json.dumps(doc))).summary["serving"]
    assert s["completed"] >= 1
    return s["tpot"]["mean_s"] * 1e3


def test_a_tpu_replica_reads_its_hbm_at_the_measured_tpu_share():
    # The TPU entries' measured HBM share (0.86, ragged paged attention's decode MBU: the paged
    # read itself, so no paged share on top) is the replica's default; the file's keys override it.
    tpu = {"gpus": 1, "iteration_overhead": 0}
    assert _lone_tpot_ms("TPU-v6e", tpu) == pytest.approx(
        _lone_tpot_ms("TPU-v6e", {**tpu, "memory_efficiency": 0.86, "paged_kv_efficiency": 1.0}), rel=1e-12)
    gpu_defaults = _lone_tpot_ms("TPU-v6e", {**tpu, "memory_efficiency": 0.7, "paged_kv_efficiency": 0.9})
    # A batch-1 step of Llama 3 8B is its 16.06 GB of weights read at 1,638 GB/s x the share.
    step_ms = lambda share: 16.06e9 / (1638e9 * share) * 1e3
    assert gpu_defaults - _lone_tpot_ms("TPU-v6e", tpu) == pytest.approx(step_ms(0.7) - step_ms(0.86), rel=0.02)
    # GPUs keep the serving defaults (no measured share in their entries).
    h100 = {"gpus": 1, "iteration_overhead": 0}
    assert _lone_tpot_ms("H100-SXM", h100) == pytest.approx(
        _lone_tpot_ms("H100-SXM", {**h100, "memory_efficiency": 0.7, "paged_kv_efficiency": 0.9}), rel=1e-12)


def test_bad_slice_shape_and_a_model_that_does_not_fit_exit_2(tmp_path):
    bad = slice_doc("TPU-v5p", [4, 4, 6], {"kind": "collective"})
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    r = run_cli("validate", str(path))
    assert r.returncode == 2
    assert "topology.shape" in r.stderr and "nearest TPU-v5p slice: 4x4x4" in r.stderr
    # Llama 3 8B's 16 GB of bf16 weights on one 16 GB v5e chip: no room for a KV cache.
    doc = {"name": "t", "hardware": {"gpu": "TPU-v5e"},
           "workload": {"kind": "serving", "model": {"preset": "llama3-8b"},
                        "arrivals": {"process": "poisson", "rate": "2/s"},
                        "request": {"prompt_tokens": 500, "output_tokens": 50}, "replica": {"gpus": 1}},
           "fleet": {"autoscaler": {"policy": "fixed", "replicas": 1}, "prices": {"on_demand": "$10/h"}},
           "run": {"until": "2min"}}
    path.write_text(json.dumps(doc))
    r = run_cli("validate", str(path))
    assert r.returncode == 2
    assert "workload" in r.stderr
