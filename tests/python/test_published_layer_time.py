"""One transformer layer's forward and backward against Korthikanti et al. 2022's Table 4 (GPT 22B
on 8 A100s, tp 8): scripts/validation_layer_time.py replays the five experiments (sequence
parallelism, full and selective recomputation) and reads a layer's time off the step's timeline.
The bound is what the model achieves today (results/validation.md)."""
import sys

import pytest

import clustersim as cs
from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import validation_layer_time  # noqa: E402

# Measured over simulated: forward x1.12 to x1.13, backward x1.11 (full recomputation) to x1.13
# (forward x1.11 to x1.12, backward x1.10 to x1.12 with the MAMF table's earlier A100 ceiling,
# 0.859, now 0.869); backward x1.14 at most before weight-gradient GEMMs paid for the gradient
# buffer they add into, x1.17 before the GeLU ran at the share Megatron's fused activation was
# measured at (roofline.hpp).
LAYER_ERROR = 0.135


@pytest.fixture(scope="module")
def rows():
    return {r["experiment"]["name"]: r for r in validation_layer_time.layer_rows(cs)}


def test_every_experiment_within_bound(rows):
    assert len(rows) == 5
    for name, r in rows.items():
        e = r["experiment"]
        for direction in ("forward", "backward"):
            ratio = e[f"{direction}_ms"] / 1e3 / r[f"{direction}_s"]
            assert abs(ratio - 1) <= LAYER_ERROR, (name, direction, ratio)


def test_full_recomputation_adds_a_forward_to_backward(rows):
    # The timeline's own closed form: recomputing the whole layer reruns its forward (its
    # collectives too) before its backward.
    base, full = rows["baseline, no recomputation"], rows["full recomputation"]
    assert full["backward_s"] - base["backward_s"] == pytest.approx(base["forward_s"], rel=0.01)
    assert full["forward_s"] == pytest.approx(base["forward_s"], rel=1e-9)


def test_selective_recomputation_adds_the_attention_core(rows):
    # Selective recomputation reruns the attention's score and value products, softmax and
    # dropout: the backward grows by their forward roofline time (1.3 ms measured).
    base, selective = rows["baseline, no recomputation"], rows["selective recomputation"]
    core = sum(base["parts"]["forward"][p] for p in ("attention products", "softmax, dropout"))
    assert selective["backward_s"] - base["backward_s"] == pytest.approx(core, rel=0.02)


def test_sequence_parallelism_gains_in_forward_more_than_in_backward(rows):
    # Measured: 0.5 ms forward (norms and dropouts on 1/tp of the tokens), 0.1 ms backward, where
    # Megatron's linear layers gather their saved inputs again and wait for each weight gradient's
    # reduce-scatter (validation_layer_time's docstring; without them the replay gained 1.0 ms).
    base, sp = rows["baseline, no recomputation"], rows["sequence parallelism"]
    forward_gain = base["forward_s"] - sp["forward_s"]
    backward_gain = base["backward_s"] - sp["backward_s"]
    assert 0 < backward_gain < forward_gain


# Measured over simulated for the layer's 100.7 MB tensor-parallel all-reduce on 8 A100s: 1.08
# (854 us interpolated from a published all_reduce_perf run, 790 us simulated).
ALL_REDUCE_GAP = 0.09


@pytest.fixture(scope="module")
def all_reduce():
    return validation_layer_time.tp_all_reduce(cs)


def test_tp_all_reduce_against_published_nccl_tests(all_reduce):
    # The layer's activations in 16 bits: micro 4 x seq 2048 x hidden 6144 x 2 B; the simulated
    # ring's closed form: 2(n-1)/n x bytes over 240 GB/s of NVLink (NCCL's 12 x 20 GB/s) plus
    # NCCL's Simple ring latency, 8.4 us + 2(n-1) x 3.4 us.
    assert all_reduce["bytes"] == 4 * 2048 * 6144 * 2
    closed_form = 1.75 * all_reduce["bytes"] / 240e9 + (8.4 + 14 * 3.4) * 1e-6
    assert all_reduce["simulated_s"] == pytest.approx(closed_form, rel=1e-3)
    # Measured between the 64 MB (557.4 us) and 128 MB (1,149.9 us) points of the run.
    assert 557.4e-6 < all_reduce["measured_s"] < 1149.9e-6
    ratio = all_reduce["measured_s"] / all_reduce["simulated_s"]
    assert 1 <= ratio <= 1 + ALL_REDUCE_GAP, ratio


def test_the_section_reports_every_experiment(rows, all_reduce):
    text = validation_layer_time.layer_section(cs, list(rows.values()), all_reduce)
    assert text.startswith("### One layer")
    assert "https://arxiv.org/abs/2205.05198" in text
    assert "https://github.com/facebookresearch/gcm" in text
    for name in rows:
        assert f"| {name} |" in text
