"""clustersim's training steps against published throughput (data/published_training.json).

Every row is replayed with catalog defaults and its published configuration, no per-case
fitting (scripts/validation_training.py, which also writes results/validation.md's training
section). The bounds are what the model achieves today (measured, results/validation.md): a
model change that widens the gap fails here.
"""
import json
import sys

import pytest

import clustersim as cs
from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import validation_training  # noqa: E402

# The replay is the suite's costliest fixture: under `--dist loadgroup` (the Makefile's) this module
# and the validation report's test run on one worker, which computes it once for both
# (scripts/replay_cache.py), while the other worker runs the rest.
pytestmark = pytest.mark.xdist_group("training_replay")

MEAN_ABSOLUTE_ERROR = 0.097  # over the headline rows (all but SEPARATE_GROUPS): 9.4% measured over 46 (results/validation.md)
# 9.9% over the 12 A100 rows (Narayanan et al. 2021's 8: 10.7%, x1.03 to x1.18; Korthikanti et al. 2022's 4: 8.3%,
# x1.07 22B, x1.09 175B, x1.11 530B, x1.05 1T) since the unfused attention core's batched products add their
# arithmetic to their bytes' time; 12.2% (Narayanan et al.'s 13.2%, x1.08 to x1.20; 10.0% over all 46) before, with
# Narayanan et al.'s rows' tensor-parallel all-reduce after the weight gradient as their code ran it; 14.5% before that.
# Earlier:
# 8.5% over the 26 H100 rows (BF16 11.8% over 6, FP8 7.5% over 20), 17.9% over the 12 A100 rows (Narayanan et
# al. 2021's 8: 20.7%, x1.17 to x1.27, replayed as the paper's scripts ran them; 12.0% (x1.06 to x1.20) when they
# were replayed with one sequence per micro-batch, no interleaving and no overlapped gradient all-reduce;
# Korthikanti et al. 2022's 4: x1.15 22B, x1.14 175B, x1.14 530B, x1.07 1T; 17.6% before the optimizer's passes
# as Megatron's code runs them (17.0% with them) and the MAMF table's current A100 ceiling); 10.1% over all and 12.2% over the
# A100 rows before that; 13.3%, 13.1% and 15.1% before weight-gradient GEMMs paid for the gradient buffer they add into;
# 15.2% over the 3 TPU v6e slices' rows (x1.12 v6e-8, x1.15 v6e-32, x1.18 Llama 2 70B on v6e-256), 5.5% over the 3 v5p rows (x0.86 Llama 2
# 70B on a v5p-512, x1.00 MaxText's 32B on a v5p-128, x1.02 on two, hybrid sharding), 15.7% over the 2
# v5e rows (x0.83 32B on a v5e-256, x0.86 on two, hybrid sharding)
GROUP_ERROR = {"H100-SXM": 0.087, "A100-80GB": 0.102, "TPU-v6e": 0.157, "TPU-v5p": 0.060, "TPU-v5e": 0.165}
ROW_ERROR = 0.20            # any single row: 19.2% the largest measured (GPT-3 175B on 128 H100s, BF16; GPT 76.1B on 1,024 A100s 26.8% before)
# Trainium1 (AWS Neuron's trn1 tables), reported apart from the headline (SEPARATE_GROUPS): 14.6%
# measured over its 5 rows (x0.97 Llama 2 7B, x1.20 13B, x1.08 70B at Neuron 2.17; x1.24 Llama 3.1
# 8B, x1.18 70B at 2.24), tensor-parallel collectives and the ZeRO-1 gradient reduction not
# overlapped as on Neuron (50.0% with NVIDIA's overlaps; the rows' `overlaps` cite AWS), every
# collective at Neuron's CCOM latencies (15.5% at NCCL's)
SEPARATE_GROUP_ERROR = {"Trainium1": 0.15}
SEPARATE_ROW_ERROR = 0.25   # any Trainium1 row: 24.5% the largest measured (Llama 3.1 8B)


@pytest.fixture(scope="module")
def results():
    return validation_training.training_rows(cs)


