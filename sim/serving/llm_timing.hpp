#pragma once
// How long one iteration of an LLM replica takes, and how much KV cache it has.
//
// The GPU comes as plain numbers (sim/compute's catalog fills them in a later step): peak
// FLOP/s at the serving precision, HBM bandwidth and capacity, and an efficiency for each
// side of the roofline. A replica is `gpus` GPUs in tensor parallelism: FLOP/s, bandwidth and
// memory add up; weights are split, each GPU reads its shard.
//
// Roofline iteration (the default), one roofline per kind of kernel, since the GPU runs them
// one after another (a batch's attention does not hide under its GEMMs):
//   linear    = max(2 * active params * (decode sequences + prefill tokens) / F,   weight GEMMs
//                   weight bytes / B)                                  read once per iteration
//   attention = max(4 * layers * heads * head_dim * (attended positions) / F,  QK^T and AV
//                   kv_bytes_per_token * (KV tokens the batch reads and writes) / B_kv)
//   with F = gpus * peak * compute_efficiency, B = gpus * hbm_bandwidth * memory_efficiency,
//   B_kv = B * paged_kv_efficiency (the KV cache is read block by block through the block table)
//   or B_kv = B with kv_layout dense_slots (one dense array; the replica then counts a decode
//   step as every slot, busy or not, reading its whole slot: llm_replica.hpp)
//   time  = linear + attention
//         + unfused prefill attention only (flash_attention false): the softmax's pass over the
//           score matrix, prefill_scores x layers x heads x kSoftmaxBytes / B; the attention's
//           FLOPs then count the whole matrix (prefill_scores, not prefill_attended) and its
//           bytes the scores written and read back by the two GEMMs (kGemmTrafficBytes per
//           element: workloads/unfused_attention.hpp, the same counts as training's)
//         + tensor-parallel all-reduces: 2 per layer of tokens * hidden * activation bytes,
//           each tp_allreduce.seconds(bytes) (NCCL's cost on the node's fabric, with its
//           latency terms; filled in by whoever knows the fabric: sim/world; empty: free)
//         + the logits' all-gather: the LM head is split over the vocabulary, and vLLM V1 runs
//           the sampler on every GPU, so each gathers every sampled sequence's logits
//           (decode sequences + prompts finishing this iteration) x vocab x activation bytes
//           (vllm-project/vllm pull request 9856: "the logits_processor has an AllGather
//           instead of a Gather"; LogitsProcessor._gather_logits), tp_allgather.seconds(bytes)
//         + iteration_overhead_s (vLLM's scheduling, input preparation and output handling
//           between forward passes: the CPU time a step adds to the GPU's)
// A prefill is then compute-bound and a small decode batch memory-bound, from the same rule;
// decode attention reads the KV cache at the HBM's achievable bandwidth B even beside a
// compute-bound prefill chunk. Batch-1 decode with c tokens of context takes weights / B +
// kv_bytes_per_token * c / B_kv: the memory-bandwidth bound.
//
// Measured timing (MeasuredTiming::enabled), as Vidur and Splitwise fit profiles:
//   time = base_s + per_prefill_token_s * prefill tokens + per_decode_sequence_s * decode
//          sequences + per_context_token_s * KV tokens read.
//
// Every model term is of the model as the GPUs hold it (held_model: padded query heads and
// replicated KV heads counted).
//
// KV cache (vLLM's rule): bytes = gpus * hbm_bytes * gpu_memory_utilization - weight bytes -
// activation_reserve_bytes (or kv_cache_bytes when given), in blocks of block_size tokens.
//
// Defaults: Llama-3-8B (32 layers, hidden 4096, 8 KV heads of 128, BF16) on one H100 SXM
// (989 TFLOP/s dense BF16, 3.35 TB/s, 80 GB: NVIDIA H100 datasheet). The efficiencies are
// estimates: 0.7 of HBM bandwidth gives about 7 ms per batch-1 decode step of an 8B model,
// near what vLLM reaches on an H100; 0.6 of peak for prefill GEMMs. The weights and the KV
// cache (decode attention) are read at this one achievable bandwidth, under the ceiling a
// streaming read kernel measures: 1.80 of an A100 80GB SXM's 2.04 TB/s (88%, Nsight Compute
// agreeing; ~90% the best in NVIDIA's own GTC material: NVIDIA developer forums, "Trouble to
// reach peak bandwidth of A100"); vLLM's GEMV weight loads and paged KV gathers run below a
// streaming kernel; the 1-GPU vLLM replays (results/validation.md) come within 1% of the
// measured TPOT alone and within 15% under load at 0.7.
//
// iteration_overhead_s defaults to 0.5 ms, an estimate from vLLM's own measurements of the
// CPU work V1 does between forward passes with synchronous scheduling (its default through
// 0.10): Scheduler.update_from_output alone takes 0.14 ms at 128 decoding sequences and
// 0.29 ms at 256 (vllm-project/vllm pull request 46112, micro-benchmark), and schedule() and
// the model runner's input preparation are of the same order (pull request 17866 cut ~10% of
// a 2.7 ms TPOT of Llama 3.2 1B by a faster decode input preparation alone).
#include <algorithm>
#include <array>
#include <cstdint>

