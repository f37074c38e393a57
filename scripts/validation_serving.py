#!/usr/bin/env python3
"""Serving against published vLLM runs: replays each run's requests through clustersim and
compares mean TPOT and mean end-to-end latency.

    PYTHONPATH=build/python /usr/bin/python3 scripts/validation_serving.py

`serving_section(cs)` returns the markdown section of results/validation.md (written by
scripts/reference_results.py); `simulate(cs, case)` runs one case.

The runs: dennislee22/vLLM-benchmarking (GitHub, README.md and log/ at commit b474d1e0; the
repository states no licence, so only the published figures are quoted here, as facts with
their source, and no file of it is copied): vLLM 0.10.1.1 (V1 engine: chunked prefill, prefix caching on,
max_num_batched_tokens 2048, the API server's defaults for an 80 GB A100), Qwen2-7B-Instruct
(Tests 2, 4 and 5), Qwen2.5-32B (Tests 6 and 7) and Qwen2-72B (Test 8) in BF16 on A100 80 GB
GPUs, `benchmark_serving.py --dataset-name random` with fixed input and output lengths and
every request sent at once (request rate inf). Every run of Tests 6 to 8 is replayed (none
chosen for its result); of Tests 2, 4 and 5 the runs of 1, 100 and 200 requests. The GPUs
are PCIe cards: the two-GPU log says "Custom allreduce is disabled because your platform lacks GPU P2P
capability", which an NVLink (SXM) node never lacks; their tensor-parallel all-reduces cross
the host through NCCL's SHM transport (hardware.node.p2p false). Tests 6 and 8 run "in the
same node" as Test 2 and publish no log: the same PCIe node without P2P is assumed. The KV
cache is the size each log or test heading states ("Available KV cache memory"), set with
workload.replica.kv_cache.

What was published is aggregate: per run, mean TTFT and mean TPOT, total input and output
tokens. No per-request timestamps are published for these runs; the arrivals are exact
(all at t = 0) and each request gets the run's mean token counts. Mean end-to-end latency is
not printed by that benchmark version; with equal output lengths a request's latency is its
TTFT + TPOT x (outputs - 1), so the measured mean is derived as mean TTFT + mean TPOT x
(mean outputs - 1), labelled "derived".
"""
from __future__ import annotations

import csv
import json
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ("dennislee22/vLLM-benchmarking",
          "https://github.com/dennislee22/vLLM-benchmarking/blob/b474d1e053c35c9aef8c02aae4efbc0d8675f033/README.md")

# Qwen2-7B-Instruct's config.json (Qwen/Qwen2-7B-Instruct on Hugging Face): 28 layers, hidden
# 3584, 28 heads, 4 KV heads, intermediate 18944, vocabulary 152064, bias on the QKV projections.
QWEN2_7B = {"layers": 28, "hidden": 3584, "heads": 28, "kv_heads": 4, "ffn_hidden": 18944,
            "mlp": "swiglu", "vocab": 152064, "seq_len": 16384}
# Qwen/Qwen2.5-32B's config.json: 64 layers, hidden 5120, 40 heads, 8 KV heads, intermediate
# 27648, vocabulary 152064, embeddings not tied (32.8 B parameters).
QWEN25_32B = {"layers": 64, "hidden": 5120, "heads": 40, "kv_heads": 8, "ffn_hidden": 27648,
              "mlp": "swiglu", "vocab": 152064, "seq_len": 16384}
# Qwen/Qwen2-72B's config.json: 80 layers, hidden 8192, 64 heads, 8 KV heads, intermediate
# 29568, vocabulary 152064, embeddings not tied (72.7 B parameters).
QWEN2_72B = {"layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8, "ffn_hidden": 29568,
             "mlp": "swiglu", "vocab": 152064, "seq_len": 16384}
MODELS = {"Qwen2-7B": QWEN2_7B, "Qwen2.5-32B": QWEN25_32B, "Qwen2-72B": QWEN2_72B}
GIB = 1024 ** 3


@dataclass(frozen=True)
class Case:
    name: str           # what the configuration is
    section: str        # the README's test heading
    gpus: int           # tensor-parallel GPUs
    kv_cache_gib: float  # per GPU, as the log states
    prompts: int
    total_input: int
    total_output: int
    ttft_ms: float      # measured mean
    tpot_ms: float      # measured mean
    saturated: bool     # the KV cache cannot hold every request at once
    model: str = "Qwen2-7B"  # a key of MODELS

    @property
    def input_len(self) -> int:
        return round(self.total_input / self.prompts)

    @property
    def output_len(self) -> int:
        return round(self.total_output / self.prompts)

    @property
    def e2e_ms(self) -> float:  # derived (see the module's docstring)
        return self.ttft_ms + self.tpot_ms * (self.output_len - 1)


CASES = [
    Case("1 x A100, 1 request", "Test 5", 1, 24.83, 1, 1024, 1024, 36.23, 11.75, False),
    Case("1 x A100, 100 requests", "Test 5", 1, 24.83, 100, 102140, 101590, 3983.10, 25.26, False),
    Case("1 x A100, 200 requests", "Test 5", 1, 24.83, 200, 204007, 200419, 3158.70, 40.34, False),
    Case("1 x A100, 5 GiB KV cache, 100 requests", "Test 4", 1, 5.01, 100, 102140, 101578, 6772.41, 28.69, True),
    Case("1 x A100, 5 GiB KV cache, 200 requests", "Test 4", 1, 5.01, 200, 204007, 200083, 28904.67, 29.87, True),
    Case("TP2 over PCIe, 1 request", "Test 2", 2, 12.02, 1, 1024, 1024, 34.69, 8.82, False),
    Case("TP2 over PCIe, 100 requests", "Test 2", 2, 12.02, 100, 102140, 101694, 5023.97, 28.98, False),
    Case("TP2 over PCIe, 200 requests", "Test 2", 2, 12.02, 200, 204007, 201481, 3490.37, 49.23, False),
    # Qwen2.5-32B on two GPUs of the same node (8.22 GiB of KV cache each: 67,338 tokens, so
    # from 33 requests of 2,048 on the cache is full) and on one (9.70 GiB: 19 requests).
    Case("32B, TP2 over PCIe, 1 request", "Test 6", 2, 8.22, 1, 1024, 1024, 61.26, 29.21, False, "Qwen2.5-32B"),
    Case("32B, TP2 over PCIe, 10 requests", "Test 6", 2, 8.22, 10, 10239, 10240, 1853.66, 39.38, False, "Qwen2.5-32B"),
    Case("32B, TP2 over PCIe, 15 requests", "Test 6", 2, 8.22, 15, 15340, 15360, 213.45, 39.44, False, "Qwen2.5-32B"),
    Case("32B, TP2 over PCIe, 20 requests", "Test 6", 2, 8.22, 20, 20460, 20480, 284.31, 42.81, False, "Qwen2.5-32B"),
    Case("32B, TP2 over PCIe, 30 requests", "Test 6", 2, 8.22, 30, 30699, 30720, 5368.61, 50.04, False, "Qwen2.5-32B"),
    Case("32B, TP2 over PCIe, 50 requests", "Test 6", 2, 8.22, 50, 50977, 51200, 6119.18, 68.64, True, "Qwen2.5-32B"),
    Case("32B, TP2 over PCIe, 100 requests", "Test 6", 2, 8.22, 100, 102140, 102400, 44143.73, 80.12, True, "Qwen2.5-32B"),
    Case("32B, 1 x A100, 10 requests", "Test 7", 1, 9.70, 10, 10239, 10240, 2017.23, 51.64, False, "Qwen2.5-32B"),
    Case("32B, 1 x A100, 50 requests", "Test 7", 1, 9.70, 50, 50977, 51200, 21486.84, 79.95, True, "Qwen2.5-32B"),
    Case("32B, 1 x A100, 75 requests", "Test 7", 1, 9.70, 75, 76558, 76800, 61850.53, 76.73, True, "Qwen2.5-32B"),
    Case("32B, 1 x A100, 100 requests", "Test 7", 1, 9.70, 100, 102140, 102400, 97867.77, 77.73, True, "Qwen2.5-32B"),
    # Qwen2-72B's 145 GB of weights on two GPUs of the node, 6.77 GiB of KV cache each (44,360
    # tokens: 21 requests of 2,048).
    Case("72B, TP2 over PCIe, 1 request", "Test 8", 2, 6.77, 1, 1024, 1024, 93.18, 58.00, False, "Qwen2-72B"),
    Case("72B, TP2 over PCIe, 10 requests", "Test 8", 2, 6.77, 10, 10239, 10240, 3842.51, 73.04, False, "Qwen2-72B"),
    Case("72B, TP2 over PCIe, 30 requests", "Test 8", 2, 6.77, 30, 30699, 30156, 10949.72, 104.71, True, "Qwen2-72B"),
    Case("72B, TP2 over PCIe, 50 requests", "Test 8", 2, 6.77, 50, 50977, 50373, 26588.12, 123.66, True, "Qwen2-72B"),
    Case("72B, TP2 over PCIe, 100 requests", "Test 8", 2, 6.77, 100, 102140, 99612, 142448.58, 139.24, True, "Qwen2-72B"),
]