def test_every_row_names_its_source_and_configuration():
    rows = validation_training.load_rows()
    assert len(rows) >= 20
    for row in rows:
        assert row["url"].startswith("https://"), row
        assert row["gpus"] == row["tp"] * row["pp"] * row["cp"] * row["dp"], row
        assert len(row["measured"]) >= 1, row
        doc = validation_training.scenario_doc(row)
        assert doc["workload"]["parallel"]["tp"] == row["tp"]
        # A run whose code did not overlap (Megatron-LM in 2021) is replayed without, and says why.
        # (Passed only where the plan has what the overlap overlaps: else the run warns the key is inert.)
        for key, has in validation_training.overlaps_present(row).items():
            expected = row.get(key, True) if has else True
            assert doc["workload"]["parallel"].get(key, True) == expected, (row["name"], key)
            assert has or key not in doc["workload"]["parallel"], (row["name"], key)
            if key in row:
                assert "overlap" in row["overlaps"], row["name"]
        # A row that records its run's gradient dtype replays with it, and cites where it comes from.
        assert doc["workload"].get("gradient_bytes", 2) == row.get("gradient_bytes", 2), row["name"]
        assert "gradient_bytes" not in row or "gradient" in row["recipe"], row["name"]
        # Each run's optimizer step replays the passes its code ran: Megatron-LM at 6985e58 (the
        # SC21 scripts) held gradients per parameter, without a contiguous buffer; Megatron's
        # gradient buffer otherwise on GPUs (Megatron-LM 2022, NeMo, Megatron-Bridge); one fused
        # update on TPUs and Trainium.
        expected = ("megatron_no_grad_buffer" if "6985e58" in row.get("recipe", "")
                    else "megatron" if row["gpu"].startswith(("A100", "H100")) else "fused")
        assert doc["workload"].get("optimizer", "megatron") == expected, row["name"]
        # A run published as FP8 current scaling replays with that recipe's amax pass.
        current = "current scaling" in row["source"]
        assert doc["workload"].get("fp8_recipe", "delayed") == ("current" if current else "delayed"), row["name"]
        cs.Scenario.from_json(json.dumps(doc))  # valid as published


def test_mean_absolute_error_within_bound(results):
    mae = validation_training.mean_absolute_error(validation_training.headline_rows(results))
    assert mae <= MEAN_ABSOLUTE_ERROR, [(r["row"]["name"], r["row"]["gpus"], round(r["ratio"], 3)) for r in results]


@pytest.mark.parametrize("gpu", sorted(GROUP_ERROR | SEPARATE_GROUP_ERROR))
def test_mean_absolute_error_per_gpu_within_bound(results, gpu):
    group = [r for r in results if r["row"]["gpu"] == gpu]
    assert group
    assert validation_training.mean_absolute_error(group) <= (GROUP_ERROR | SEPARATE_GROUP_ERROR)[gpu], [
        (r["row"]["name"], round(r["ratio"], 3)) for r in group]


@pytest.mark.parametrize("index", range(len(validation_training.load_rows())))
def test_each_row_within_bound(results, index):
    r = results[index]
    bound = SEPARATE_ROW_ERROR if r["row"]["gpu"] in SEPARATE_GROUP_ERROR else ROW_ERROR
    assert abs(r["ratio"] - 1) <= bound, (r["row"]["name"], r["row"]["gpus"], r["measured"], r["simulated"])
    assert 0 < r["mfu"] < 1


def test_the_section_reports_every_row_and_the_error(results):
    text = validation_training.training_section(cs, results)
    assert text.startswith("## Training")
    assert "Mean absolute error" in text
    assert "Trainium1" in text and "reported apart" in text
    assert text.count("| [") == len(results)


# Simulated over measured FP8 speedup: 4.2% mean, 6.8% the largest (Llama 3.1 405B, 1.43 against 1.53); 3.3%
# and 5.4% (bound 0.055) before the weight-gradient GEMMs' gradient buffer, 2.6% and 4.6% (bound 0.050) before the activation and the loss took the shares Megatron's kernels were
# measured at: that time is the same in both precisions, so it thins the simulated FP8 gain of every pair.
FP8_SPEEDUP_ERROR = 0.070


