#pragma once
// How long one iteration of an LLM replica takes, and how much KV cache it has.
//
// The GPU comes as plain numbers (sim/compute's catalog fills them in a later step): peak
// FLOP/s at the serving precision, HBM bandwidth and capacity, and an efficiency for each
// side of the roofline. A replica is `gpus` GPUs in tensor parallelism: FLOP/s, bandwidth and
// memory add up; weights are split, each GPU reads its shard.
//
// Roofline iteration (the default):
//   flops = 2 * active params * (decode sequences + prefill tokens)     weight GEMMs
//         + 4 * layers * hidden * (attended positions)                  QK^T and AV
//   bytes = weight bytes                                               read once per iteration
//         + kv_bytes_per_token * (KV tokens the batch reads and writes)
//   time  = max(flops / (gpus * peak * compute_efficiency),
//               bytes / (gpus * hbm_bandwidth * memory_efficiency))
//         + tensor-parallel all-reduces (2 per layer, ring: 2 (g-1)/g * tokens * hidden *
//           activation bytes over tp_allreduce_bandwidth; 0 when that is 0 or gpus == 1)
//         + iteration_overhead_s
// A prefill is then compute-bound and a small decode batch memory-bound, from the same rule.
// Batch-1 decode with c tokens of context takes (weights + kv_bytes_per_token * (c)) /
// (gpus * hbm_bandwidth * memory_efficiency): the memory-bandwidth bound.
//
// Measured timing (MeasuredTiming::enabled), as Vidur and Splitwise fit profiles:
//   time = base_s + per_prefill_token_s * prefill tokens + per_decode_sequence_s * decode
//          sequences + per_context_token_s * KV tokens read.
//
// KV cache (vLLM's rule): bytes = gpus * hbm_bytes * gpu_memory_utilization - weight bytes -
// activation_reserve_bytes (or kv_cache_bytes when given), in blocks of block_size tokens.
//
// Defaults: Llama-3-8B (32 layers, hidden 4096, 8 KV heads of 128, BF16) on one H100 SXM
// (989 TFLOP/s dense BF16, 3.35 TB/s, 80 GB: NVIDIA H100 datasheet). The efficiencies are
// estimates: 0.7 of HBM bandwidth gives about 7 ms per batch-1 decode step of an 8B model,
// near what vLLM reaches on an H100; 0.6 of peak for prefill GEMMs.
#include <cstdint>

namespace cs::serving {

struct GpuSpec {
  double peak_flops = 989e12;          // FLOP/s, dense, serving precision
  double hbm_bandwidth_Bps = 3.35e12;  // bytes/s
  double hbm_bytes = 80e9;             // bytes
  double compute_efficiency = 0.6;     // share of peak_flops reached, (0, 1]
  double memory_efficiency = 0.7;      // share of hbm_bandwidth reached, (0, 1]
};

struct LlmModelSpec {
  double params = 8.03e9;       // every weight: what the replica holds in memory and reads
  double active_params = 0;     // weights a token's GEMMs use (MoE: top-k experts); 0: params
  double bytes_per_param = 2;   // BF16 weights
  int layers = 32;
  int hidden = 4096;
  int kv_heads = 8;
  int head_dim = 128;
  double kv_bytes_per_element = 2;
  double activation_bytes_per_element = 2;

  double weight_bytes() const { return params * bytes_per_param; }
  double flop_params() const { return active_params > 0 ? active_params : params; }
  // K and V of every layer for one token.
  double kv_bytes_per_token() const {
    return 2.0 * layers * kv_heads * head_dim * kv_bytes_per_element;
  }
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
};

struct LlmTimingSpec {
  int gpus = 1;  // tensor-parallel GPUs per replica, >= 1
  GpuSpec gpu;
  LlmModelSpec model;
  double gpu_memory_utilization = 0.9;   // vLLM's --gpu-memory-utilization
  double activation_reserve_bytes = 4e9; // per replica: activations, CUDA graphs, workspace (estimate)
  double kv_cache_bytes = 0;             // > 0: use this instead of the rule above
  double tp_allreduce_bandwidth_Bps = 0; // per GPU bus bandwidth of the TP all-reduce; 0: free
  double iteration_overhead_s = 0;       // scheduling and launch time added to every iteration
  MeasuredTiming measured;
};

// The rule above with its constants folded (a replica computes them once).
class IterationCost {
 public:
  explicit IterationCost(const LlmTimingSpec& spec);
  double seconds(const IterationWork& work) const {
    const double tokens = static_cast<double>(work.decode_sequences + work.prefill_tokens);
    if (measured_) {
      return m_.base_s + m_.per_prefill_token_s * static_cast<double>(work.prefill_tokens) +
             m_.per_decode_sequence_s * static_cast<double>(work.decode_sequences) +
             m_.per_context_token_s * (work.decode_context_tokens + work.prefill_context_tokens);
    }
    const double compute_s = per_token_compute_s_ * tokens +
                             per_attended_compute_s_ * (work.decode_context_tokens + work.prefill_attended);
    const double kv_tokens = work.decode_context_tokens + work.prefill_context_tokens +
                             static_cast<double>(work.prefill_tokens);
    const double memory_s = weights_s_ + per_kv_token_s_ * kv_tokens;
    return (compute_s > memory_s ? compute_s : memory_s) + per_token_comm_s_ * tokens + overhead_s_;
  }

 private:
  bool measured_;
  MeasuredTiming m_;
  double per_token_compute_s_ = 0;    // 2 params FLOPs
  double per_attended_compute_s_ = 0; // 4 layers hidden FLOPs
  double weights_s_ = 0;              // reading the weights
  double per_kv_token_s_ = 0;         // reading or writing one token's KV
  double per_token_comm_s_ = 0;       // tensor-parallel all-reduces
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