def scenario(case: Case, trace: Path) -> dict:
    """The case as a clustersim scenario: the requests of `trace` on one fixed replica."""
    return {
        "name": "vllm_replay",
        "seed": 1,
        # PCIe Gen4 x16 (A100 80GB PCIe datasheet: 64 GB/s both ways); no P2P, as the log says:
        # NCCL stages the all-reduces through host memory (hardware.node.p2p).
        "hardware": {"gpu": "A100-80GB-PCIe",
                     "node": {"gpus": 8, "fabric": "pcie", "pcie_bandwidth": "32GB/s", "p2p": False}},
        "workload": {
            "kind": "serving",
            "model": MODELS[case.model],
            "arrivals": {"process": "trace", "trace": str(trace)},
            "replica": {"gpus": case.gpus, "max_num_seqs": 256, "max_num_batched_tokens": 2048,
                        "kv_cache": case.kv_cache_gib * GIB * case.gpus},
        },
        # The price only scales the cost, which is not compared.
        "fleet": {"autoscaler": {"policy": "fixed", "replicas": 1}, "prices": {"on_demand": "$10/h"}},
        "run": {"until": "2h"},
    }


def simulate(cs, case: Case, overrides: dict | None = None) -> dict:
    """Mean TTFT, TPOT and end-to-end latency (ms) of the case's replay."""
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.csv"
        with trace.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["timestamp", "prompt_tokens", "output_tokens"])
            for _ in range(case.prompts):
                w.writerow([0, case.input_len, case.output_len])
        doc = scenario(case, trace)
        for path, value in (overrides or {}).items():
            node = doc
            *head, last = path.split(".")
            for key in head:
                node = node.setdefault(key, {})
            node[last] = value
        s = cs.run(doc).summary["serving"]
    assert s["completed"] == case.prompts, s["completed"]
    return {"ttft_ms": s["ttft"]["mean_s"] * 1e3, "tpot_ms": s["tpot"]["mean_s"] * 1e3,
            "e2e_ms": s["latency_mean_s"] * 1e3, "preemptions": s["llm"]["preemptions"]}


def rows(cs) -> list[dict]:
    out = []
    for case in CASES:
        sim = simulate(cs, case)
        out.append({"case": case, "sim": sim,
                    "tpot_ratio": sim["tpot_ms"] / case.tpot_ms, "e2e_ratio": sim["e2e_ms"] / case.e2e_ms})
    return out