def test_fp8_speedup_over_bf16_as_measured(results):
    """Each DGX Cloud recipe ran once in BF16 and once in FP8, nothing else changed: the simulated
    FP8 speedup (BF16 step over FP8 step) stays within FP8_SPEEDUP_ERROR of the measured one, so the
    rows' common optimism is not in the FP8 model (its ceiling, casts and 16-bit LM head)."""
    pairs = {}
    for r in results:
        if "DGX Cloud" in r["row"]["source"]:
            pairs.setdefault((r["row"]["name"], r["row"]["gpus"]), {})[r["row"]["precision"]] = r
    pairs = {k: v for k, v in pairs.items() if set(v) == {"bf16", "fp8"}}
    assert len(pairs) >= 6
    for key, p in pairs.items():
        measured = p["fp8"]["measured"] / p["bf16"]["measured"]
        simulated = p["fp8"]["simulated"] / p["bf16"]["simulated"]
        assert abs(simulated / measured - 1) <= FP8_SPEEDUP_ERROR, (key, measured, simulated)


def test_maxtexts_parameter_count_is_the_checkpoints():
    # Llama 2 70B's shape counted as MaxText counts a decoder's parameters: 68,976,648,192, the
    # Hugging Face checkpoint's count (meta-llama/Llama-2-70b-hf)
    llama2_70b = {"layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8, "ffn_hidden": 28672, "vocab": 32000}
    assert validation_training._maxtext_parameters(llama2_70b) == 68_976_648_192


def test_maxtext_rows_are_counted_by_maxtexts_formula():
    # per sequence of s tokens: 6 N s + 6 heads layers head_dim s^2 (causal half of 12)
    row = next(r for r in validation_training.load_rows() if "maxtext_tflops_per_chip" in r["measured"])
    m, s = row["model"], row["seq_len"]
    n = validation_training._maxtext_parameters(m)
    expected = row["global"] * (6 * n * s + 6 * m["heads"] * m["layers"] * (m["hidden"] // m["heads"]) * s * s)
    assert abs(validation_training._maxtext_flops_per_step(row) / expected - 1) < 1e-12


def test_korthikanti_rows_give_the_papers_mfu():
    # Their Equation 7's model FLOPs over the published iteration time, over A100's dense 312 TFLOP/s,
    # is their Table 5's MFU (41.5%, 51.4%, 56.0%, 56.3%): the rows' figures and their FLOP count agree.
    rows = [r for r in validation_training.load_rows() if "iteration_time_s" in r["measured"]]
    assert len(rows) == 4
    for row in rows:
        mfu = (validation_training._model_flops_per_step(row) / row["measured"]["iteration_time_s"]
               / row["gpus"] / 312e12)
        assert abs(mfu - row["measured"]["model_flops_utilization"]) < 0.003, (row["name"], mfu)
        assert row["recompute"] == "selective" and row["sequence_parallel"] and not row["flash_attention"]


def test_narayanan_rows_replay_the_papers_scripts():
    # Table 1 as Megatron-LM's examples/sc21/run_table_1.sh ran it: the script's micro-batch and
    # interleaved chunks (--num-layers-per-virtual-pipeline-stage dividing the stage's layers) reach
    # the replayed plan; torch DDP (pp 1) overlaps the gradient all-reduce, local DDP does not.
    rows = [r for r in validation_training.load_rows() if r["source"].startswith("Narayanan")]
    assert len(rows) == 8
    for row in rows:
        assert "examples/sc21/run_table_1.sh" in row["recipe"], row["name"]
        assert (row["model"]["layers"] // row["pp"]) % row["vp"] == 0, row["name"]
        parallel = validation_training.scenario_doc(row)["workload"]["parallel"]
        assert parallel["schedule"] == ("interleaved" if row["vp"] > 1 else "1f1b"), row["name"]
        assert parallel.get("virtual_stages", 1) == row["vp"]
        assert validation_training.scenario_doc(row)["workload"]["batch"]["micro"] == row["micro"]
        local_ddp = "--DDP-impl local" in row["recipe"]
        assert local_ddp == (row["pp"] > 1), row["name"]
        assert parallel["overlap_grad_reduce"] is not local_ddp, row["name"]


def test_a_rows_gradient_dtype_reaches_the_replay():
    # 2 bytes (the workload's default) is left to the default; any other width is passed on.
    row = dict(validation_training.load_rows()[0], gradient_bytes=4)
    assert validation_training.scenario_doc(row)["workload"]["gradient_bytes"] == 4
