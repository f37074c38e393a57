"""The LLM replica's dense KV layout (MaxText under JetStream) and JetStream's scheduler, through
the scenario file: bad values name their path; a dense decode step costs the same whatever the
sequences hold (docs/serving.md, "JetStream and MaxText on TPU")."""
import pytest

import clustersim as cs
from conftest import ROOT, run_cli

DIURNAL_HPA = ROOT / "scenarios" / "serving_llm_diurnal_hpa.json"


@pytest.mark.parametrize("sets, path, expected", [
    (['workload.replica.kv_layout="dense"'], "workload.replica.kv_layout", "dense_slots"),
    (["workload.replica.dense_slot_tokens=1024"], "workload.replica.dense_slot_tokens", "dense_slots"),
    (['workload.replica.kv_layout="dense_slots"', "workload.replica.dense_slot_tokens=0"],
     "workload.replica.dense_slot_tokens", ">= 1"),
    (['workload.replica.kv_layout="dense_slots"', "workload.replica.prefix_caching=true"],
     "workload.replica.prefix_caching", "dense"),
    # Llama 3 8B's 128 KiB a token: 4,096 slots of 2,048 tokens take 1.1 TB, not on one H100.
    (['workload.replica.kv_layout="dense_slots"', "workload.replica.max_num_seqs=4096",
      "workload.replica.max_num_batched_tokens=8192"], "workload.replica.max_num_seqs", "fewer slots"),
    (['workload.replica.scheduler="jet_stream"'], "workload.replica.scheduler", "jetstream"),
    # JetStream looks the longest prefill up among its power-of-two buckets: 1,000 is not one.
    (['workload.replica.scheduler="jetstream"', "workload.replica.max_num_batched_tokens=1000"],
     "workload.replica.max_num_batched_tokens", "nearest bucket is 1024"),
    # vLLM for TPU's padding is not JetStream's: JetStream pads its prefills to its buckets itself.
    (['workload.replica.scheduler="jetstream"', "workload.replica.max_num_batched_tokens=1024",
      'workload.replica.step_padding="power_of_two"'], "workload.replica.step_padding", "jetstream"),
    (['workload.replica.step_padding="pow2"'], "workload.replica.step_padding", "power_of_two"),
])
def test_bad_dense_slot_options_name_their_path(sets, path, expected):
    args = [a for s in sets for a in ("--set", s)]
    proc = run_cli("validate", DIURNAL_HPA, *args)
    assert proc.returncode == 2, proc.stderr
    assert path in proc.stderr and expected in proc.stderr, proc.stderr


def _tpot_ms(kv_layout, prompt, slot_tokens=2048):
    replica = {"gpus": 8, "max_num_seqs": 16, "max_num_batched_tokens": 1024, "scheduler": "jetstream",
               "kv_layout": kv_layout}
    if kv_layout == "dense_slots":
        replica["dense_slot_tokens"] = slot_tokens
    doc = {"name": "dense", "seed": 1, "hardware": {"gpu": "TPU-v5e"},
           "workload": {"kind": "serving", "model": {"preset": "llama2-7b"}, "precision": "bf16",
                        "arrivals": {"process": "poisson", "rate": "0.01/s"},
                        "request": {"prompt_tokens": prompt, "output_tokens": 64}, "replica": replica},
           "fleet": {"autoscaler": {"policy": "fixed", "replicas": 1}, "prices": {"on_demand": "$10/h"}},
           "run": {"until": "200s"}}
    s = cs.run(doc).summary["serving"]
    assert s["completed"] >= 1
    return s["tpot"]["mean_s"] * 1e3


def test_a_dense_decode_step_reads_every_slot_whatever_the_lengths():
    # 16 slots: a step costs the same whatever the prompt, and halving the slots' length saves
    # 16 x 1,024 tokens of Llama 2 7B (0.5 MiB a token) read at 8 x 819 GB/s x 0.86 (the TPU
    # entries' measured HBM share): 1.52 ms a step. A request's TPOT ends at its last token, not
    # at the 9 steps its slot is held after it (JetStream's lag): 63 steps over 63 tokens.
    short, long = _tpot_ms("dense_slots", 16), _tpot_ms("dense_slots", 1000)
    assert short == pytest.approx(long, rel=1e-9)
    half = _tpot_ms("dense_slots", 16, slot_tokens=1024)
    step_ms = 16 * 1024 * 32 * 2 * 4096 * 2 / (8 * 819e9 * 0.86) * 1e3
    assert short - half == pytest.approx(step_ms, rel=1e-6)
    # The paged layout reads the few tokens the sequence holds: more than the whole dense read faster.
    assert short - _tpot_ms("paged", 16) > 16 * 2048 * 32 * 2 * 4096 * 2 / (8 * 819e9 * 0.86) * 1e3


def test_a_dense_option_of_the_prefill_pool_names_its_own_path():
    # The hint names the replica the key was given in, not workload.replica.
    proc = run_cli("validate", ROOT / "scenarios" / "serving_disaggregated.json",
                   "--set", "workload.disaggregated.prefill_replica.dense_slot_tokens=4096")
    assert proc.returncode == 2, proc.stderr
    assert "workload.disaggregated.prefill_replica.dense_slot_tokens" in proc.stderr, proc.stderr
    assert "set workload.disaggregated.prefill_replica.kv_layout" in proc.stderr, proc.stderr
