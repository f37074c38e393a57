"""Hybrid sharding (workload.parallel.zero_replicas): ZeRO inside each group of data-parallel
replicas, the shards all-reduced across groups; on a TPU multislice one group per slice (MaxText's
FSDP over ICI, data parallelism over the data-center network)."""
import json
import subprocess

import pytest

import clustersim as cs
from conftest import ROOT

CLI = ROOT / "build" / "clustersim"


def multislice(zero_replicas=2, zero=3, dcn="25Gbps"):
    """A 1B-parameter model's step on two v5e 4x4 slices, FSDP over all 32 chips or per slice."""
    return {
        "name": "hybrid", "seed": 1, "hardware": {"gpu": "TPU-v5e"},
        "topology": {"kind": "tpu_slice", "shape": [4, 4], "slices": 2, "dcn_bandwidth": dcn},
        "network": {"model": "analytical"},
        "workload": {"kind": "training",
                     "model": {"layers": 8, "hidden": 2048, "heads": 16, "ffn_hidden": 8192, "mlp": "swiglu",
                               "seq_len": 2048, "vocab": 32000},
                     "parallel": {"tp": 1, "pp": 1, "dp": 32, "zero": zero, "zero_replicas": zero_replicas},
                     "batch": {"global": 32, "micro": 1}, "precision": "bf16", "recompute": "full"},
        "run": {}}


def step(doc):
    return cs.run(doc).summary["training"]


def test_zero_states_shard_over_one_group_and_the_plan_reports_the_groups():
    hybrid, flat = step(multislice(2)), step(multislice(1))
    # FSDP's sharded states (16 bytes a parameter) over 16 chips instead of 32: the difference is
    # half of what 16 chips hold
    params = 8 * (4 * 2048 * 2048 + 3 * 2048 * 8192 + 2 * 2048) + 2 * 32000 * 2048 + 2048
    assert hybrid["memory_per_gpu_bytes"] - flat["memory_per_gpu_bytes"] == pytest.approx(params * 16 / 32, rel=1e-6)
    assert hybrid["plan"]["zero_replicas"] == 2 and "zero_replicas" not in flat["plan"]


def test_on_a_slow_data_center_network_the_step_is_the_dcn_closed_form():
    # At 0.1 Gbps per chip (12.5 MB/s) the DCN is the step. FSDP over both slices (XLA's torus
    # all-reduce: each chip's 1/16 of a tensor, half of it across to the other slice) moves
    # S / 32 a chip for every layer's two gathers and one gradient reduce-scatter, and for the
    # embedding's and head's one scatter each; hybrid sharding moves each chip's 1/16 shard of every
    # gradient once, all-reduced over a ring of 2 (2 x 1/2 of it): S / 16. 16-bit weights and gradients.
    dcn = 0.1e9 / 8
    layer = 2 * (4 * 2048 * 2048 + 3 * 2048 * 8192 + 2 * 2048)
    edges = 2 * (32000 * 2048) + 2 * (32000 * 2048 + 2048)  # embedding; head and final norm
    hybrid, flat = step(multislice(2, dcn="0.1Gbps")), step(multislice(1, dcn="0.1Gbps"))
    expected_hybrid = (8 * layer + edges) / 16 / dcn
    expected_flat = (3 * 8 * layer + edges) / 32 / dcn
    for got, expected in ((hybrid, expected_hybrid), (flat, expected_flat)):
        # the DCN's transfers plus at most the compute they do not hide and their latencies
        assert expected < got["step_time_s"] < 1.005 * expected + got["compute_s"], (got["step_time_s"], expected)


@pytest.mark.parametrize("change, expected", [
    ({"zero": 0}, "workload.parallel.zero_replicas: hybrid sharding replicates ZeRO's shards"),
    ({"zero_replicas": 3}, "workload.parallel.zero_replicas: zero_replicas (3) must divide"),
])
def test_a_plan_hybrid_sharding_cannot_run_is_an_input_error(tmp_path, change, expected):
    doc = multislice(change.get("zero_replicas", 2), change.get("zero", 3))
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    proc = subprocess.run([str(CLI), "validate", str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert expected in proc.stderr, proc.stderr
