#include "sim/serving/llm_timing.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

#include "workloads/unfused_attention.hpp"

namespace cs::serving {

LlmModelSpec LlmModelSpec::held_by(int tp) const {
  LlmModelSpec held = *this;
  const int q = query_heads();
  held.heads = (q + tp - 1) / tp * tp;
  held.kv_heads = tp * ((kv_heads + tp - 1) / tp);
  // Q and O per padded query head, K and V per copied KV head: hidden x head_dim each.
  const double added = 2.0 * layers * hidden * head_dim * ((held.heads - q) + (held.kv_heads - kv_heads));
  held.params += added;
  if (active_params > 0) held.active_params += added;
  return held;
}

IterationCost::IterationCost(const LlmTimingSpec& spec)
    : measured_(spec.measured.enabled), m_(spec.measured) {
  const LlmModelSpec model = spec.held_model();
  const double g = spec.gpus;
  const double flops_per_s = g * spec.gpu.peak_flops * spec.gpu.compute_efficiency;
  const double bytes_per_s = g * spec.gpu.hbm_bandwidth_Bps * spec.gpu.memory_efficiency;
  per_token_compute_s_ = 2.0 * model.flop_params() / flops_per_s;
  // Q K^T and P V per attended position, fused or not (integers: the product is exact in any order).
  per_attended_compute_s_ =
      work::unfused_attention::flops_per_score(model.head_dim) * model.layers * model.heads / flops_per_s;
  weights_s_ = model.weight_bytes() / bytes_per_s;
  // A dense cache is streamed as one array: no block-table gather.
  const double kv_share = spec.kv_layout == KvLayout::dense_slots ? 1.0 : spec.gpu.paged_kv_efficiency;
  per_kv_token_s_ = model.kv_bytes_per_token() / (bytes_per_s * kv_share);
  if (!spec.flash_attention) {
    namespace ua = work::unfused_attention;
    unfused_ = true;
    const double score_elements = static_cast<double>(model.layers) * model.heads;  // per score position
    per_score_traffic_s_ = score_elements * ua::kGemmTrafficBytes / bytes_per_s;
    per_score_softmax_s_ = score_elements * ua::kSoftmaxBytes / bytes_per_s;
  }
  if (spec.gpus > 1) {
    // Megatron-style tensor parallelism: one all-reduce after attention, one after the MLP.
    tp_ = spec.tp_allreduce;
    tp_.drop_dominated();
    allreduces_ = 2.0 * model.layers;
    activation_bytes_ = model.hidden * model.activation_bytes_per_element;
    gather_ = spec.tp_allgather;
    gather_.drop_dominated();
    logits_bytes_ = model.vocab * model.activation_bytes_per_element;
  }
  overhead_s_ = spec.iteration_overhead_s;
}

void pad_to_compiled_shapes(IterationWork& work, int64_t requests, int64_t max_num_seqs) {
  const auto pow2_at_least = [](int64_t n, int64_t least) {
    return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(std::max(n, least))));
  };
  work.padded_tokens = pow2_at_least(work.decode_sequences + work.prefill_tokens, 16);
  work.padded_sampled = std::min(pow2_at_least(requests, 8), std::max<int64_t>(max_num_seqs, 8));
}

double iteration_time_s(const LlmTimingSpec& spec, const IterationWork& work) {
  return IterationCost(spec).seconds(work);
}

double kv_cache_bytes(const LlmTimingSpec& spec) {
  if (spec.kv_cache_bytes > 0) return spec.kv_cache_bytes;
  return spec.gpus * spec.gpu.hbm_bytes * spec.gpu_memory_utilization - spec.held_model().weight_bytes() -
         spec.activation_reserve_bytes;
}

int64_t kv_cache_blocks(const LlmTimingSpec& spec, int block_size) {
  const double bytes = kv_cache_bytes(spec);
  const double block_bytes = spec.held_model().kv_bytes_per_token() * block_size;
  if (!(bytes > 0) || !(block_bytes > 0)) return 0;
  return static_cast<int64_t>(std::floor(bytes / block_bytes));
}

void validate_timing(const LlmTimingSpec& spec) {
  const auto require = [](bool ok, const char* field, const std::string& what) {
    if (!ok) throw std::invalid_argument(std::string(field) + ": " + what);
  };
  const auto positive = [](double x) { return std::isfinite(x) && x > 0; };
  const auto share = [](double x) { return std::isfinite(x) && x > 0 && x <= 1; };
  require(spec.gpus >= 1, "replica.gpus", "must be >= 1");
  require(spec.iteration_overhead_s >= 0, "replica.iteration_overhead", "must be >= 0");
  for (const AllReduceCost* cost : {&spec.tp_allreduce, &spec.tp_allgather})
    for (const AllReduceCost::Piece& p : cost->pieces)
      require(p.fixed_s >= 0 && p.per_byte_s >= 0 && std::isfinite(p.fixed_s + p.per_byte_s), "replica.tp_allreduce",
              "costs must be finite and >= 0");
  if (spec.measured.enabled) {
    const MeasuredTiming& m = spec.measured;
    require(m.base_s >= 0 && m.per_prefill_token_s >= 0 && m.per_decode_sequence_s >= 0 &&
                m.per_context_token_s >= 0,
            "replica.measured", "times must be >= 0");
    require(m.base_s + m.per_prefill_token_s + m.per_decode_sequence_s > 0, "replica.measured",
            "an iteration must take time");
  } else {
    require(positive(spec.gpu.peak_flops), "hardware.gpu.peak_flops", "must be > 0");
    require(positive(spec.gpu.hbm_bandwidth_Bps), "hardware.gpu.hbm_bandwidth", "must be > 0");
    require(share(spec.gpu.compute_efficiency), "replica.compute_efficiency", "must be in (0, 1]");
    require(share(spec.gpu.memory_efficiency), "replica.memory_efficiency", "must be in (0, 1]");
    require(share(spec.gpu.paged_kv_efficiency), "replica.paged_kv_efficiency", "must be in (0, 1]");
  }
  require(positive(spec.model.params) && positive(spec.model.bytes_per_param), "model.params",
          "must be > 0");
  require(spec.model.layers > 0 && spec.model.hidden > 0 && spec.model.kv_heads > 0 && spec.model.vocab > 0 &&
              spec.model.head_dim > 0 && positive(spec.model.kv_bytes_per_element),
          "model", "layers, hidden, kv_heads, head_dim, vocab and KV bytes must be > 0");
  require(share(spec.gpu_memory_utilization), "replica.gpu_memory_utilization", "must be in (0, 1]");
  require(spec.activation_reserve_bytes >= 0, "replica.activation_reserve", "must be >= 0");
  require(spec.dense_slot_tokens >= 1, "replica.dense_slot_tokens", "must be >= 1");
  require(kv_cache_bytes(spec) > 0, "replica",
          "the model's weights (" + std::to_string(spec.held_model().weight_bytes() / 1e9) +
              " GB) and activation reserve leave no KV cache on " + std::to_string(spec.gpus) +
              " GPU(s); add GPUs (tensor parallelism) or lower the reserve");
}

}  // namespace cs::serving
