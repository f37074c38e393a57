// The static-batch scheduler of LlmReplica (llm_replica.hpp, `static_batch`): a batch forms
// when none runs, encodes its prompts in one context pass and decodes until its last request is
// done; only then does the next batch form.
#include <algorithm>

#include "sim/engine/priority.hpp"
#include "sim/serving/llm_replica.hpp"

namespace cs::serving {

// A batch forms at the end of its instant, after every request arriving then was submitted:
// arrivals run at priority act, the formation at resolve (engine/priority.hpp), so requests
// sent together share a context pass, as a client's batch of prompts does.
void LlmReplica::defer_static_batch() {
  update_load();
  // A batch ended: its slots are free only now (a central queue or a balancer holding its queue
  // gives requests to a replica that can start them, not to one whose batch still runs).
  if (closed()) {
    set_closed(false);
    if (can_start_now()) slot_freed();  // may submit requests here: they form the next batch
  }
  if (waiting_.empty()) {
    maybe_drained();
    return;
  }
  if (!form_pending_) {
    form_event_ = sim_.schedule_in(0.0, *this, kFormBatch, engine::priority::resolve);
    form_pending_ = true;
  }
}

void LlmReplica::schedule_static_batch() {
  if (running_ > 0) {
    if (n_decode_ > 0) grow_decoders();  // every row's KV growth was reserved: nothing is preempted
    return;
  }
  // A new batch: FCFS up to max_num_seqs, each request's KV cache to its last token reserved
  // with those before it (the batch never preempts), its prompt whole in the context pass.
  // Over dense slots every row runs at the batch's position, so the longest prompt and the
  // longest output must fit a row's n_positions together (transformers-neuronx's sample loop
  // stops at the sequence length): a request that would overflow it waits for the next batch.
  int64_t growth = 0;
  int64_t longest_output = 0;
  batch_prompt_ = 0;
  while (!waiting_.empty() && running_ < spec_.batching.max_num_seqs) {
    const uint32_t s = waiting_.front();
    const int64_t prompt = seqs_[s].request.prompt_tokens;
    const int64_t output = seqs_[s].request.output_tokens;
    if (dense() && std::max(batch_prompt_, prompt) + std::max(longest_output, output) > block_) break;
    const int64_t own = blocks_for(prompt + output) - blocks_for(prompt);
    if (admit_prompt(s, prompt, growth + own) == 0) break;
    growth += own;
    batch_prompt_ = std::max(batch_prompt_, prompt);
    longest_output = std::max(longest_output, output);
  }
  batch_rows_ = running_;
  batch_clock_ = decode_clock_;
  set_closed(running_ > 0);  // nothing starts before the batch's end
}

// Every row sits at the batch's position (prompts padded to the longest), finished or not. Over
// dense slots the decode graph of transformers-neuronx's token bucket runs, reading each row's
// cache to the bucket's length: the first of 128, 256, ... (the last n_positions, here
// dense_slot_tokens) that holds the position (bucket.py token_sizes, utils.py
// power_of_two_bucket_sizes, decoder.py find_bucket_id and _hlo_layers_params at 0623de2).
double LlmReplica::static_decode_context_tokens(uint64_t clock) const {
  int64_t tokens = batch_prompt_ + static_cast<int64_t>(clock - batch_clock_) + 1;
  if (dense()) {
    int64_t bucket = 128;
    while (bucket < tokens && bucket < block_) bucket *= 2;
    tokens = std::min(bucket, block_);
  }
  return static_cast<double>(batch_rows_) * static_cast<double>(tokens);
}

}  // namespace cs::serving
