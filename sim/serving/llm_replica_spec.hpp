#pragma once
// An LLM replica's settings as plain values (workload.replica.*): the scheduler, the batching
// limits and the step padding (BatchingSpec) beside the step timing (llm_timing.hpp), and the
// replica's role in disaggregated serving. What the schedulers do with them: llm_replica.hpp.
//
// Units: tokens and sequences as counted, KV blocks of block_size tokens, bytes.
#include <array>
#include <cstdint>

#include "common/enum_table.hpp"
#include "sim/serving/llm_timing.hpp"

namespace cs::serving {

enum class SchedulerMode : uint8_t { chunked_prefill, prefill_first, jetstream, static_batch };
// workload.replica.scheduler.
inline constexpr auto kSchedulerModeNames = std::to_array<EnumName<SchedulerMode>>({
    {"chunked_prefill", SchedulerMode::chunked_prefill, "vLLM v1: decodes first, then prompt chunks, in one batch"},
    {"prefill_first", SchedulerMode::prefill_first, "vLLM v0: prefill-only batches while prompts fit, else decode"},
    {"jetstream", SchedulerMode::jetstream, "JetStream: one padded prompt per prefill while a slot is free, else decode"},
    {"static_batch", SchedulerMode::static_batch,
     "static batches (transformers-neuronx, HuggingFace generate): one context pass, then decode until the last is done"},
});
static_assert(names_every_value<kSchedulerModeNames>());
// workload.replica.step_padding: the shapes a step's model runs at.
//   none          the tokens and sequences scheduled (CUDA graphs pad decode batches a little;
//                 not modelled)
//   power_of_two  vLLM for TPU, which compiles one XLA graph per shape: a step's tokens padded
//                 to the next power of two from 16 and its sampled requests to the next power of
//                 two from 8, at most max(max_num_seqs, 8) (vllm/v1/worker/tpu_model_runner.py
//                 at 002f349: _get_token_paddings with VLLM_TPU_BUCKET_PADDING_GAP 0,
//                 _get_padded_token_len, _get_padded_num_reqs_with_upper_limit; tpu-inference's
//                 runner keeps the rule). The GEMMs and all-reduces run on the padded tokens, the
//                 LM head's logits on the padded requests; attention reads the real sequences
//                 (its ragged kernel takes their lengths).
enum class StepPadding : uint8_t { none, power_of_two };
inline constexpr auto kStepPaddingNames = std::to_array<EnumName<StepPadding>>({
    {"none", StepPadding::none, "the step runs at the tokens and sequences scheduled"},
    {"power_of_two", StepPadding::power_of_two,
     "vLLM for TPU: tokens padded to a power of two from 16, sampled requests from 8"},
});
static_assert(names_every_value<kStepPaddingNames>());
// A replica's part in disaggregated serving (llm_replica.hpp: Roles).
enum class LlmRole : uint8_t { unified, prefill, decode };

struct BatchingSpec {
  SchedulerMode scheduler = SchedulerMode::chunked_prefill;
  int max_num_seqs = 256;                 // vLLM --max-num-seqs
  int64_t max_num_batched_tokens = 8192;  // vLLM --max-num-batched-tokens
  int block_size = 16;                    // vLLM --block-size (tokens per KV block)
  double admission_watermark = 0.01;      // prefill_first: share of blocks kept free (vLLM v0)
  // vLLM v1's automatic prefix caching (--enable-prefix-caching, on by default in v1): a
  // preempted sequence's blocks stay cached and are taken back when it runs again.
  bool prefix_caching = true;
  StepPadding step_padding = StepPadding::none;
  // Simulate a run of decode-only iterations in which nothing can change (no request joins,
  // none finishes, the KV growth fits) with one engine event instead of one per iteration.
  // An arrival in the middle cuts the run at the iteration in progress. Times and results are
  // those of one event per iteration; only the kv_cache_usage signal is then sampled at the
  // run's ends rather than at every iteration.
  bool coalesce_decode_iterations = true;
};

struct LlmReplicaSpec {
  LlmTimingSpec timing;
  BatchingSpec batching;
};

// Throws std::invalid_argument naming the field.
void validate_llm_replica(const LlmReplicaSpec& spec);
// Bytes of the dense KV array (kv_layout dense_slots): max_num_seqs x dense_slot_tokens x the
// held model's KV bytes per token. It must fit in kv_cache_bytes(spec.timing).
double dense_kv_bytes(const LlmReplicaSpec& spec);

}  // namespace cs::serving
