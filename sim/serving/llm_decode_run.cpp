// Runs of decode-only iterations of LlmReplica (llm_replica.hpp,
// BatchingSpec::coalesce_decode_iterations): the iterations after a decode-only one, planned at
// once and run as one engine event, and their cut when a request arrives during the run.
#include <algorithm>
#include <optional>

#include "sim/serving/llm_replica.hpp"

namespace cs::serving {

// The token terms of a decode-only iteration depend on its decode sequences alone (its padded
// shapes are theirs): each count's are computed once.
IterationCost::TokenTerms LlmReplica::decode_terms(const IterationWork& work) {
  const auto n = static_cast<std::size_t>(work.decode_sequences);
  if (n >= decode_terms_.size()) decode_terms_.resize(n + 1);
  std::optional<IterationCost::TokenTerms>& terms = decode_terms_[n];
  if (!terms) terms = cost_.token_terms(work);
  return *terms;
}

// Decode-only iterations after this one, up to the first that finishes a sequence or whose
// KV growth would not fit: nothing the scheduler looks at changes before then (admission
// waits for freed blocks or slots; arrivals cut the run, cut_decode_run()). Only the context
// grows along the run: the token terms are the first iteration's. What the loop reads is in
// locals (stores into run_ could alias members: they would be reloaded every iteration).
void LlmReplica::plan_decode_run(const IterationWork& work, const IterationCost::TokenTerms& terms) {
  constexpr uint64_t kMaxRun = 1024;
  const uint64_t first_finish = finishes_.top().clock;
  const uint64_t iterations = std::min(first_finish - decode_clock_ + 1, kMaxRun);
  const IterationCost::DecodeStep step = cost_.decode_step(terms);
  const int64_t free = free_blocks();
  const int32_t* const phase_count = phase_count_.data();
  const std::size_t phases = phase_count_.size();
  const auto decoders = static_cast<double>(n_decode_);
  run_.reserve(iterations);
  // One loop, compiled for each layout and scheduler (no test of them per iteration).
  const auto plan = [&]<bool kPaged, bool kBatch>() {
    int64_t growth = 0;
    std::size_t phase = kPaged ? decode_clock_ % static_cast<uint64_t>(block_) : 0;
    double context = work.decode_context_tokens;
    double end_s = run_.back().end_s;
    for (uint64_t i = 1; i < iterations; ++i) {
      if constexpr (kPaged) {
        if (++phase == phases) phase = 0;
        growth += phase_count[phase];
        if (growth > free) break;
      }
      if constexpr (kBatch) context = static_decode_context_tokens(decode_clock_ + i);
      else if constexpr (kPaged) context += decoders;  // a dense step reads the same slots
      end_s += step.seconds(context);
      run_.push_back({end_s, growth});
    }
  };
  if (dense()) static_batch() ? plan.template operator()<false, true>() : plan.template operator()<false, false>();
  else static_batch() ? plan.template operator()<true, true>() : plan.template operator()<true, false>();
}

// A request arrived during a run: end the run with the iteration in progress.
void LlmReplica::cut_decode_run() {
  const auto in_progress = std::lower_bound(run_.begin(), run_.end(), sim_.now(),
                                            [](const RunIteration& it, double t) { return it.end_s < t; });
  if (in_progress == run_.end() || in_progress + 1 == run_.end()) return;
  run_.erase(in_progress + 1, run_.end());
  sim_.cancel(iteration_event_);
  iteration_event_ = sim_.schedule_at(run_.back().end_s, *this, 0);
}

}  // namespace cs::serving
