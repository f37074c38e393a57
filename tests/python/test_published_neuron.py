"""LLM serving against AWS's published Neuron runs (scripts/validation_serving.py's Neuron section
replays every BF16 row of the Neuron 2.18 latency tables in data/published_neuron_serving.json):
one request at a time on a trn1.32xlarge's 16 Trainium chips or an inf2.48xlarge's 12 Inferentia2
chips, the latter with its heads padded (`pad_heads`) as transformers-neuronx pads them, the
prompt's attention unfused (`flash_attention` false) as its context encoding runs it.

The bounds are the errors the model reaches now (simulated / measured - 1), so a change that
widens them fails here. Each tensor-parallel all-reduce pays Neuron's collective latencies (AWS's
nccom-test floors: sim/network/neuron_ccom.cpp) over the faster of the ring (a step per
NeuronCore, the runtime's ranks) and Neuron's all-to-all (two steps, whatever the chip count), so
decode (TPOT) is within 11% of Neuron's on every figure but the 8,192-token runs of the 13B models
(x0.79 on trn1, x0.83-0.84 on inf2) and Mistral 7B v0.2 (x0.69, x0.73), while the prefill stays
faster than it on every figure (its HBM share, 0.7, and iteration overhead, 0.5 ms, are the GPU
and vLLM defaults: AWS publishes no achieved HBM read rate of its chips and no per-step runtime
cost of transformers-neuronx), which docs/serving.md states.

The throughput-optimized tables' BF16 rows (static batches of 4 or 8 prompts) replay as one batch
under the `static_batch` scheduler over transformers-neuronx's dense cache and token buckets:
their decode within 17% on trn1 and 36% on inf2 (faster than published on every row), their
prefill faster than published on every row, most for the long prompts on both instances
(x0.27-0.47).
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

import clustersim as cs

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import validation_serving as vs  # noqa: E402

# (chip, model, input, output) -> (largest |TTFT ratio - 1|, largest |TPOT ratio - 1|) measured now
BOUNDS = {
    ("Trainium1", "llama3-70b", 2048, 2048): (0.24, 0.02),
    ("Trainium1", "llama3-70b", 128, 1024): (0.19, 0.08),
    ("Trainium1", "llama3-70b", 128, 128): (0.18, 0.01),
    ("Trainium1", "llama2-7b", 128, 8064): (0.32, 0.11),
    ("Trainium1", "llama2-13b", 4096, 4096): (0.72, 0.03),
    ("Trainium1", "llama2-13b", 8192, 8192): (0.77, 0.22),
    ("Trainium1", "llama2-70b", 128, 128): (0.21, 0.03),
    ("Trainium1", "llama2-70b", 256, 256): (0.21, 0.03),
    ("Trainium1", "llama2-70b", 128, 1024): (0.26, 0.03),
    ("Trainium1", "llama2-70b", 1024, 1024): (0.04, 0.01),
    ("Trainium1", "llama2-70b", 1024, 2048): (0.06, 0.02),
    ("Trainium1", "llama2-70b", 2048, 2048): (0.40, 0.02),
    ("Trainium1", "mistral-7b-v0.2", 8192, 8192): (0.77, 0.31),
    ("Trainium1", "codellama-13b", 4096, 4096): (0.72, 0.03),
    ("Trainium1", "codellama-13b", 8192, 8192): (0.77, 0.22),
    ("Inferentia2", "llama3-70b", 2048, 2048): (0.37, 0.08),
    ("Inferentia2", "llama3-70b", 1024, 2048): (0.22, 0.06),
    ("Inferentia2", "llama3-70b", 1024, 1024): (0.22, 0.04),
    ("Inferentia2", "llama3-70b", 128, 1024): (0.32, 0.03),
    ("Inferentia2", "llama3-70b", 256, 256): (0.17, 0.03),
    ("Inferentia2", "llama3-70b", 128, 128): (0.31, 0.02),
    ("Inferentia2", "llama2-7b", 128, 3968): (0.60, 0.06),
    ("Inferentia2", "llama2-7b", 128, 8064): (0.62, 0.04),
    ("Inferentia2", "llama2-13b", 128, 3968): (0.37, 0.05),
    ("Inferentia2", "llama2-13b", 4096, 4096): (0.24, 0.01),
    ("Inferentia2", "llama2-13b", 8192, 8192): (0.43, 0.17),
    ("Inferentia2", "llama2-70b", 128, 128): (0.30, 0.06),
    ("Inferentia2", "llama2-70b", 256, 256): (0.14, 0.06),
    ("Inferentia2", "llama2-70b", 128, 1024): (0.30, 0.06),
    ("Inferentia2", "llama2-70b", 1024, 1024): (0.12, 0.07),
    ("Inferentia2", "llama2-70b", 1024, 2048): (0.12, 0.10),
    ("Inferentia2", "llama2-70b", 2048, 2048): (0.43, 0.10),
    ("Inferentia2", "mistral-7b-v0.2", 128, 3968): (0.59, 0.01),
    ("Inferentia2", "mistral-7b-v0.2", 4096, 4096): (0.70, 0.10),
    ("Inferentia2", "mistral-7b-v0.2", 8192, 8192): (0.29, 0.28),
    ("Inferentia2", "codellama-13b", 128, 3968): (0.40, 0.06),
    ("Inferentia2", "codellama-13b", 4096, 4096): (0.25, 0.02),
    ("Inferentia2", "codellama-13b", 8192, 8192): (0.43, 0.17),
}


# (chip, model, batch, input, output) of the throughput tables -> the same bounds, measured now
BATCH_BOUNDS = {
    ("Trainium1", "llama3-70b", 4, 2048, 2048): (0.07, 0.11),
    ("Trainium1", "llama3-70b", 4, 128, 1024): (0.09, 0.05),
    ("Trainium1", "llama3-70b", 4, 128, 128): (0.09, 0.06),
    ("Trainium1", "llama2-7b", 8, 128, 8064): (0.42, 0.17),
    ("Trainium1", "llama2-13b", 8, 4096, 4096): (0.73, 0.09),
    ("Trainium1", "llama2-13b", 4, 8192, 8192): (0.54, 0.15),
    ("Trainium1", "llama2-70b", 4, 128, 128): (0.25, 0.02),
    ("Trainium1", "llama2-70b", 4, 256, 256): (0.19, 0.02),
    ("Trainium1", "llama2-70b", 4, 128, 1024): (0.25, 0.03),
    ("Trainium1", "llama2-70b", 4, 1024, 1024): (0.48, 0.05),
    ("Trainium1", "llama2-70b", 4, 1024, 2048): (0.48, 0.13),
    ("Trainium1", "llama2-70b", 4, 2048, 2048): (0.44, 0.11),
    ("Trainium1", "mistral-7b-v0.2", 8, 8192, 8192): (0.74, 0.12),
    ("Trainium1", "codellama-13b", 8, 4096, 4096): (0.73, 0.09),
    ("Trainium1", "codellama-13b", 4, 8192, 8192): (0.54, 0.15),
    ("Inferentia2", "llama2-7b", 8, 128, 3968): (0.44, 0.23),
    ("Inferentia2", "llama2-7b", 8, 128, 8064): (0.46, 0.28),
    ("Inferentia2", "llama2-13b", 8, 128, 3968): (0.39, 0.14),
    ("Inferentia2", "llama2-13b", 8, 4096, 4096): (0.74, 0.10),
    ("Inferentia2", "llama2-13b", 4, 8192, 8192): (0.58, 0.14),
    ("Inferentia2", "mistral-7b-v0.2", 8, 128, 3968): (0.43, 0.30),
    ("Inferentia2", "mistral-7b-v0.2", 8, 4096, 4096): (0.74, 0.36),
    ("Inferentia2", "mistral-7b-v0.2", 8, 8192, 8192): (0.74, 0.21),
    ("Inferentia2", "codellama-13b", 8, 128, 3968): (0.43, 0.20),
    ("Inferentia2", "codellama-13b", 8, 4096, 4096): (0.74, 0.16),
    ("Inferentia2", "codellama-13b", 4, 8192, 8192): (0.58, 0.14),
}


def key(run):
    return (run.machine.gpu, run.model, run.input_len, run.output_len)


def batch_key(run):
    return (run.machine.gpu, run.model, run.batch, run.input_len, run.output_len)


@pytest.fixture(scope="module")
def results():
    return vs.neuron_rows(cs)


@pytest.fixture(scope="module")
def batched_results():
    return vs.neuron_rows(cs, vs.NEURON_BATCH_RUNS)


def _within(results, bounds, key_of):
    assert {key_of(r["run"]) for r in results} == set(bounds)
    for r in results:
        ttft_bound, tpot_bound = bounds[key_of(r["run"])]
        bound = ttft_bound if r["metric"] == "P50 TTFT" else tpot_bound
        if r["metric"] == "P50 TTFT":
            assert r["simulated"] < r["measured"], r
        assert abs(r["ratio"] - 1) <= bound, r


def test_published_neuron_runs(results):
    _within(results, BOUNDS, key)


def test_published_neuron_static_batches(batched_results):
    _within(batched_results, BATCH_BOUNDS, batch_key)
    # Decode is faster than published on every batched row.
    assert all(r["ratio"] < 1 for r in batched_results if r["metric"] == "P50 TPOT")


def test_a_static_batch_decodes_at_its_token_buckets():
    # Llama 2 7B's 8 prompts of 128 tokens on inf2: 3,968 output tokens read the token buckets 128
    # to 4,096 whether the graphs are compiled for 4,096 or 8,192 positions (the buckets below
    # n_positions are the same powers of two), and 8,064 go on to the 8,192 bucket: AWS's tables
    # show the same step (TPOT 12.1 against 16.4 ms).
    def tpot(seq, out):
        run = vs.NeuronRun(vs.INF2_BATCH, "llama2-7b", 128, out, 0, 0, batch=8, sequence_length=seq)
        return vs.simulate_neuron(cs, run)["tpot_ms"]
    assert tpot(8192, 3968) == pytest.approx(tpot(4096, 3968), rel=1e-12)
    assert tpot(8192, 8064) > 1.2 * tpot(4096, 3968)


def test_a_70b_decode_step_reads_every_chips_weights_at_the_achievable_hbm_rate():
    # Llama 3 70B's 70.55e9 BF16 parameters over 16 chips, each read at 820 GB/s x 0.7 per token,
    # plus the copies of its 8 KV heads that the 32 NeuronCores hold, one each (K and V weights of
    # 24 more heads of 128 over 80 layers of 8,192): 16.24 ms, the floor of TPOT. On top: two
    # all-reduces a layer, each Neuron's all-to-all (sim/network/neuron_ccom.cpp): 51.7 us once and
    # two NeuronLink steps of 3.17 us, 9.29 ms over 80 layers, and the 0.5 ms iteration overhead;
    # what is left (the 16 KiB's wire time, the logits' all-gather, the KV cache) is under 0.5 ms.
    run = vs.NeuronRun(vs.TRN1, "llama3-70b", 128, 128, 52.53, 26.48)
    assert run in vs.NEURON_RUNS
    assert run.machine.chips * run.machine.cores == 32  # the table's TP degree
    held = 70.55e9 + 24 * 2 * 80 * 8192 * 128
    floor_ms = held * 2 / 16 / (820e9 * 0.7) * 1e3
    tpot = vs.simulate_neuron(cs, run)["tpot_ms"]
    collectives_ms = 2 * 80 * (51.7 + 2 * 3.17) * 1e-3
    assert floor_ms + collectives_ms + 0.5 < tpot < floor_ms + collectives_ms + 1.0, (floor_ms, tpot)


def test_heads_that_do_not_divide_over_the_chips_need_pad_heads(tmp_path):
    # 64 heads over an inf2.48xlarge's 12 chips: refused as vLLM refuses it, unless padded.
    run = vs.NeuronRun(vs.INF2, "llama3-70b", 128, 4, 0, 0)
    doc = vs.neuron_scenario(run, tmp_path / "one.csv")
    (tmp_path / "one.csv").write_text("timestamp,prompt_tokens,output_tokens\n0,128,4\n")
    del doc["workload"]["replica"]["pad_heads"]
    path = tmp_path / "unpadded.json"
    path.write_text(json.dumps(doc))
    proc = subprocess.run([str(ROOT / "build" / "clustersim"), "validate", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert "workload.replica.gpus" in proc.stderr and "pad_heads" in proc.stderr, proc.stderr
    doc["workload"]["replica"]["pad_heads"] = True
    assert cs.run(doc).summary["serving"]["completed"] == 1


def test_the_section_lists_every_run_with_its_source(results):
    section = vs.neuron_section(cs)
    assert section.count(vs.TRN1.url) == 2 * sum(r.machine == vs.TRN1 for r in vs.NEURON_RUNS)
    assert section.count(vs.INF2.url) == 2 * sum(r.machine == vs.INF2 for r in vs.NEURON_RUNS)
    assert section.count(vs.TRN1_BATCH.url) == 2 * sum(r.machine == vs.TRN1_BATCH for r in vs.NEURON_BATCH_RUNS)
    assert section.count(vs.INF2_BATCH.url) == 2 * sum(r.machine == vs.INF2_BATCH for r in vs.NEURON_BATCH_RUNS)
    figures = 2 * (len(vs.NEURON_RUNS) + len(vs.NEURON_BATCH_RUNS))
    assert f"Mean absolute error over these {figures} figures" in section
    assert f"the latency tables' {2 * len(vs.NEURON_RUNS)} figures" in section
    assert f"the throughput tables' {2 * len(vs.NEURON_BATCH_RUNS)} " in section


def _ttft_ms(doc):
    return cs.run(doc).summary["serving"]["ttft"]["mean_s"] * 1e3


def test_the_unfused_context_encoding_pays_for_its_whole_score_matrix(tmp_path):
    # Llama 3 70B's 2,048-token prompt on an inf2.48xlarge, 72 query heads held over 80 layers:
    # 2,048 x 2,048 scores a head, each 4 bytes through the two GEMMs and 4 through the softmax at
    # 12 x 820 GB/s x 0.7, where fused attention's causal half of the FLOPs ran at 12 x 190
    # TFLOP/s x 0.6 (the attention's KV bytes, 24 KV heads held, under either).
    run = vs.NeuronRun(vs.INF2, "llama3-70b", 2048, 1, 0, 0)
    trace = tmp_path / "one.csv"
    trace.write_text("timestamp,prompt_tokens,output_tokens\n0,2048,1\n")
    doc = vs.neuron_scenario(run, trace)
    assert doc["workload"]["replica"]["flash_attention"] is False
    unfused = _ttft_ms(doc)
    doc["workload"]["replica"]["flash_attention"] = True
    fused = _ttft_ms(doc)
    n, scores = 2048, 80 * 72 * 2048 * 2048
    bytes_per_s, flops_per_s = 12 * 820e9 * 0.7, 12 * 190e12 * 0.6
    kv_s = 2 * 80 * 24 * 128 * 2 * n / (bytes_per_s * 0.9)
    fused_attention_s = max(4 * 128 * 80 * 72 * n * (n + 1) / 2 / flops_per_s, kv_s)
    unfused_attention_s = max(4 * 128 * scores / flops_per_s, kv_s + 4 * scores / bytes_per_s) + 4 * scores / bytes_per_s
    assert unfused - fused == pytest.approx((unfused_attention_s - fused_attention_s) * 1e3, rel=1e-6)
    assert 23 < unfused - fused < 24


def test_flash_attention_must_be_a_boolean(tmp_path):
    run = vs.NeuronRun(vs.INF2, "llama2-7b", 128, 4, 0, 0)
    doc = vs.neuron_scenario(run, tmp_path / "one.csv")
    doc["workload"]["replica"]["flash_attention"] = "no"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    proc = subprocess.run([str(ROOT / "build" / "clustersim"), "validate", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert "workload.replica.flash_attention" in proc.stderr and "true or false" in proc.stderr, proc.stderr


def test_trn1_over_inf2_is_a_hardware_ratio_and_the_checks_are_the_tables_rows(results):
    # A Trainium1 and an Inferentia2 chip are the same two NeuronCore-v2 with the same HBM, 16 of
    # them on a trn1.32xlarge to 12 on an inf2.48xlarge: the engine's TTFT on trn1 is never above
    # inf2's for the same prompt. AWS's are, by 2.4-2.6x, on five Neuron 2.18.0 rows only (the 13B
    # models' and Mistral's long prompts), which the same release's static batches of those prompts
    # do not repeat (0.78-0.94); its 2.18.1 Llama 3 8B row (Mistral 7B v0.2's layers) is 0.73 and
    # within 5% of the engine's.
    pairs = vs.neuron_cross_check(cs, results)
    both = {(r.model, r.input_len, r.output_len) for r in vs.NEURON_RUNS if r.machine == vs.TRN1} & \
           {(r.model, r.input_len, r.output_len) for r in vs.NEURON_RUNS if r.machine == vs.INF2}
    assert len(pairs) == len(both) + len(vs.NEURON_CROSS_CHECKS)
    for p in pairs:
        trn1, inf2 = p["simulated"]
        assert 0.75 < trn1 / inf2 < 1, p
    slow = {(p["model"], p["tokens"]) for p in pairs if p["published"][0] > p["published"][1]}
    assert slow == {("llama2-13b", "4,096/4,096"), ("llama2-13b", "8,192/8,192"), ("mistral-7b-v0.2", "8,192/8,192"),
                    ("codellama-13b", "4,096/4,096"), ("codellama-13b", "8,192/8,192")}
    batched = [b for b in vs.batched_trn1_over_inf2() if (b["model"], b["tokens"]) in slow]
    assert len(batched) == 5
    for b in batched:
        assert 0.75 < b["published"][0] / b["published"][1] < 0.95, b
    for p in pairs:
        if (p["model"], p["tokens"]) in slow:
            assert p["release"] == "2.18.0" and 2.3 < p["published"][0] / p["published"][1] < 2.6, p
    llama3_8b = next(p for p in pairs if p["model"] == "llama3-8b")
    assert llama3_8b["release"] == "2.18.1" and llama3_8b["simulated"][0] == pytest.approx(153.02, rel=0.05)
    # Twice the prompt on the same layers: its GEMMs double, its attention at most quadruples.
    mistral = next(p for p in pairs if p["model"] == "mistral-7b-v0.2")
    assert mistral["simulated"][0] < 4 * llama3_8b["simulated"][0] < mistral["published"][0]
    section = vs.neuron_section(cs)
    assert "trn1 against inf2" in section and section.count("| checks, not in the mean |") == 1


def test_every_bf16_row_of_the_latency_tables_is_replayed_with_its_source():
    data = json.loads((ROOT / "data" / "published_neuron_serving.json").read_text())
    for name, src in data["sources"].items():
        assert src["commit"] in src["url"] and src["date"] == "2024-04-30", name
    rows = [r for r in data["runs"] if r["table"].endswith("_latency") and r["weights"] == "bf16"]
    replayed = {(r.machine.gpu, r.model, r.input_len, r.output_len, r.ttft_ms, r.tpot_ms) for r in vs.NEURON_RUNS}
    chip = {"trn1_latency": vs.TRN1.gpu, "inf2_latency": vs.INF2.gpu}
    assert replayed == {(chip[r["table"]], r["model"], r["input"], r["output"], r["ttft_p50_ms"], r["tpot_p50_ms"])
                        for r in rows}
    assert len(vs.NEURON_RUNS) == 38 and {r["batch"] for r in rows} == {1}
    assert {r["tp_degree"] for r in rows if r["table"] == "trn1_latency"} == {32}
    assert {r["tp_degree"] for r in rows if r["table"] == "inf2_latency"} == {24}
    # The throughput tables' BF16 rows are replayed as static batches; what is left out is int8.
    batches = [r for r in data["runs"] if r["table"].endswith("_throughput") and r["weights"] == "bf16"]
    chip = {"trn1_throughput": vs.TRN1.gpu, "inf2_throughput": vs.INF2.gpu}
    assert {(r.machine.gpu, r.model, r.batch, r.input_len, r.output_len, r.sequence_length, r.ttft_ms, r.tpot_ms)
            for r in vs.NEURON_BATCH_RUNS} == \
        {(chip[r["table"]], r["model"], r["batch"], r["input"], r["output"], r["sequence_length"], r["ttft_p50_ms"],
          r["tpot_p50_ms"]) for r in batches}
    assert len(vs.NEURON_BATCH_RUNS) == 26 and {r["batch"] for r in batches} == {4, 8}
    assert all(src["replayed"] for src in data["sources"].values())
    left = [r for r in data["runs"] if r not in rows and r not in batches]
    assert left and all(r["weights"] == "int8" for r in left)
    assert set(data["not_replayed"]) == {"int8", "throughput"}


def _context_buckets(model: dict, sequence_length: int) -> list:
    """transformers-neuronx 0.10's context buckets (bucket.py at 0623de2): a sample's own list, or
    half of each token bucket, the powers of two from 128 below the sequence length and it."""
    if "context_buckets" in model:
        return model["context_buckets"]
    tokens, size = [], 128
    while size < sequence_length:
        tokens.append(size)
        size *= 2
    return [b // 2 for b in tokens + [sequence_length]]


def test_no_published_prompt_pads_to_a_context_bucket():
    # Every prompt of the tables fills a context bucket of its row's sequence length, so the
    # replay encodes it unpadded in one pass (base.py's context at 0623de2).
    assert _context_buckets({}, 3072) == [64, 128, 256, 512, 1024, 1536]
    assert _context_buckets({}, 1152) == [64, 128, 256, 512, 576]
    data = json.loads((ROOT / "data" / "published_neuron_serving.json").read_text())
    for r in data["runs"]:
        assert r["input"] in _context_buckets(data["models"][r["model"]], r["sequence_length"]), r


def test_the_1024_to_2048_token_step_is_steeper_published_than_simulated(results):
    # Both prompts fill their context buckets, so no padding makes AWS's step; the engine's is
    # its GEMMs doubling and its attention growing, x1.8-2.0 for a 70B model.
    steps = [vs.prompt_step(results, gpu, model, 1024, 2048) for gpu in (vs.TRN1.gpu, vs.INF2.gpu)
             for model in ("llama2-70b", "llama3-70b")]
    steps = [s for s in steps if s is not None]
    assert len(steps) == 3   # trn1's Llama 3 70B table has no 1,024-token row
    for published, simulated in steps:
        assert 1.8 < simulated < 2.0 and published > 2.3, (published, simulated)


def test_a_row_whose_figures_do_not_fit_one_steady_run_is_named():
    # A run's output tokens/s is batch x output over TTFT + (output - 1) x its mean time a token: a
    # mean above the P99 TPOT needs its slowest 1% of tokens to average at least 100 x the mean - 99
    # x the P99 (here 100 x 11.5 - 99 x 11 = 61 ms); a P99 below the P50 is no run's.
    row = {"batch": 1, "output": 1001, "ttft_p50_ms": 100.0, "tpot_p50_ms": 10.0, "tpot_p99_ms": 11.0,
           "output_tokens_per_s": 1001 / (0.1 + 1000 * 0.0105)}
    assert vs.source_contradiction(row) == ""
    row["output_tokens_per_s"] = 1001 / (0.1 + 1000 * 0.0115)
    assert "11.50 ms a token on average, above its P99 TPOT 11.00 ms" in vs.source_contradiction(row)
    assert vs.source_contradiction(row).endswith("slowest 1% of tokens would average at least 61 ms, 5.5 times the P99")
    row["tpot_p99_ms"] = 9.0
    assert vs.source_contradiction(row) == "P99 TPOT 9.00 ms below its P50 10.00 ms"
    # The batch multiplies the tokens: 8 requests' worth at the same pace agrees.
    row.update(batch=8, tpot_p99_ms=11.0, output_tokens_per_s=8 * 1001 / (0.1 + 1000 * 0.0105))
    assert vs.source_contradiction(row) == ""
    # Of AWS's 78 rows, seven: the five trn1 TTFTs the inf2 comparison questions among them.
    data = json.loads((ROOT / "data" / "published_neuron_serving.json").read_text())
    named = {(r["table"], r["model"], r["input"]) for r in data["runs"] if vs.source_contradiction(r)}
    assert named == {("trn1_latency", "llama3-70b", 128), ("trn1_latency", "llama2-13b", 4096),
                     ("trn1_latency", "llama2-13b", 8192), ("trn1_latency", "mistral-7b-v0.2", 8192),
                     ("trn1_latency", "codellama-13b", 4096), ("trn1_latency", "codellama-13b", 8192),
                     ("inf2_latency", "mistral-7b-v0.2", 4096)}
    assert {(r.model, r.input_len) for r in vs.NEURON_RUNS if r.contradiction} == {(m, i) for _, m, i in named}


def test_output_throughput_against_the_tables_column(results):
    # The engine's tokens/s of a run is its batch's output over a request's latency; AWS's column on
    # the rows whose figures agree is within 10.5% on average (10.2% now: 6.2% at batch 1, the
    # static batches' inf2 decode x0.65-0.91 the most of the rest) and its largest miss 1.61; over
    # every row 21.8% (the contradicted batch-1 rows x1.7-3.0).
    batched = vs.neuron_rows(cs, vs.NEURON_BATCH_RUNS)
    rows = vs.neuron_throughput_rows(results + batched)
    assert len(rows) == len(vs.NEURON_RUNS) + len(vs.NEURON_BATCH_RUNS)
    for r in rows:
        run = r["run"]
        ttft, tpot = (next(x["simulated"] for x in results + batched if x["run"] == run and x["metric"] == m)
                      for m in ("P50 TTFT", "P50 TPOT"))
        assert r["simulated"] == pytest.approx(run.batch * run.output_len / (ttft + (run.output_len - 1) * tpot) * 1e3)
    agree = [abs(r["ratio"] - 1) for r in rows if not r["run"].contradiction]
    assert len(agree) == 57 and sum(agree) / len(agree) < 0.105 and max(agree) < 0.65
    at_batch_1 = [abs(r["ratio"] - 1) for r in rows if not r["run"].contradiction and r["run"].batch == 1]
    assert len(at_batch_1) == 31 and sum(at_batch_1) / len(at_batch_1) < 0.065
    assert sum(abs(r["ratio"] - 1) for r in rows) / len(rows) < 0.22
    assert not any(run.contradiction for run in vs.NEURON_BATCH_RUNS)
    section = vs.neuron_section(cs)
    assert "**Output-token throughput.**" in section and section.count("| yes |") == 57
