// Runs of decode-only iterations of LlmReplica (llm_replica.hpp,
// BatchingSpec::coalesce_decode_iterations): the iterations after a decode-only one, planned at
// once and run as one engine event, and their cut when a request arrives during the run.
#include <algorithm>

#include "sim/serving/llm_replica.hpp"

namespace cs::serving {

// Decode-only iterations after this one, up to the first that finishes a sequence or whose
// KV growth would not fit: nothing the scheduler looks at changes before then (admission
// waits for freed blocks or slots; arrivals cut the run, cut_decode_run()).
void LlmReplica::plan_decode_run(IterationWork work) {
  constexpr uint64_t kMaxRun = 1024;
  const uint64_t first_finish = finishes_.top().clock;
  const uint64_t iterations = std::min(first_finish - decode_clock_ + 1, kMaxRun);
  // Only the context grows along the run: the token terms are the first iteration's.
  const IterationCost::TokenTerms terms = cost_.token_terms(work);
  const int64_t free = free_blocks();
  int64_t growth = 0;
  std::size_t phase = decode_clock_ % static_cast<uint64_t>(block_);
  for (uint64_t i = 1; i < iterations; ++i) {
    if (!dense()) {
      if (++phase == phase_count_.size()) phase = 0;
      growth += phase_count_[phase];
    }
    if (growth > free) break;
    if (static_batch()) work.decode_context_tokens = static_decode_context_tokens(decode_clock_ + i);
    else if (!dense()) work.decode_context_tokens += n_decode_;  // a dense step reads the same slots
    run_.push_back({run_.back().end_s + cost_.seconds(work, terms), growth});
  }
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
