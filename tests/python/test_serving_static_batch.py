"""The LLM replica's static batches (`workload.replica.scheduler` static_batch, as
transformers-neuronx's sample loop runs a batch) through the scenario file: requests sent
together share one context pass and finish together, a request arriving during a batch waits
for all of it, and the combinations that cannot run name their path (docs/serving.md,
"Static batches")."""
import pytest

import clustersim as cs
from conftest import ROOT, run_cli

DIURNAL_HPA = ROOT / "scenarios" / "serving_llm_diurnal_hpa.json"
DISAGGREGATED = ROOT / "scenarios" / "serving_disaggregated.json"
STATIC = 'workload.replica.scheduler="static_batch"'


@pytest.mark.parametrize("scenario, sets, path, expected", [
    (DIURNAL_HPA, [STATIC, "workload.replica.prefix_caching=true"], "workload.replica.prefix_caching",
     "static_batch"),
    (DIURNAL_HPA, [STATIC, 'workload.replica.step_padding="power_of_two"'], "workload.replica.step_padding",
     "static_batch"),
    (DISAGGREGATED, [STATIC], "workload.disaggregated", "static_batch"),
    (DISAGGREGATED, ['workload.disaggregated.prefill_replica.scheduler="static_batch"'],
     "workload.disaggregated.prefill_replica.scheduler", "chunked_prefill"),
])
def test_static_batch_combinations_that_cannot_run_name_their_path(scenario, sets, path, expected):
    args = [a for s in sets for a in ("--set", s)]
    proc = run_cli("validate", scenario, *args)
    assert proc.returncode == 2, proc.stderr
    assert f"error: {path}:" in proc.stderr and expected in proc.stderr, proc.stderr


def test_the_token_budget_is_inert_under_static_batches():
    proc = run_cli("validate", DIURNAL_HPA, "--set", STATIC)
    assert proc.returncode == 0 and "max_num_batched_tokens" in proc.stderr, proc.stderr
    assert "warning: workload.replica.max_num_batched_tokens: has no effect" in proc.stderr


def _serving(tmp_path, arrivals, max_num_seqs=4):
    trace = tmp_path / "trace.csv"
    trace.write_text("timestamp,prompt_tokens,output_tokens\n" + "".join(f"{t},{p},{o}\n" for t, p, o in arrivals))
    # Measured timing: 10 ms a step + 0.1 ms a prompt token + 1 ms a decode row.
    replica = {"gpus": 1, "scheduler": "static_batch", "max_num_seqs": max_num_seqs,
               "measured": {"base": "10ms", "per_prefill_token": "0.1ms", "per_decode_sequence": "1ms"}}
    doc = {"name": "static", "seed": 1, "hardware": {"gpu": "H100-SXM"},
           "workload": {"kind": "serving", "model": {"preset": "llama3-8b"}, "precision": "bf16",
                        "arrivals": {"process": "trace", "trace": str(trace)}, "replica": replica},
           "fleet": {"autoscaler": {"policy": "fixed", "replicas": 1}, "prices": {"on_demand": "$10/h"}},
           "run": {"until": "1h"}}
    return cs.run(doc).summary["serving"]


def test_requests_sent_together_share_one_context_pass(tmp_path):
    # b identical requests at t = 0: TTFT is one context pass of b x 100 tokens, every request's
    # last token at the same time (9 decode steps of b rows), whatever b up to max_num_seqs.
    for b in (1, 4):
        s = _serving(tmp_path, [(0, 100, 10)] * b)
        assert s["completed"] == b
        assert s["ttft"]["mean_s"] == pytest.approx(0.010 + 1e-4 * 100 * b, rel=1e-9)
        assert s["ttft"]["p99_s"] == pytest.approx(s["ttft"]["mean_s"], rel=1e-9)
        assert s["tpot"]["mean_s"] == pytest.approx(0.010 + 1e-3 * b, rel=1e-9)
    # A fifth waits for the first four's batch: its TTFT is the whole batch and its own pass.
    s = _serving(tmp_path, [(0, 100, 10)] * 5)
    first = 0.010 + 1e-4 * 400 + 9 * (0.010 + 4e-3)
    assert s["ttft"]["max_s"] == pytest.approx(first + 0.010 + 1e-4 * 100, rel=1e-9)