#include "common/enum_table.hpp"
#include "sim/serving/allreduce_cost.hpp"

namespace cs::serving {

// How a replica holds its KV cache (workload.replica.kv_layout).
//   paged        vLLM's PagedAttention: blocks of block_size tokens through a block table; a
//                sequence holds the blocks its tokens fill and a decode step reads those.
//   dense_slots  MaxText's engine under JetStream: one dense array of max_num_seqs slots x
//                dense_slot_tokens (MaxText's max_target_length), every slot reserved whole;
//                a decode step computes every slot, busy or not, and its attention reads every
//                slot's whole cache, masked (MaxText's dot-product decode attention over its
//                prefill and autoregressive caches: docs/serving.md cites the code).
enum class KvLayout : uint8_t { paged, dense_slots };
inline constexpr auto kKvLayoutNames = std::to_array<EnumName<KvLayout>>({
    {"paged", KvLayout::paged, "vLLM: blocks through a block table; a decode reads the tokens held"},
    {"dense_slots", KvLayout::dense_slots,
     "MaxText/JetStream: a dense slot of dense_slot_tokens per sequence; a decode reads every slot whole"},
});
static_assert(names_every_value<kKvLayoutNames>());

struct GpuSpec {
  double peak_flops = 989e12;          // FLOP/s, dense, serving precision
  double hbm_bandwidth_Bps = 3.35e12;  // bytes/s
  double hbm_bytes = 80e9;             // bytes
  double compute_efficiency = 0.6;     // share of peak_flops reached, (0, 1]
  double memory_efficiency = 0.7;      // share of hbm_bandwidth reached, (0, 1]
  // Share of that achievable bandwidth a paged KV read reaches (the attention kernel gathers
  // blocks through the block table instead of streaming one dense tensor), (0, 1]: 0.9, as
  // FlashInfer states for its page-table (vector-sparse) attention against its dense kernels
  // on the same problem (flashinfer-ai/flashinfer README, "can achieve 90% of the bandwidth of
  // dense kernels with same problem size").
  double paged_kv_efficiency = 0.9;
};

struct LlmModelSpec {
  double params = 8.03e9;       // every weight: what the replica holds in memory and reads
  double active_params = 0;     // weights a token's GEMMs use (MoE: top-k experts); 0: params
  double bytes_per_param = 2;   // BF16 weights
  int layers = 32;
  int hidden = 4096;
  int heads = 0;                // query heads; 0: hidden / head_dim
  int kv_heads = 8;
  int head_dim = 128;
  int vocab = 128256;           // the LM head's outputs: the logits of one sampled token
  double kv_bytes_per_element = 2;
  double activation_bytes_per_element = 2;

