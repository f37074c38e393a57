"""LLM serving against published vLLM runs (scripts/validation_serving.py replays them).

Each case is a public vLLM 0.10.1.1 benchmark run (its engine flags, GPUs, KV-cache size and
token counts from its README and logs) replayed through clustersim with catalog defaults; the bound is
the error the model reaches now (simulated / measured - 1, mean TPOT and mean end-to-end
latency), so a change that widens it fails here. The TP2 runs' GPUs have no P2P: their
all-reduces are staged through host memory (hardware.node.p2p false); Qwen2-7B's TP2 runs
remain the widest bounds (a lone request's step about 2 ms short, a quarter of it), the
Qwen2.5-32B and Qwen2-72B ones narrower (the same ~2 ms is a smaller share of their step).
"""
import sys
from pathlib import Path

import pytest

import clustersim as cs

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import validation_serving as vs  # noqa: E402

# case name -> (largest |TPOT ratio - 1|, largest |latency ratio - 1|) measured with this model
BOUNDS = {
    "1 x A100, 1 request": (0.02, 0.02),
    "1 x A100, 100 requests": (0.13, 0.11),
    "1 x A100, 200 requests": (0.11, 0.05),
    "1 x A100, 5 GiB KV cache, 100 requests": (0.13, 0.12),
    "1 x A100, 5 GiB KV cache, 200 requests": (0.11, 0.10),
    "TP2 over PCIe, 1 request": (0.25, 0.24),
    "TP2 over PCIe, 100 requests": (0.26, 0.23),
    "TP2 over PCIe, 200 requests": (0.24, 0.11),
    "32B, TP2 over PCIe, 1 request": (0.11, 0.10),
    "32B, TP2 over PCIe, 10 requests": (0.20, 0.18),
    "32B, TP2 over PCIe, 15 requests": (0.14, 0.06),
    "32B, TP2 over PCIe, 20 requests": (0.15, 0.06),
    "32B, TP2 over PCIe, 30 requests": (0.17, 0.15),
    "32B, TP2 over PCIe, 50 requests": (0.13, 0.08),
    "32B, TP2 over PCIe, 100 requests": (0.10, 0.07),
    "32B, 1 x A100, 10 requests": (0.04, 0.05),
    "32B, 1 x A100, 50 requests": (0.06, 0.08),
    "32B, 1 x A100, 75 requests": (0.05, 0.07),
    "32B, 1 x A100, 100 requests": (0.05, 0.05),
    "72B, TP2 over PCIe, 1 request": (0.04, 0.03),
    "72B, TP2 over PCIe, 10 requests": (0.12, 0.10),
    "72B, TP2 over PCIe, 30 requests": (0.11, 0.09),
    "72B, TP2 over PCIe, 50 requests": (0.08, 0.01),
    "72B, TP2 over PCIe, 100 requests": (0.17, 0.13),
}


@pytest.mark.parametrize("case", vs.CASES, ids=[c.name for c in vs.CASES])
def test_published_vllm_run(case):
    sim = vs.simulate(cs, case)
    tpot_bound, e2e_bound = BOUNDS[case.name]
    assert abs(sim["tpot_ms"] / case.tpot_ms - 1) <= tpot_bound, (sim, case)
    assert abs(sim["e2e_ms"] / case.e2e_ms - 1) <= e2e_bound, (sim, case)
    # The saturated runs preempt (Qwen2-7B's 5 GiB cache holds 93,872 tokens, not 100 x 2,048;
    # vLLM's logs show it at 99-100% with requests waiting); the others never do.
    assert (sim["preemptions"] > 0) == case.saturated


def test_prefix_caching_cuts_the_saturated_runs_recompute():
    """With a saturated cache, prefix caching (vLLM v1's default) lets preempted requests take
    back their cached blocks: the same replay without it computes more and ends later."""
    case = next(c for c in vs.CASES if c.saturated and c.prompts == 200)
    on = vs.simulate(cs, case)
    off = vs.simulate(cs, case, {"workload.replica.prefix_caching": False})
    assert on["e2e_ms"] < off["e2e_ms"]


def test_the_tp2_lone_request_falls_short_by_a_per_step_time():
    """docs/serving.md: a lone request's TP2 step (no P2P) is 1.5-2.9 ms short of vLLM's for
    Qwen2-7B, Qwen2.5-32B and Qwen2-72B alike (56, 128, 160 all-reduces a step), so what is
    missing is a per-step cost, not a per-all-reduce one; a model of it moves these bounds."""
    lone = [c for c in vs.CASES if c.gpus == 2 and c.prompts == 1]
    assert [c.model for c in lone] == ["Qwen2-7B", "Qwen2.5-32B", "Qwen2-72B"]
    for case in lone:
        short_ms = case.tpot_ms - vs.simulate(cs, case)["tpot_ms"]
        assert 1.4 <= short_ms <= 3.0, (case.name, short_ms)


def test_the_section_names_every_case():
    section = vs.serving_section(cs)
    for case in vs.CASES:
        assert case.name in section
    assert "| source | configuration | metric | measured | simulated | ratio |" in section