def serving_section(cs) -> str:
    """The serving section of the validation page: a markdown table, one row per metric."""
    table = ["| source | configuration | metric | measured | simulated | ratio |", "|---|---|---|---|---|---|"]
    errors = {"one GPU": [], "TP2": []}
    within = {"one GPU": 0, "TP2": 0}   # runs within 10% on both figures
    for r in rows(cs):
        c, s = r["case"], r["sim"]
        where = f"[{SOURCE[0]}]({SOURCE[1]}) ({c.section})"
        config = (f"{c.name}: {c.model} BF16, {c.prompts} x {c.input_len}/{c.output_len} tokens at once, "
                  f"KV {c.kv_cache_gib} GiB/GPU{' (saturated)' if c.saturated else ''}")
        table.append(f"| {where} | {config} | mean TPOT | {c.tpot_ms:.2f} ms | {s['tpot_ms']:.2f} ms | {r['tpot_ratio']:.3f} |")
        table.append(f"| {where} | {config} | mean latency (derived) | {c.e2e_ms / 1e3:.2f} s | {s['e2e_ms'] / 1e3:.2f} s "
                     f"| {r['e2e_ratio']:.3f} |")
        group = "TP2" if c.gpus > 1 else "one GPU"
        pair = [abs(r["tpot_ratio"] - 1), abs(r["e2e_ratio"] - 1)]
        errors[group] += pair
        within[group] += max(pair) <= 0.10
    every = errors["one GPU"] + errors["TP2"]

    def mae(e: list) -> str:
        return f"{100 * sum(e) / len(e):.1f}%"
    runs = {g: len(e) // 2 for g, e in errors.items()}
    return (
        "## Serving: vLLM\n\n"
        "Published vLLM 0.10.1.1 runs (V1 engine, its defaults: chunked prefill, prefix caching, "
        "2,048 batched tokens, 256 sequences) of Qwen2-7B-Instruct, Qwen2.5-32B and Qwen2-72B on "
        "A100 80 GB PCIe GPUs (the two-GPU runs tensor parallel over PCIe without P2P), every "
        "request sent at once; replayed by `scripts/validation_serving.py` (the source publishes "
        "mean TTFT and TPOT per run, not per-request timings: the latency is derived as mean TTFT + "
        "mean TPOT x (outputs - 1)).\n\n" + "\n".join(table) +
        f"\n\nMean absolute error over these {len(every)} figures: {mae(every)} (one GPU: {mae(errors['one GPU'])} "
        f"over {len(errors['one GPU'])}; TP2: {mae(errors['TP2'])} over {len(errors['TP2'])}). Runs within 10% on "
        f"both figures: {within['one GPU']} of {runs['one GPU']} on one GPU, {within['TP2']} of {runs['TP2']} "
        "with tensor parallelism.\n")


# Serving on chips that are not GPUs: AWS's published Neuron runs on Trainium and Inferentia2.
#
# The sources: data/published_neuron_serving.json, every row of the Neuron SDK 2.18 decoder tables
# (transformers-neuronx, April 2024; the last such tables AWS published), facts transcribed with
# their source: models on one trn1.32xlarge (16 Trainium chips, tensor parallel over their 32
# NeuronCores) or one inf2.48xlarge (12 Inferentia2 chips, TP 24 over their NeuronCores), P50 TTFT
# and P50 TPOT per input/output length. Every row of the latency tables (batch 1, one request at
# a time) whose weights are BF16 is replayed as one request on one replica of the instance's chips
# (the catalog's server: a 4 x 4 NeuronLink torus of 16 Trainium1, a ring of 12 Inferentia2) with
# the engine's defaults; nothing is fitted to these rows. transformers-neuronx splits the heads
# over its tp_degree, the NeuronCores (32 and 24), padding the query heads up to a multiple of it
# and replicating KV heads over it (transformers_neuronx/utils.py, get_qkv_padding; decoder.py
# switches a GQA model whose KV heads do not divide the degree to REPLICATED_HEADS): the replica's
# `ranks_per_gpu` (2, a rank per NeuronCore) and `pad_heads` (Llama 3 70B on inf2: 64 query heads
# padded to 72, 8 KV heads held as 24; on trn1 as 32; Llama 2 7B's 32 heads on inf2 as 48).
# The prompt runs as one context-encoding pass with its attention unfused (`flash_attention`
# false): transformers-neuronx 0.10 (the Neuron 2.18 release, aws-neuron/transformers-neuronx at
# 0623de2) builds the context graph's attention as separate HLO ops, the scores of Q K^T masked,
# softmaxed and multiplied by V (llama/hlo.py, "Multi-Token Context Encoding"; layers/attention.py,
# score, mask, context_combined); its NKI flash attention arrived with the next release (c8d6bdc).
# The prompt is not padded. Without `context_length_estimate` (the samples the tables' Scripts
# column names, aws-neuron-samples at 22c6cac, set none but CodeLlama's) the context buckets are
# half the token buckets, which are powers of two from 128 up to the table's sequence length
# (bucket.py, context_sizes and token_sizes; utils.py, power_of_two_bucket_sizes); CodeLlama's
# sample lists its own, 64 to 8,192 then 12,288 and 16,384. Every prompt of the tables (128 to
# 8,192 tokens) is such a bucket, and base.py's context() runs a prompt that fills its bucket
# as one pass of exactly its length: no row pays bucket padding.
# The throughput-optimized tables' rows (static batches of 4 or 8 identical prompts sent at once,
# the same tp degrees) are replayed the same way with the `static_batch` scheduler, as
# transformers-neuronx's sample loop runs a batch: the batch's prompts in one context pass, then
# decode steps of every row until the last is done. Its KV cache is transformers-neuronx's dense
# array, batch x n_positions (the row's sequence length: kv_layout dense_slots), each decode step
# reading it up to the token bucket that holds the position (docs/serving.md says how).
# Left out: Llama 3 8B's rows, whose weights are int8 (the engine does not model them; one pair
# is the check below, NEURON_CROSS_CHECKS); the dataset's `not_replayed` says so.
NEURON_DATA = ROOT / "data" / "published_neuron_serving.json"


@dataclass(frozen=True)
class NeuronInstance:
    source: str      # the published page
    url: str
    gpu: str         # the catalog chip
    chips: int       # per instance: one replica
    instance: str    # data/instance_prices.json
    cores: int = 2   # NeuronCores per chip (NeuronCore-v2): the table's TP degree is chips x cores


def _neuron_data() -> dict:
    return json.loads(NEURON_DATA.read_text())


def _instance(table: str, gpu: str, chips: int) -> NeuronInstance:
    src = _neuron_data()["sources"][table]
    return NeuronInstance(src["title"], src["url"], gpu, chips, src["instance"])


TRN1 = _instance("trn1_latency", "Trainium1", 16)      # TP degree 32 NeuronCores in the table
INF2 = _instance("inf2_latency", "Inferentia2", 12)    # TP degree 24 NeuronCores in the table
TRN1_BATCH = _instance("trn1_throughput", "Trainium1", 16)    # the throughput tables: the same degrees
INF2_BATCH = _instance("inf2_throughput", "Inferentia2", 12)
# The models without a preset, with their config.json's shapes (the dataset names the source).
NEURON_SHAPES = {name: m["shape"] for name, m in _neuron_data()["models"].items() if "shape" in m}


@dataclass(frozen=True)
class NeuronRun:
    machine: NeuronInstance
    model: str       # the preset, or a key of NEURON_SHAPES
    input_len: int
    output_len: int
    ttft_ms: float   # P50, as published
    tpot_ms: float   # P50, as published
    release: str = field(default="", compare=False)   # the row's Neuron version
    batch: int = 1   # prompts sent at once, run as one static batch
    sequence_length: int = field(default=0, compare=False)   # the row's n_positions
    output_tps: float = field(default=0.0, compare=False)   # the run's output tokens per second
    contradiction: str = field(default="", compare=False)   # source_contradiction(row), or ""


# AWS's rows against themselves. A row is one benchmark run of `batch` requests, and its output-token
# throughput is batch x output tokens over the run's time, TTFT + (output - 1) x the mean time per
# output token; so the row's three figures give that mean, (batch x output / throughput - TTFT) /
# (output - 1), and on 71 of the 78 rows it lies at or below the row's P99 TPOT (below the P50 where
# decode buckets make the early tokens faster than the median one). A mean above the P99 is possible
# only if the slowest 1% of the tokens average at least 100 x the mean - 99 x the P99 (the other 99%
# at most the P99): on six rows that is 5 to 130 times the P99, a stall the row's TTFT and TPOT do not
# show; on a seventh the P99 TPOT is below its P50, which no run gives. Which of such a row's figures
# is off (or whether its run stalled) is not published; its figures are shown but kept out of the
# means that say "whose figures agree".
def source_contradiction(row: dict) -> str:
    """Why a row's figures do not fit one steady run (they disagree with one another), or ""."""
    if row["tpot_p99_ms"] < row["tpot_p50_ms"]:
        return f"P99 TPOT {row['tpot_p99_ms']:.2f} ms below its P50 {row['tpot_p50_ms']:.2f} ms"
    run_s = row["batch"] * row["output"] / row["output_tokens_per_s"]
    mean_ms = (run_s - row["ttft_p50_ms"] / 1e3) / (row["output"] - 1) * 1e3
    if mean_ms > row["tpot_p99_ms"]:
        tail_ms = 100 * mean_ms - 99 * row["tpot_p99_ms"]   # the least mean of the slowest 1%
        return (f"{row['output_tokens_per_s']:.1f} tokens/s means {mean_ms:.2f} ms a token on average, above its "
                f"P99 TPOT {row['tpot_p99_ms']:.2f} ms (P50 {row['tpot_p50_ms']:.2f} ms): its slowest 1% of "
                f"tokens would average at least {tail_ms:.0f} ms, {tail_ms / row['tpot_p99_ms']:.1f} times the P99")
    return ""


def _published_runs(check: bool, tables: dict | None = None) -> list[NeuronRun]:
    """The rows of `tables` (the latency tables unless given) in the dataset's order: the BF16 ones
    (check False), or the checks."""
    machines = tables or {"trn1_latency": TRN1, "inf2_latency": INF2}
    return [NeuronRun(machines[r["table"]], r["model"], r["input"], r["output"], r["ttft_p50_ms"], r["tpot_p50_ms"],
                      r["neuron"], r["batch"], r["sequence_length"], r["output_tokens_per_s"],
                      source_contradiction(r))
            for r in _neuron_data()["runs"]
            if r["table"] in machines and (r.get("check", False) if check else r["weights"] == "bf16")]


NEURON_RUNS = _published_runs(check=False)   # every BF16 row of both latency tables (38)
# Every BF16 row of both throughput tables (26): static batches of 4 or 8.
NEURON_BATCH_RUNS = _published_runs(check=False, tables={"trn1_throughput": TRN1_BATCH, "inf2_throughput": INF2_BATCH})


def neuron_scenario(run: NeuronRun, trace: Path) -> dict:
    """The run's requests (one, or a static batch) of its model and lengths on one instance's chips."""
    model = dict(NEURON_SHAPES[run.model]) if run.model in NEURON_SHAPES else {"preset": run.model}
    doc = {
        "name": "neuron_replay", "seed": 1,
        "hardware": {"gpu": run.machine.gpu},   # its default node: the instance's chips
        "workload": {
            "kind": "serving", "model": model, "precision": "bf16",
            "arrivals": {"process": "trace", "trace": str(trace)},
            # Batch 1, the whole prompt in one context-encoding pass (Neuron compiles for the
            # table's sequence length, whose largest context bucket, half of it, holds the
            # prompt: 8,192 tokens of a 16,384 one), as the published configuration runs; heads
            # padded and KV heads copied over the NeuronCores, the prompt's attention unfused, as
            # transformers-neuronx 0.10 does.
            "replica": {"gpus": run.machine.chips, "ranks_per_gpu": run.machine.cores, "max_num_seqs": 1,
                        "max_num_batched_tokens": max(4096, run.input_len), "pad_heads": True,
                        "flash_attention": False},
        },
        "fleet": {"autoscaler": {"policy": "fixed", "replicas": 1}, "instance": run.machine.instance},
        "run": {"until": "1h"},
    }
    if run.batch > 1:
        # The batch's prompts sent at once and run as transformers-neuronx's sample loop runs
        # them: one context pass of the batch, decode steps of every row until the last is done,
        # over its dense cache of batch x n_positions read up to the position's token bucket.
        replica = doc["workload"]["replica"]
        del replica["max_num_batched_tokens"]   # a static batch's context pass takes its prompts whole
        replica.update({"scheduler": "static_batch", "max_num_seqs": run.batch, "kv_layout": "dense_slots",
                        "dense_slot_tokens": run.sequence_length})
    return doc


def simulate_neuron(cs, run: NeuronRun) -> dict:
    """TTFT and TPOT (ms) of the run's requests, their means (every request of a batch is alike:
    the mean is each one's value, and the P50)."""
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "requests.csv"
        trace.write_text("timestamp,prompt_tokens,output_tokens\n" +
                         f"0,{run.input_len},{run.output_len}\n" * run.batch)
        s = cs.run(neuron_scenario(run, trace)).summary["serving"]
    assert s["completed"] == run.batch, s["completed"]
    return {"ttft_ms": s["ttft"]["mean_s"] * 1e3, "tpot_ms": s["tpot"]["mean_s"] * 1e3}


def neuron_rows(cs, runs: list[NeuronRun] | None = None) -> list[dict]:
    """One dict per published figure of `runs` (the latency tables' unless given): run, metric,
    measured, simulated, ratio."""
    out = []
    for run in NEURON_RUNS if runs is None else runs:
        sim = simulate_neuron(cs, run)
        for metric, key in (("P50 TTFT", "ttft_ms"), ("P50 TPOT", "tpot_ms")):
            out.append({"run": run, "metric": metric, "measured": getattr(run, key), "simulated": sim[key],
                        "ratio": sim[key] / getattr(run, key)})
    return out


def neuron_throughput_rows(results: list[dict]) -> list[dict]:
    """Each run of `results` (neuron_rows), its output tokens per second published and simulated: its
    requests' output over TTFT + (output - 1) x TPOT (how the engine defines TPOT: a request's latency
    exactly; a batch's requests run alike)."""
    out = []
    for run in dict.fromkeys(r["run"] for r in results):
        ttft, tpot = (next(r["simulated"] for r in results if r["run"] == run and r["metric"] == m)
                      for m in ("P50 TTFT", "P50 TPOT"))
        simulated = run.batch * run.output_len / ((ttft + (run.output_len - 1) * tpot) / 1e3)
        out.append({"run": run, "measured": run.output_tps, "simulated": simulated,
                    "ratio": simulated / run.output_tps})
    return out


# The trn1 rows against the inf2 rows of the same model and lengths. A Trainium1 and an
# Inferentia2 chip are the same two NeuronCore-v2 with the same HBM (the catalog's rates,
# docs/hardware.md), and a trn1.32xlarge has 16 of them to an inf2.48xlarge's 12, so a prompt's
# TTFT on trn1 over its TTFT on inf2 can be about 12/16, less where the heads pad less over 32
# cores than over 24 (Llama 2 7B's 32: none against 48), more where they pad more (Llama 2 13B's
# 40: 64 against 48, two a core on both), never above 1. Published, it is 2.4 to 2.6 on every
# Neuron 2.18.0 row of a 7B or 13B model with a sequence length of 8,192 or 16,384 (Llama 2 13B's,
# CodeLlama 13B's, whose layers are the same, and Mistral 7B v0.2's), while the same release's
# throughput-optimized tables, static batches of the same prompts, give 0.78-0.94, and the 2.18.1
# row of Llama 3 8B, whose layers are Mistral 7B v0.2's, 0.73. Llama 3 8B's rows store the weights
# in int8 and multiply in BF16 ("Matmult-BF16"), which the engine does not model: its check is
# replayed with BF16 weights, a difference of the weights' read (16 GB over the chips, under 2.5 ms
# at these rates) in a TTFT of 150-200 ms, and is not in the section's mean.
NEURON_CROSS_CHECKS = [(run.release, "int8", run, inf2) for run in _published_runs(check=True) if run.machine == TRN1
                       for inf2 in _published_runs(check=True)
                       if inf2.machine == INF2 and (inf2.model, inf2.input_len, inf2.output_len)
                       == (run.model, run.input_len, run.output_len)]


def neuron_cross_check(cs, results: list[dict]) -> list[dict]:
    """TTFT on trn1 over TTFT on inf2, published and simulated, for every prompt both tables run on
    the same model, and for the check above: one dict per pair."""
    ttft = {(r["run"].machine.gpu, r["run"].model, r["run"].input_len, r["run"].output_len): r
            for r in results if r["metric"] == "P50 TTFT"}
    pairs = []
    for (chip, model, n_in, n_out), trn1 in ttft.items():
        inf2 = ttft.get((INF2.gpu, model, n_in, n_out))
        if chip == TRN1.gpu and inf2 is not None:
            pairs.append({"model": model, "release": trn1["run"].release, "weights": "BF16",
                          "tokens": f"{n_in:,}/{n_out:,}",
                          "published": (trn1["measured"], inf2["measured"]),
                          "simulated": (trn1["simulated"], inf2["simulated"])})
    for release, weights, trn1, inf2 in NEURON_CROSS_CHECKS:
        pairs.append({"model": trn1.model, "release": release, "weights": weights, "check": True,
                      "tokens": f"{trn1.input_len:,}/{trn1.output_len:,}",
                      "published": (trn1.ttft_ms, inf2.ttft_ms),
                      "simulated": (simulate_neuron(cs, trn1)["ttft_ms"], simulate_neuron(cs, inf2)["ttft_ms"])})
    return pairs


def batched_trn1_over_inf2() -> list[dict]:
    """The throughput-optimized tables' trn1 over inf2 TTFT for the same model, batch and lengths
    (both replayed: neuron_rows of NEURON_BATCH_RUNS)."""
    rows = [r for r in _neuron_data()["runs"] if r["table"].endswith("_throughput") and r["weights"] == "bf16"]
    out = []
    for t in (r for r in rows if r["table"] == "trn1_throughput"):
        for i in (r for r in rows if r["table"] == "inf2_throughput"):
            if all(t[k] == i[k] for k in ("model", "batch", "input", "output")):
                out.append({"model": t["model"], "batch": t["batch"], "tokens": f"{t['input']:,}/{t['output']:,}",
                            "published": (t["ttft_p50_ms"], i["ttft_p50_ms"])})
    return out


def neuron_throughput_table(rows: list[dict]) -> str:
    table = ["| configuration | published tokens/s | simulated tokens/s | ratio | figures agree |",
             "|---|---:|---:|---:|---|"]
    for r in rows:
        run = r["run"]
        batch = "batch 1" if run.batch == 1 else f"static batch of {run.batch}"
        table.append(f"| {run.model} BF16, {run.machine.gpu}, {batch}, {run.input_len}/{run.output_len} tokens "
                     f"| {r['measured']:.2f} | {r['simulated']:.2f} | {r['ratio']:.3f} "
                     f"| {'no' if run.contradiction else 'yes'} |")
    return "\n".join(table)


def neuron_cross_check_table(pairs: list[dict]) -> str:
    table = ["| model | Neuron release, weights | tokens in/out | published TTFT trn1 / inf2 | trn1 over inf2 "
             "| simulated trn1 / inf2 | trn1 over inf2 |", "|---|---|---:|---:|---:|---:|---:|"]
    for p in pairs:
        (pt, pi), (st, si) = p["published"], p["simulated"]
        if p.get("check") and not any(row.startswith("| checks") for row in table):
            table.append("| checks, not in the mean | | | | | | |")
        table.append(f"| {p['model']} | {p['release']}, {p['weights']} | {p['tokens']} | {pt:,.1f} / {pi:,.1f} ms "
                     f"| {pt / pi:.2f} | {st:,.1f} / {si:,.1f} ms | {st / si:.2f} |")
    return "\n".join(table)


def prompt_step(results: list[dict], gpu: str, model: str, short: int, long: int) -> tuple[float, float] | None:
    """Published and simulated TTFT of the `long`-token prompt over the `short` one (batch 1, output
    as long as the prompt), or None when a table lacks either row."""
    ttft = {(r["run"].input_len, r["run"].output_len): r for r in results if r["metric"] == "P50 TTFT"
            and r["run"].machine.gpu == gpu and r["run"].model == model}
    a, b = ttft.get((short, short)), ttft.get((long, long))
    return None if a is None or b is None else (b["measured"] / a["measured"], b["simulated"] / a["simulated"])


def neuron_table(results: list[dict]) -> str:
    """One row per published figure of `results`."""
    table = ["| source | configuration | metric | measured | simulated | ratio |", "|---|---|---|---|---|---|"]
    for r in results:
        m, run = r["run"].machine, r["run"]
        batch = f"batch 1" if run.batch == 1 else f"static batch of {run.batch}, sequence length {run.sequence_length:,}"
        config = (f"{run.model} BF16, {m.chips} x {m.gpu} ({m.instance.removeprefix('aws.')}), "
                  f"TP {m.chips * m.cores} NeuronCores, {batch}, {run.input_len}/{run.output_len} tokens")
        table.append(f"| [{m.source}]({m.url}) | {config} | {r['metric']} | {r['measured']:.2f} ms "
                     f"| {r['simulated']:.2f} ms | {r['ratio']:.3f} |")
    return "\n".join(table)


def neuron_section(cs) -> str:
    """The Neuron section of the validation page: one row per published figure."""
    results = neuron_rows(cs)
    batched_rows = neuron_rows(cs, NEURON_BATCH_RUNS)
    every = results + batched_rows

    def error(rs):
        return 100 * sum(abs(r["ratio"] - 1) for r in rs) / len(rs)
    worst = "; ".join(f"{r['run'].model} on {r['run'].machine.gpu}, {r['run'].input_len:,}/{r['run'].output_len:,} "
                      f"tokens, batch {r['run'].batch}, {r['metric']} x{r['ratio']:.2f}"
                      for r in sorted(every, key=lambda r: -abs(r["ratio"] - 1))[:4])
    pairs = neuron_cross_check(cs, results)
    slow = {(p["model"], p["tokens"]) for p in pairs if p["published"][0] > p["published"][1]}
    agree = [r for r in every if not r["run"].contradiction]
    contradicted = [run for run in NEURON_RUNS + NEURON_BATCH_RUNS if run.contradiction]
    throughput = neuron_throughput_rows(every)
    throughput_agree = [r for r in throughput if not r["run"].contradiction]
    l3_trn1 = next(p["simulated"][0] for p in pairs if p["model"] == "llama3-8b")
    (_, _, l3, _), = NEURON_CROSS_CHECKS
    mistral = next(r["run"] for r in results if r["run"].model == "mistral-7b-v0.2" and r["run"].machine == TRN1)
    published = [p["published"][0] / p["published"][1] for p in pairs]
    sim_ratios = [p["simulated"][0] / p["simulated"][1] for p in pairs]
    batched = batched_trn1_over_inf2()

    def span(xs, digits=2):
        return f"{min(xs):.{digits}f}-{max(xs):.{digits}f}"

    def chip(rs, gpu, metric=None):
        return [r for r in rs if r["run"].machine.gpu == gpu and metric in (None, r["metric"])]
    by_chip = "; ".join(f"{m.gpu} {error(chip(every, m.gpu)):.1f}% over {len(chip(every, m.gpu))}" for m in (TRN1, INF2))
    llama = [r for r in every if r["run"].model.startswith("llama")]
    others = [r for r in every if not r["run"].model.startswith("llama")]
    ttfts = [r for r in every if r["metric"] == "P50 TTFT"]
    tpots = [r for r in every if r["metric"] == "P50 TPOT"]
    by_table = "; ".join(f"{m.gpu} TTFT {error(chip(batched_rows, m.gpu, 'P50 TTFT')):.1f}%, TPOT "
                         f"{error(chip(batched_rows, m.gpu, 'P50 TPOT')):.1f}%" for m in (TRN1, INF2))

    def ratios(rs):
        return span([r["ratio"] for r in rs])

    def long_ttfts(rs, gpu):   # the TTFTs of the prompts the trn1-against-inf2 comparison questions
        return [r for r in chip(rs, gpu, "P50 TTFT")
                if (r["run"].model, f"{r['run'].input_len:,}/{r['run'].output_len:,}") in slow]

    def per_prompt_ms(rs, gpu):   # Llama 2 13B's 4,096-token prompt: published TTFT over the batch
        r, = [r for r in long_ttfts(rs, gpu) if r["run"].model == "llama2-13b" and r["run"].input_len == 4096]
        return r["measured"] / r["run"].batch
    steps = [(gpu, model, prompt_step(results, gpu, model, 1024, 2048)) for gpu in (TRN1.gpu, INF2.gpu)
             for model in ("llama2-70b", "llama3-70b")]
    steps = "; ".join(f"{model} on {gpu} x{p:.2f} published, x{s:.2f} simulated" for gpu, model, ps in steps
                      if ps is not None for p, s in (ps,))
    short = [r for r in results if r["run"].machine == INF2 and r["run"].input_len == 128 and r["metric"] == "P50 TTFT"
             and r["run"].model not in ("llama2-70b", "llama3-70b")]
    short_trn1 = [r for r in results if r["run"].machine == TRN1 and r["run"].input_len == 128
                  and r["metric"] == "P50 TTFT" and r["run"].model == "llama2-7b"]
    return (
        "## Serving: AWS Neuron on Trainium and Inferentia2\n\n"
        "AWS's published latencies on one trn1.32xlarge (16 Trainium chips) and one inf2.48xlarge "
        "(12 Inferentia2 chips), Neuron SDK 2.18, transformers-neuronx, BF16 weights, tensor parallel "
        "over the instance's chips, batch 1, and its throughput-optimized runs, static batches of 4 or 8 "
        "prompts (the dataset, every row of AWS's four 2.18 decoder tables with "
        "its source: `data/published_neuron_serving.json`); one request (or one batch) replayed per row by "
        "`scripts/validation_serving.py` on a replica of the instance's chips with the engine's "
        "defaults: the HBM's achievable share (0.7) and the iteration overhead (0.5 ms) are the GPU and "
        "vLLM figures, for AWS publishes no achieved HBM read rate of its chips (its NKI performance guide "
        "calls 60% of the bandwidth good in practice for a memory-bound kernel, a threshold, not a "
        "measurement) nor a per-step cost of transformers-neuronx's runtime; the prefill's GEMMs run at "
        "the engine's 0.6 of peak, under the 0.830 AWS's NKI matmul reaches on these cores "
        "([hardware](../docs/hardware.md)). The heads are split over the table's TP degree, the "
        "instance's NeuronCores (two a chip: `ranks_per_gpu` 2), the query heads padded up to a multiple "
        "of it and the KV heads replicated over it (`pad_heads`), as transformers-neuronx does. Each "
        "tensor-parallel all-reduce pays Neuron's collective latencies over the faster of the ring, whose "
        "steps are the NeuronCores' (the runtime's ranks: 46 on 24 cores, 62 on 32), and the all-to-all "
        "the Neuron runtime runs since 2.14.8 (two steps: 58.0 us for a decode step's; its release notes "
        "enable it for 16 NeuronCores of a trn1, and that it serves these tables' 32 and 24 is assumed; "
        "[network](../docs/network.md#aws-neurons-collectives-ccom)). The prompt's attention is unfused "
        "(`flash_attention` false), as transformers-neuronx 0.10 builds its context-encoding graph: "
        "every score matrix computed whole and moved through HBM, 8 bytes a score. No prompt is padded: "
        "transformers-neuronx 0.10's context buckets are half its token buckets (powers of two from 128 "
        "up to the row's sequence length), 64 up to half of it, unless a sample lists its own "
        "(CodeLlama's: 64 to 8,192, "
        "12,288, 16,384), and a prompt that fills its bucket runs as one pass of its own length "
        "(aws-neuron/transformers-neuronx at 0623de2: bucket.py, base.py's `context`); every prompt of "
        "the tables, 128 to 8,192 tokens, is such a bucket. Every BF16 row of both latency tables is "
        "replayed, none chosen for its result: Llama 2 7B, 13B and 70B, Llama 3 70B, Mistral 7B v0.2 and "
        "CodeLlama 13B (their shapes from their config.json files, in the dataset). Every BF16 row of the two "
        "throughput-optimized tables (static batches of 4 or 8 identical prompts sent at once, the same TP "
        "degrees) is replayed too, in the second table, with the `static_batch` scheduler as "
        "transformers-neuronx's sample loop runs a batch: the batch's prompts in one context pass, then "
        "decode steps of every row until the last is done, over its dense cache of batch x the row's "
        "sequence length (`kv_layout` dense_slots), each step reading it up to the token bucket that "
        "holds the position ([serving](../docs/serving.md#static-batches)). Not replayed: Llama 3 "
        "8B's rows, whose weights are int8 (one pair is a check below). The prefill (TTFT) stays faster "
        "than published on every row, most for the 13B models' and Mistral's long prompts on trn1 "
        "(2.4-2.6 times the same rows on inf2's fewer chips, below) and in every static batch of such "
        "prompts on either instance, and at 128 tokens on inf2.\n\n"
        "**Latency tables (batch 1).**\n\n" + neuron_table(results) +
        "\n\n**Throughput tables (static batches).**\n\n" + neuron_table(batched_rows) +
        f"\n\nMean absolute error over these {len(every)} figures: {error(every):.1f}% ({by_chip}; "
        f"TTFT {error(ttfts):.1f}%, TPOT {error(tpots):.1f}%; the latency tables' {len(results)} figures "
        f"{error(results):.1f}%, the throughput tables' {len(batched_rows)} {error(batched_rows):.1f}%: {by_table}; "
        f"Llama 2 and 3 {error(llama):.1f}% over {len(llama)}, "
        f"Mistral 7B v0.2 and CodeLlama 13B {error(others):.1f}% over {len(others)}); largest "
        f"{100 * max(abs(r['ratio'] - 1) for r in every):.1f}%. The largest errors: {worst}. Over the "
        f"{len(throughput) - len(contradicted)} rows whose published figures agree with one another (below): "
        f"{error(agree):.1f}% over {len(agree)} figures (TTFT "
        f"{error([r for r in agree if r['metric'] == 'P50 TTFT']):.1f}%, TPOT "
        f"{error([r for r in agree if r['metric'] == 'P50 TPOT']):.1f}%).\n\n"
        "**Output-token throughput.** Each row of AWS's tables also prints the run's output tokens per second "
        "(`output_tokens_per_s` in the dataset): its requests' output tokens over the run's time, TTFT + "
        "(output - 1) x the mean time per output token, so the row's figures give that mean, (batch x output "
        "/ throughput - TTFT) / (output - 1). In a run whose tokens are as steady as its P50 and P99 TPOT say, "
        "it lies at or below the P99 (below the P50 where the decode buckets make early tokens faster than "
        "the median one); above the P99 it needs the run's slowest 1% of tokens to average at least 100 x the "
        "mean - 99 x the P99, a stall the row's TTFT and TPOT do not show. The "
        "simulated throughput is the replayed requests' output over their TTFT + (output - 1) x TPOT. Mean "
        f"absolute error over the {len(throughput)} rows: {error(throughput):.1f}%; over the "
        f"{len(throughput_agree)} whose figures agree with one another: {error(throughput_agree):.1f}% "
        f"(x{span([r['ratio'] for r in throughput_agree])}). On {len(contradicted)} rows they do not: "
        + "; ".join(f"{run.model} on {run.machine.gpu}, {run.input_len:,}/{run.output_len:,} tokens (Neuron "
                    f"{run.release}): {run.contradiction}" for run in contradicted) +
        ". Which of such a row's figures is off (or whether its run stalled) is not published; its figures "
        "stay in the tables "
        "and in the means over every row, and out of the means over the rows that agree. The five trn1 TTFTs "
        "the comparison with inf2 below questions are among them.\n\n" + neuron_throughput_table(throughput) +
        "\n\n"
        "**What the engine does not reproduce.** Two patterns of AWS's TTFTs are not bucket padding (no "
        "prompt pads, above) and have no published cause, so nothing models them. (1) The step from "
        f"1,024 to 2,048 prompt tokens: {steps}. Twice the prompt doubles the GEMMs and at most "
        "quadruples the attention's work, a small share of a 70B model's prefill at these lengths (hence "
        "the engine's x1.9). (2) Short prompts on "
        "inf2: the 7B and 13B models' 128-token TTFTs are "
        f"{span([r['measured'] for r in short], 1)} ms published, {span([r['simulated'] for r in short], 1)} ms "
        f"simulated, and Llama 2 7B's {short_trn1[0]['measured']:.1f} ms on trn1 "
        f"({short_trn1[0]['simulated']:.1f} ms simulated); a 128-token context pass reads the weights once, "
        f"like a decode step (the same rows' TPOT: {span([r.tpot_ms for r in {x['run'] for x in short}], 1)} ms "
        "published), and its GEMMs take 0.8-1.5 ms at the 12 chips' peak. The samples' `sample` loop "
        "(transformers-neuronx 0.10, LlamaForSampling.forward) embeds the "
        "prompt on the host (`on_device_embedding` off by default) and draws each token by top-k on the "
        "host; transformers-neuronx's own benchmark (generation_demo.py, `benchmark`) times the context "
        "encoding as the model's forward call, the host's embedding and the logits' copy to the host in "
        "it, and prints means, not the tables' P50 and P99. The code behind the tables and its timers "
        "are not published, so no host cost is added.\n\n"
        "**trn1 against inf2.** A Trainium1 and an Inferentia2 chip are the same two NeuronCore-v2 "
        "with the same HBM ([hardware](../docs/hardware.md)) and a trn1.32xlarge has 16 of them to an "
        "inf2.48xlarge's 12, so a prompt's TTFT on trn1 can be about 0.75 of inf2's, less where its "
        "heads pad less over 32 cores than over 24 (Llama 2 7B's 32: none against 48), more where they "
        "pad more (Llama 2 13B's 40: 64 against 48, two a core on both), never above 1; the engine "
        f"gives {span(sim_ratios)}. AWS's latency tables give {span([r for r in published if r < 1])} for "
        f"{sum(r < 1 for r in published)} of these {len(published)} pairs of rows, "
        f"{span([r for r in published if r > 1], 1)} for the others, "
        "Llama 2 13B's and CodeLlama 13B's (the same layers) 4,096- and 8,192-token prompts and Mistral 7B "
        "v0.2's 8,192 (Neuron 2.18.0, sequence lengths 8,192 and 16,384). The same release's "
        "throughput-optimized tables, static batches of the same prompts on the same instances, give "
        + ", ".join(f"{b['published'][0] / b['published'][1]:.2f} ({b['model']}, {b['batch']} x {b['tokens']}: "
                    f"{b['published'][0]:,.1f} / {b['published'][1]:,.1f} ms)" for b in batched
                    if int(b["tokens"].split("/")[0].replace(",", "")) >= 4096) +
        ". Replayed (the second table), those batches are as far from the engine on inf2 as on trn1: "
        f"TTFT x{ratios(long_ttfts(batched_rows, TRN1.gpu))} on trn1, x{ratios(long_ttfts(batched_rows, INF2.gpu))} "
        f"on inf2, where the batch-1 rows are x{ratios(long_ttfts(results, TRN1.gpu))} on trn1 and "
        f"x{ratios(long_ttfts(results, INF2.gpu))} on inf2. So the static batches do not single trn1 out: "
        f"per prompt, AWS's batched 4,096-token Llama 2 13B TTFT ({per_prompt_ms(batched_rows, TRN1.gpu):,.0f} ms "
        f"on trn1, {per_prompt_ms(batched_rows, INF2.gpu):,.0f} ms on inf2) is the trn1 latency row's "
        f"({per_prompt_ms(results, TRN1.gpu):,.0f} ms), and inf2's batch-1 row ({per_prompt_ms(results, INF2.gpu):,.0f} "
        "ms) is the fast one; the engine's batch of b prompts costs about b of its one-prompt passes, as "
        "the GEMMs' FLOPs do. Mistral 7B v0.2 has Llama 3 8B's layers (32 of 4,096, 32 heads over 8 KV heads, FFN 14,336; no "
        f"sliding window), whose 4,096-token prompt on trn1 is published at {l3.ttft_ms:.1f} ms (Neuron "
        f"2.18.1) and simulated at {l3_trn1:.1f} ms; twice the prompt cannot take more than four times as "
        f"long (its GEMMs double, its attention at most quadruples), {4 * l3.ttft_ms:,.0f} ms, and takes "
        f"{mistral.ttft_ms:,.1f} ms published. On inf2, Mistral's 4,096-token prompt is published slower "
        "than its 8,192-token one (558.0 against 539.6 ms). The one sample AWS publishes for a 13B model at "
        "16k tokens (aws-neuron-samples' codellama-13b-16k-sampling at 22c6cac: `n_positions` 16,384, "
        "context buckets up to 16,384, neuronx-cc at -O1) runs the same on both instances but for the TP "
        "degree, and the tables print no other setting: what slowed these trn1 runs is not published "
        "(they stay in the mean). The same layers also differ between the tables' two releases: Llama 2 "
        "and Llama 3 70B (the same 80 layers of 8,192; a prefill's logits are the last token's) take 691.0 "
        "and 547.0 ms for 2,048 tokens on trn1, 810.4 and 745.5 ms on inf2. Llama 3 8B's rows store the "
        "weights in int8 and multiply in BF16; its check is replayed in BF16 (the weights' whole read at "
        "the HBM rate is under 2.5 ms of these TTFTs) and is not in the mean.\n\n"
        + neuron_cross_check_table(pairs) + "\n")


# Serving on TPUs: Google's published JetStream run.
#
# The source: AI-Hypercomputer/tpu-recipes, inference/v5e/JetStream-Maxtext/Llama2-7B/README.md
# (commit 5ba55c8a; the trillium folder's README prints the same sample, so the figures are the
# v5e recipe's), facts transcribed with their source, no file copied: JetStream with the MaxText
# engine serving Llama 2 7B in BF16 on a v5e-8 (2 x 4 chips, ici_tensor_parallelism -1: tensor
# parallel over the 8 chips), per_device_batch_size 11 (88 decode slots), prompts up to 1,024
# tokens (max_prefill_predict_length), max_target_length 2,048, JetStream's benchmark_serving.py
# on 1,000 OpenOrca prompts (995 succeeded) at its default request rate (every request sent at
# t = 0). Published: 217,011 input and 934,964 output tokens, a 305.37 s run (3,061.78 output
# tokens/s) and a mean TTFT of 130.29 s. Per-request lengths are not published; each request
# gets the run's mean lengths (218 in, 940 out), as the vLLM replay above does. The TPOT
# JetStream printed (mean 5,053 ms, median 164 ms) counts a request's queueing before its first
# token; it is not compared.
#
# The replay runs the engine as MaxText and JetStream ran then (docs/serving.md cites the code):
# the KV cache as dense slots of max_target_length tokens, every decode step computing all 88
# slots and reading their whole caches (kv_layout dense_slots), and JetStream's interleaved
# orchestration (scheduler jetstream: one prompt per prefill, padded to its power-of-two bucket,
# while a slot is free; a finished request's slot freed 9 decode steps late, by the detokenize
# thread). Everything else is the engine's defaults.
JETSTREAM_SOURCE = ("Google AI-Hypercomputer tpu-recipes, JetStream-MaxText Llama2-7B on TPU v5e-8 (the README's sample run)",
                    "https://github.com/AI-Hypercomputer/tpu-recipes/blob/5ba55c8aff86b98a880389f0e056dc902ce6f3e1/"
                    "inference/v5e/JetStream-Maxtext/Llama2-7B/README.md")


@dataclass(frozen=True)
class JetStreamRun:
    gpu: str
    chips: int
    slots: int            # per_device_batch_size x chips: JetStream's decode slots
    prefill_tokens: int   # max_prefill_predict_length: the longest prompt a prefill takes
    slot_tokens: int      # max_target_length: the tokens a slot's dense cache holds
    requests: int
    total_input: int
    total_output: int
    duration_s: float     # published
    ttft_s: float         # published mean

    @property
    def output_tokens_per_s(self) -> float:
        return self.total_output / self.duration_s


JETSTREAM_RUNS = [JetStreamRun("TPU-v5e", 8, 88, 1024, 2048, 995, 217011, 934964, 305.366344, 130.28820)]


def replay_at_once(cs, gpu: str, model: str, requests: int, input_len: int, output_len: int, replica: dict) -> dict:
    """`requests` requests of the given lengths, all at t = 0, on one replica of `gpu` serving the
    preset `model`: the serving summary."""
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "requests.csv"
        trace.write_text("timestamp,prompt_tokens,output_tokens\n" + f"0,{input_len},{output_len}\n" * requests)
        doc = {"name": "tpu_replay", "seed": 1, "hardware": {"gpu": gpu},
               "workload": {"kind": "serving", "model": {"preset": model}, "precision": "bf16",
                            "arrivals": {"process": "trace", "trace": str(trace)}, "replica": replica},
               # The price only scales the cost, which is not compared.
               "fleet": {"autoscaler": {"policy": "fixed", "replicas": 1}, "prices": {"on_demand": "$10/h"}},
               "run": {}}
        s = cs.run(doc).summary["serving"]
    assert s["completed"] == requests, s["completed"]
    return s


def simulate_jetstream(cs, run: JetStreamRun, kv_layout: str = "dense_slots") -> dict:
    """The run's requests, all at t = 0, on one replica of its chips as JetStream-MaxText runs
    it (`kv_layout` "paged" for the paged engine's figure): duration (the last completion),
    output tokens/s over it, mean TTFT, mean TPOT."""
    inp, out = round(run.total_input / run.requests), round(run.total_output / run.requests)
    replica = {"gpus": run.chips, "max_num_seqs": run.slots, "max_num_batched_tokens": run.prefill_tokens,
               "scheduler": "jetstream", "kv_layout": kv_layout}
    if kv_layout == "dense_slots":
        replica["dense_slot_tokens"] = run.slot_tokens
    s = replay_at_once(cs, run.gpu, "llama2-7b", run.requests, inp, out, replica)
    duration = s["latency"]["max_s"]
    return {"duration_s": duration, "output_tokens_per_s": out * run.requests / duration,
            "ttft_s": s["ttft"]["mean_s"], "tpot_ms": s["tpot"]["mean_s"] * 1e3}


def append_figures(table: list, errors: list, source: tuple, config: str, figures) -> None:
    """One configuration's rows of a TPU section: each figure (metric, measured, simulated, unit)
    as a table row, its absolute error (simulated / measured - 1) into `errors`."""
    for metric, measured, simulated, unit in figures:
        ratio = simulated / measured
        errors.append(abs(ratio - 1))
        table.append(f"| [{source[0]}]({source[1]}) | {config} | {metric} "
                     f"| {measured:,.2f}{unit} | {simulated:,.2f}{unit} | {ratio:.3f} |")


def jetstream_section(cs) -> str:
    """The TPU serving section of the validation page: one row per published figure."""
    table = ["| source | configuration | metric | measured | simulated | ratio |", "|---|---|---|---|---|---|"]
    errors, notes = [], []
    for run in JETSTREAM_RUNS:
        sim = simulate_jetstream(cs, run)
        paged = simulate_jetstream(cs, run, "paged")
        config = (f"Llama 2 7B BF16, {run.chips} x {run.gpu} (tensor parallel), {run.slots} dense slots of "
                  f"{run.slot_tokens:,} tokens, prefills up to {run.prefill_tokens:,}, {run.requests} requests "
                  f"at once, {run.total_input:,} in / {run.total_output:,} out tokens")
        append_figures(table, errors, JETSTREAM_SOURCE, config, (
            ("output tokens/s", run.output_tokens_per_s, sim["output_tokens_per_s"], ""),
            ("mean TTFT", run.ttft_s, sim["ttft_s"], " s")))
        notes.append(
            f"The same replay with vLLM's paged layout (each step reading the tokens the sequences hold) "
            f"gives {paged['output_tokens_per_s']:,.0f} output tokens/s (x{paged['output_tokens_per_s'] / run.output_tokens_per_s:.2f}) "
            f"and a mean TTFT of {paged['ttft_s']:.1f} s ({paged['ttft_s'] / run.ttft_s:.2f}). A request's mean TPOT is "
            f"{sim['tpot_ms']:.1f} ms dense, {paged['tpot_ms']:.1f} ms paged; the published run's {run.slots} slots over "
            f"its output tokens/s are {run.slots * 1e3 / run.output_tokens_per_s:.1f} ms a step.")
    return (
        "## Serving: JetStream on TPU\n\n"
        "Google's published JetStream-MaxText run of Llama 2 7B on a v5e-8, replayed by "
        "`scripts/validation_serving.py` on one replica of 8 `TPU-v5e` as MaxText and JetStream ran it "
        "(`kv_layout` dense_slots: 88 slots of max_target_length 2,048 tokens, every decode step reading "
        "every slot's whole cache; `scheduler` jetstream: one prompt per prefill, padded to its "
        "power-of-two bucket, while a slot is free, and a finished request's slot taken again 9 decode "
        "steps after its last token, when JetStream's detokenize thread, 8 queued steps behind its "
        "generate thread, frees it; [serving](../docs/serving.md#jetstream-and-maxtext-on-tpu)), "
        "the engine's defaults otherwise; each request the run's mean lengths (the per-request lengths "
        "are not published).\n\n" + "\n".join(table) +
        f"\n\nMean absolute error over these {len(errors)} figures: {100 * sum(errors) / len(errors):.1f}%. "
        + " ".join(notes) + "\n")


# Serving on TPUs: Google's published vLLM run on Trillium.
#
# The source: AI-Hypercomputer/tpu-recipes, inference/trillium/vLLM/Llama3.x/README.md (commit
# 00c8229d of 2025-12-10, the figures unchanged since), facts transcribed with their source, no
# file copied: vLLM for TPU (image vllm-tpu nightly-20251129: the V1 engine with its ragged
# paged attention kernel) serving Llama 3.3 70B Instruct in BF16 on a v6e-8 (2x4), tensor
# parallel over the 8 chips, --max-num-batched-tokens 512, --max-num-seqs 256, --max-model-len
# 2048, --gpu-memory-utilization 0.98, --no-enable-prefix-caching, --async-scheduling; `vllm
# bench serve` on 3,000 random prompts of 1,000 tokens, 1,000 output tokens each (ignore-eos),
# at most 64 or 128 requests in flight (--max-concurrency). Published per run: the duration,
# output tokens/s, mean TTFT and mean TPOT.
#
# Replay: the engine's paged layout and chunked prefill (what vLLM runs), with the published
# flags; the client's concurrency cap is the replica's max_num_seqs (the server never holds more
# requests than the client has in flight), every request queued at t = 0; async scheduling
# overlaps the CPU's scheduling with the step (iteration_overhead 0); vLLM for TPU runs each
# step at its compiled shapes (step_padding power_of_two). The TTFT is not compared:
# the client sends a request when another finishes (a closed loop the engine does not model),
# so a replayed request's TTFT counts a queue the client's never saw.
VLLM_TPU_SOURCE = ("Google AI-Hypercomputer tpu-recipes, vLLM Llama3.x on TPU Trillium (v6e-8), the README's sample runs",
                   "https://github.com/AI-Hypercomputer/tpu-recipes/blob/00c8229d1d64bd703544e87c3f5e7b99fe7de6ca/"
                   "inference/trillium/vLLM/Llama3.x/README.md")


@dataclass(frozen=True)
class VllmTpuRun:
    concurrency: int      # --max-concurrency
    duration_s: float     # published
    output_tokens_per_s: float
    tpot_ms: float        # published mean
    gpu: str = "TPU-v6e"
    chips: int = 8
    requests: int = 3000
    input_len: int = 1000
    output_len: int = 1000


VLLM_TPU_RUNS = [VllmTpuRun(64, 1202.50, 2494.80, 25.35), VllmTpuRun(128, 846.39, 3544.46, 35.12)]


def simulate_vllm_tpu(cs, run: VllmTpuRun) -> dict:
    """Output tokens/s over the last completion and mean TPOT (ms)."""
    replica = {"gpus": run.chips, "max_num_seqs": run.concurrency, "max_num_batched_tokens": 512,
               "gpu_memory_utilization": 0.98, "prefix_caching": False, "iteration_overhead": 0,
               "step_padding": "power_of_two"}
    s = replay_at_once(cs, run.gpu, "llama3-70b", run.requests, run.input_len, run.output_len, replica)
    return {"output_tokens_per_s": run.requests * run.output_len / s["latency"]["max_s"],
            "tpot_ms": s["tpot"]["mean_s"] * 1e3}


def vllm_tpu_section(cs) -> str:
    """The vLLM-on-TPU serving section of the validation page: one row per published figure."""
    table = ["| source | configuration | metric | measured | simulated | ratio |", "|---|---|---|---|---|---|"]
    errors = []
    for run in VLLM_TPU_RUNS:
        sim = simulate_vllm_tpu(cs, run)
        config = (f"Llama 3.3 70B BF16, {run.chips} x {run.gpu} (tensor parallel), {run.requests:,} requests of "
                  f"{run.input_len:,} in / {run.output_len:,} out, {run.concurrency} in flight")
        append_figures(table, errors, VLLM_TPU_SOURCE, config, (
            ("output tokens/s", run.output_tokens_per_s, sim["output_tokens_per_s"], ""),
            ("mean TPOT", run.tpot_ms, sim["tpot_ms"], " ms")))
    return (
        "## Serving: vLLM on TPU\n\n"
        "Google's published vLLM runs of Llama 3.3 70B on a v6e-8 (vLLM for TPU, ragged paged attention), "
        "replayed by `scripts/validation_serving.py` on one replica of 8 `TPU-v6e` with the engine's "
        "paged layout and chunked prefill and the published flags (512 batched tokens, 98% of the HBM, no "
        "prefix caching; async scheduling: no iteration overhead; each step at vLLM for TPU's power-of-two shapes, "
        "`step_padding`); the client's concurrency cap is the "
        "replica's max_num_seqs, every request queued at t = 0; the TTFT is not compared (the client sends a "
        "request only when one finishes, a closed loop the engine does not model).\n\n" + "\n".join(table) +
        f"\n\nMean absolute error over these {len(errors)} figures: {100 * sum(errors) / len(errors):.1f}%.\n")


def main() -> int:
    sys.path.insert(0, str(ROOT / "build" / "python"))
    import clustersim as cs
    results = rows(cs)
    for r in results:
        c, s = r["case"], r["sim"]
        print(f"{c.name:42s} TPOT {c.tpot_ms:7.2f} -> {s['tpot_ms']:7.2f} ({r['tpot_ratio']:.3f})  "
              f"E2E {c.e2e_ms / 1e3:7.2f} -> {s['e2e_ms'] / 1e3:7.2f} s ({r['e2e_ratio']:.3f})  "
              f"TTFT {c.ttft_ms / 1e3:7.2f} -> {s['ttft_ms'] / 1e3:7.2f} s  preemptions {s['preemptions']}")
    print(json.dumps({"mean_abs_error": sum(abs(r['tpot_ratio'] - 1) + abs(r['e2e_ratio'] - 1) for r in results)
                      / (2 * len(results))}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