  double weight_bytes() const { return params * bytes_per_param; }
  double flop_params() const { return active_params > 0 ? active_params : params; }
  // K and V of every layer for one token.
  double kv_bytes_per_token() const {
    return 2.0 * layers * kv_heads * head_dim * kv_bytes_per_element;
  }
  int query_heads() const { return heads > 0 ? heads : hidden / head_dim; }
  // The model as `tp` tensor-parallel GPUs hold it together, tp >= 1: query heads padded up to a
  // multiple of tp (AWS Neuron's transformers-neuronx pads them so; a degree dividing the heads
  // pads none), KV heads replicated when tp exceeds them (each GPU keeps a copy of its group's
  // head, as vLLM and Neuron do), tp x ceil(kv_heads / tp) held in all. The padded and copied
  // heads bring their Q, K, V and O weights (hidden x head_dim each per layer: memory, reads,
  // FLOPs) and their KV cache; params, heads and kv_heads of the result count them.
  LlmModelSpec held_by(int tp) const;
};

struct MeasuredTiming {
  bool enabled = false;
  double base_s = 0;
  double per_prefill_token_s = 0;
  double per_decode_sequence_s = 0;
  double per_context_token_s = 0;
};

// What one iteration does (the scheduler fills it).
struct IterationWork {
  int64_t decode_sequences = 0;      // sequences each producing one token
  double decode_context_tokens = 0;  // KV tokens those sequences hold after this iteration
  int64_t prefill_tokens = 0;        // prompt tokens computed
  double prefill_attended = 0;       // sum over prefill tokens of the positions each attends to
  double prefill_context_tokens = 0; // KV tokens of earlier chunks that the chunks re-read
  // Sum over prefill chunks of the chunk's tokens x the positions up to its end (earlier chunks
  // and its own): the score matrix per layer and head that an unfused attention computes whole.
  double prefill_scores = 0;
  int64_t prompts_completed = 0;     // prefill chunks that end their prompt (sampled, as decodes are)
  // Padded shapes (vLLM for TPU's compiled graphs; 0: none): the token rows the GEMMs and
  // all-reduces run on, and the rows whose logits are computed and gathered, when more than
  // the counts above.
  int64_t padded_tokens = 0;
  int64_t padded_sampled = 0;
};

// vLLM for TPU's compiled shapes (step_padding power_of_two, llm_replica.hpp): padded_tokens =
// the step's tokens (decodes + prefill) up to a power of two >= 16; padded_sampled = its
// `requests` (every scheduled one is sampled, a partial prompt's token then dropped) up to a
// power of two >= 8, at most max(max_num_seqs, 8).
void pad_to_compiled_shapes(IterationWork& work, int64_t requests, int64_t max_num_seqs);

struct LlmTimingSpec {
  int gpus = 1;  // tensor-parallel GPUs per replica, >= 1
  // Tensor-parallel ranks on each GPU, >= 1: the heads are split over gpus x ranks_per_gpu ranks.
  // AWS Neuron runs a rank per NeuronCore (2 per Trainium1 or Inferentia2 chip) and
  // transformers-neuronx pads the query heads and replicates the KV heads over that degree (its
  // tp_degree); the ranks of a GPU share its rates and memory (sim/world prices the all-reduces).
  int ranks_per_gpu = 1;
  // Whether a degree that does not divide the query heads is allowed (held_model pads them, as
  // AWS Neuron does); vLLM refuses it.
  bool pad_heads = false;
  // The prefill's attention as one fused kernel (flash attention: the causal half computed, the
  // scores kept on chip), as vLLM runs it; false: unfused, its score matrices through device
  // memory (workloads/unfused_attention.hpp), as transformers-neuronx builds its
  // context-encoding graph up to Neuron SDK 2.18 (layers/attention.py at 0623de2: score,
  // mask, context_combined's softmax, then the probabilities times V, as separate HLO ops; its
  // NKI flash attention came in the next release). Decode steps are priced alike either way:
  // a decode's score row is 2 bytes per key per query head against the K and V rows it reads
  // (4 x head_dim bytes per KV head).
  bool flash_attention = true;
  GpuSpec gpu;
  LlmModelSpec model;
  double gpu_memory_utilization = 0.9;   // vLLM's --gpu-memory-utilization
  double activation_reserve_bytes = 4e9; // per replica: activations, CUDA graphs, workspace (estimate)
  double kv_cache_bytes = 0;             // > 0: use this instead of the rule above
  KvLayout kv_layout = KvLayout::paged;  // dense_slots: KV read at B, not B * paged_kv_efficiency
  // dense_slots: tokens one slot holds, >= 1 (MaxText's max_target_length, 2048 in its
  // base.yml and in Google's JetStream recipes); a request's prompt + output must fit (a
  // prefill replica's prompt alone).
  int64_t dense_slot_tokens = 2048;
  // The node fabric's per-GPU bandwidth the TP all-reduce runs at, when it is not the node's
  // own (sim/world builds tp_allreduce from it); 0: the node's.
  double tp_allreduce_bandwidth_Bps = 0;
  AllReduceCost tp_allreduce;            // one TP all-reduce (gpus > 1)
  AllReduceCost tp_allgather;            // one TP all-gather of b bytes gathered (gpus > 1)
  double iteration_overhead_s = 0.5e-3;  // CPU time added to every iteration (see above)
  MeasuredTiming measured;
  int tp_ranks() const { return gpus * ranks_per_gpu; }  // the degree the heads are split over
  // The model as the replica's ranks hold it (LlmModelSpec::held_by): what the roofline, the
  // memory and the KV cache count.
  LlmModelSpec held_model() const { return model.held_by(tp_ranks()); }
};

// The rule above with its constants folded (a replica computes them once).
class IterationCost {
 public:
  explicit IterationCost(const LlmTimingSpec& spec);

