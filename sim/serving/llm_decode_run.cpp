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
// grows along the run: the token terms are the first iteration's. The loop reads locals only
// (stores into run_end_s_ could alias members: they would be reloaded every iteration).
void LlmReplica::plan_decode_run(const IterationWork& work, const IterationCost::TokenTerms& terms) {
  constexpr uint64_t kMaxRun = 1024;
  const uint64_t first_finish = finishes_.top().clock;
  uint64_t later = std::min(first_finish - decode_clock_ + 1, kMaxRun) - 1;
  // The KV blocks fit the whole run (surely when every decoder could take a block in each cycle
  // of block_ iterations begun), or it ends before the first iteration they would not fit.
  const int64_t free = free_blocks();
  const auto block = static_cast<uint64_t>(block_);
  if (!dense() && static_cast<int64_t>((later + block - 1) / block) * n_decode_ > free && run_growth(later) > free) {
    std::size_t phase = decode_clock_ % block;
    int64_t growth = 0;
    for (uint64_t i = 1; i <= later; ++i) {
      if (++phase == block) phase = 0;
      growth += phase_count_[phase];
      if (growth > free) {
        later = i - 1;
        break;
      }
    }
  }
  const IterationCost::DecodeStep step = cost_.decode_step(terms);
  const auto decoders = static_cast<double>(n_decode_);
  run_end_s_.resize(later + 1);
  double* const ends = run_end_s_.data();
  // One loop, compiled for each way the context moves (no test of it per iteration).
  const auto plan = [&]<bool kPaged, bool kBatch>() {
    double context = work.decode_context_tokens;
    double end_s = ends[0];
    for (uint64_t i = 1; i <= later; ++i) {
      if constexpr (kBatch) context = static_decode_context_tokens(decode_clock_ + i);
      else if constexpr (kPaged) context += decoders;  // a dense step reads the same slots
      end_s += step.seconds(context);
      ends[i] = end_s;
    }
  };
  if (static_batch()) plan.template operator()<false, true>();
  else if (dense()) plan.template operator()<false, false>();
  else plan.template operator()<true, false>();
}

// The KV blocks the `later_iterations` after a run's first take (the first's are taken when the
// run starts): decode iteration k gives a new block to the decoders of phase k mod block_, and a
// whole cycle of block_ iterations one to every decoder. A dense slot takes none.
int64_t LlmReplica::run_growth(uint64_t later_iterations) const {
  if (dense() || later_iterations == 0) return 0;
  const auto block = static_cast<uint64_t>(block_);
  std::size_t phase = decode_clock_ % block;
  int64_t growth = static_cast<int64_t>(later_iterations / block) * n_decode_;
  for (uint64_t i = later_iterations % block; i > 0; --i) {
    if (++phase == block) phase = 0;
    growth += phase_count_[phase];
  }
  return growth;
}

// A request arrived during a run: end the run with the iteration in progress (the first not
// ended yet; runs are mostly cut early, so a scan from the front).
void LlmReplica::cut_decode_run() {
  const double now = sim_.now();
  const auto in_progress =
      std::find_if(run_end_s_.begin(), run_end_s_.end(), [now](double end_s) { return !(end_s < now); });
  if (in_progress == run_end_s_.end() || in_progress + 1 == run_end_s_.end()) return;
  run_end_s_.erase(in_progress + 1, run_end_s_.end());
  sim_.cancel(iteration_event_);
  iteration_event_ = sim_.schedule_at(run_end_s_.back(), *this, 0);
}

}  // namespace cs::serving