  // The terms that depend only on an iteration's token counts (decode sequences, prefill
  // tokens, prompts completed), not on its KV context: a run of decode-only iterations shares
  // them, only the context growing (LlmReplica computes them once per run).
  struct TokenTerms {
    double linear_s = 0;  // measured timing: base + per-token terms
    double comm_s = 0;
    double gather_s = 0;
  };
  TokenTerms token_terms(const IterationWork& work) const {
    TokenTerms t;
    if (measured_) {
      t.linear_s = m_.base_s + m_.per_prefill_token_s * static_cast<double>(work.prefill_tokens) +
                   m_.per_decode_sequence_s * static_cast<double>(work.decode_sequences);
      return t;
    }
    const double tokens = static_cast<double>(std::max(work.decode_sequences + work.prefill_tokens, work.padded_tokens));
    const double gemm_s = per_token_compute_s_ * tokens;
    t.linear_s = gemm_s > weights_s_ ? gemm_s : weights_s_;
    t.comm_s = tp_.pieces.empty() ? 0 : allreduces_ * tp_.seconds(tokens * activation_bytes_);
    const double sampled = static_cast<double>(std::max(work.decode_sequences + work.prompts_completed, work.padded_sampled));
    t.gather_s = gather_.pieces.empty() || sampled == 0 ? 0 : gather_.seconds(sampled * logits_bytes_);
    return t;
  }
  // Seconds for `work` whose token terms are `t` (= token_terms(work)); the sum in the same
  // order as seconds(work), so the two agree to the bit.
  double seconds(const IterationWork& work, const TokenTerms& t) const {
    if (measured_) return t.linear_s + m_.per_context_token_s * (work.decode_context_tokens + work.prefill_context_tokens);
    const double kv_s = per_kv_token_s_ * (work.decode_context_tokens + work.prefill_context_tokens +
                                           static_cast<double>(work.prefill_tokens));
    if (unfused_) {
      const double flops_s = per_attended_compute_s_ * (work.decode_context_tokens + work.prefill_scores);
      const double bytes_s = kv_s + per_score_traffic_s_ * work.prefill_scores;
      const double attention_s = flops_s > bytes_s ? flops_s : bytes_s;
      return t.linear_s + attention_s + per_score_softmax_s_ * work.prefill_scores + t.comm_s + t.gather_s + overhead_s_;
    }
    const double attention_flops_s =
        per_attended_compute_s_ * (work.decode_context_tokens + work.prefill_attended);
    const double attention_s = attention_flops_s > kv_s ? attention_flops_s : kv_s;
    return t.linear_s + attention_s + t.comm_s + t.gather_s + overhead_s_;
  }
  double seconds(const IterationWork& work) const { return seconds(work, token_terms(work)); }
  // A decode-only iteration (no prefill) as a function of its context alone, for a run of them
  // (LlmReplica plans up to 1,024 at once): seconds(context) is seconds(work, t) to the bit (the
  // zero prefill terms leave each sum as it is; tests/cpp/serving/test_llm_decode_step.cpp).
  struct DecodeStep {
    bool measured;
    double linear_s, comm_s, gather_s, overhead_s;
    double per_context_s, per_attended_s, per_kv_s;  // per_context_s: measured timing's
    double seconds(double context) const {
      if (measured) return linear_s + per_context_s * context;
      const double flops_s = per_attended_s * context, kv_s = per_kv_s * context;
      const double attention_s = flops_s > kv_s ? flops_s : kv_s;
      return linear_s + attention_s + comm_s + gather_s + overhead_s;
    }
  };
  DecodeStep decode_step(const TokenTerms& t) const {
    return {measured_, t.linear_s, t.comm_s, t.gather_s, overhead_s_, m_.per_context_token_s, per_attended_compute_s_,
            per_kv_token_s_};
  }

 private:
  bool measured_;
  MeasuredTiming m_;
  double per_token_compute_s_ = 0;    // 2 params FLOPs
  double per_attended_compute_s_ = 0; // 4 layers hidden FLOPs
  double weights_s_ = 0;              // reading the weights
  double per_kv_token_s_ = 0;         // reading or writing one token's KV
  bool unfused_ = false;              // the prefill's attention unfused (flash_attention false)
  double per_score_traffic_s_ = 0;    // per prefill score position: the GEMMs' score bytes, all layers and heads
  double per_score_softmax_s_ = 0;    // per prefill score position: the softmax's pass
  AllReduceCost tp_;                  // one tensor-parallel all-reduce (gpus > 1)
  AllReduceCost gather_;              // the logits' all-gather (gpus > 1)
  double logits_bytes_ = 0;           // per sampled sequence: vocab * bytes per element
  double allreduces_ = 0;             // per iteration: 2 per layer
  double activation_bytes_ = 0;       // per token: hidden * bytes per element
  double overhead_s_ = 0;
};

// Seconds for one iteration doing `work`.
double iteration_time_s(const LlmTimingSpec& spec, const IterationWork& work);
// KV-cache bytes of one replica (may be <= 0 when the model does not fit).
double kv_cache_bytes(const LlmTimingSpec& spec);
// Whole blocks of `block_size` tokens in the KV cache (0 when it does not fit).
int64_t kv_cache_blocks(const LlmTimingSpec& spec, int block_size);
// Throws std::invalid_argument naming the field when a number is out of range or the
// model leaves no room for a KV cache.
void validate_timing(const LlmTimingSpec& spec);

}  // namespace cs::serving
