#include "sim/serving/llm_replica.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "common/free_slots.hpp"

namespace cs::serving {

namespace {
// A KV block's tokens and the replica's blocks: a dense slot is one block of dense_slot_tokens,
// max_num_seqs of them; a paged cache's blocks are what the memory rule leaves.
int64_t kv_block_tokens(const LlmReplicaSpec& spec) {
  return spec.timing.kv_layout == KvLayout::dense_slots ? spec.timing.dense_slot_tokens : spec.batching.block_size;
}
int64_t kv_blocks(const LlmReplicaSpec& spec) {
  return spec.timing.kv_layout == KvLayout::dense_slots ? spec.batching.max_num_seqs
                                                         : kv_cache_blocks(spec.timing, spec.batching.block_size);
}
}  // namespace

double dense_kv_bytes(const LlmReplicaSpec& spec) {
  return static_cast<double>(spec.batching.max_num_seqs) * static_cast<double>(spec.timing.dense_slot_tokens) *
         spec.timing.held_model().kv_bytes_per_token();
}

void validate_llm_replica(const LlmReplicaSpec& spec) {
  validate_timing(spec.timing);
  const BatchingSpec& b = spec.batching;
  const auto require = [](bool ok, const char* field, const char* what) {
    if (!ok) throw std::invalid_argument(std::string(field) + ": " + what);
  };
  require(b.max_num_seqs >= 1, "replica.max_num_seqs", "must be >= 1");
  require(b.max_num_batched_tokens >= 1, "replica.max_num_batched_tokens", "must be >= 1");
  require(b.block_size >= 1, "replica.block_size", "must be >= 1");
  require(b.admission_watermark >= 0 && b.admission_watermark < 1, "replica.admission_watermark",
          "must be in [0, 1)");
  if (b.scheduler == SchedulerMode::static_batch)
    require(!b.prefix_caching, "replica.prefix_caching", "must be off with static batches (every prompt is encoded whole)");
  if (b.scheduler == SchedulerMode::chunked_prefill) {
    require(b.max_num_batched_tokens >= b.max_num_seqs, "replica.max_num_batched_tokens",
            "must be >= max_num_seqs with chunked prefill (every running sequence decodes each iteration)");
  }
  require(kv_cache_blocks(spec.timing, b.block_size) >= 1, "replica",
          "the KV cache holds less than one block");
  if (spec.timing.kv_layout == KvLayout::dense_slots) {
    require(!b.prefix_caching, "replica.prefix_caching", "must be off with dense slots (no block is shared)");
    // The dense array is allocated whole, as MaxText does when the server starts.
    const double dense_bytes = dense_kv_bytes(spec);
    if (dense_bytes > kv_cache_bytes(spec.timing))
      throw std::invalid_argument("replica.max_num_seqs: " + std::to_string(b.max_num_seqs) + " dense slots of " +
                                  std::to_string(spec.timing.dense_slot_tokens) + " tokens need " +
                                  std::to_string(dense_bytes / 1e9) + " GB of KV cache; the replica has " +
                                  std::to_string(kv_cache_bytes(spec.timing) / 1e9) +
                                  " GB: fewer slots, shorter slots or more GPUs");
  }
}

LlmReplica::LlmReplica(engine::Simulator& sim, ReplicaListener& listener, uint32_t id,
                       const LlmReplicaSpec& spec, LlmRole role, LlmReplicaStats* totals)
    : Replica(sim, listener, id, std::max(1, spec.batching.max_num_seqs)), spec_(spec), role_(role), totals_(totals), cost_(spec.timing),
      block_(kv_block_tokens(spec)), pool_(kv_blocks(spec)) {
  validate_llm_replica(spec_);
  if (static_batch() && role != LlmRole::unified)
    throw std::invalid_argument("replica.scheduler: static_batch runs a unified replica (a batch prefills and decodes)");
  // A dense slot holds its prompt and output whole (admissible()): no decoder takes a new block,
  // and a phase table as long as the slot (up to 2^30 tokens) would only hold zeros.
  if (!dense()) phase_count_.assign(static_cast<std::size_t>(block_), 0);
}

LlmReplica::~LlmReplica() {
  if (busy_) sim_.cancel(iteration_event_);
  if (form_pending_) sim_.cancel(form_event_);
  uncount_lag_tokens();
  if (totals_) *totals_ += stats_;
}

// JetStream's generate thread never waits for the chips: it dispatches a step, starts copying
// its tokens to the host and puts them on the detokenize queue, which holds 8 entries
// (_detokenize_backlogs in jetstream/core/orchestrator.py at 530d364). The detokenize thread
// frees a finished request's slot once it has that step's tokens, by when the generate thread
// has dispatched the 8 queued steps and the one it was blocked putting: the next request's
// first decode step is the 10th after the last token's (the host outrunning the chips, as it
// does when a step takes milliseconds). The paged layout, which JetStream did not run, and
// whose sequences may be preempted, frees a slot at once.
int64_t LlmReplica::slot_lag_steps() const {
  return spec_.batching.scheduler == SchedulerMode::jetstream && dense() ? kJetStreamSlotLagSteps : 0;
}

int64_t LlmReplica::lag_steps_done(const Seq& q) const {
  const auto steps = static_cast<int64_t>(decode_clock_ - q.decode_entry);
  return std::max<int64_t>(0, steps - (q.request.output_tokens - q.generated));
}

// A decode step counts a token for every decoding sequence; those in their slot's lag
// produced none.
void LlmReplica::uncount_lag_tokens() {
  for (uint32_t s = run_head_; s != kNone; s = seqs_[s].next)
    if (seqs_[s].phase == Phase::decoding) stats_.tokens_out -= static_cast<uint64_t>(lag_steps_done(seqs_[s]));
}

bool LlmReplica::admissible(const Request& request) const {
  const int64_t p = request.prompt_tokens;
  const int64_t most_tokens = role_ == LlmRole::prefill ? p : p + request.output_tokens;
  if (dense() && most_tokens > block_) return false;  // its slot holds them all (a prefill replica's: the prompt)
  if (spec_.batching.scheduler == SchedulerMode::jetstream) {
    if (p > spec_.batching.max_num_batched_tokens) return false;  // the longest prefill
    return blocks_for(most_tokens) <= pool_.total();
  }
  if (spec_.batching.scheduler == SchedulerMode::prefill_first) {
    if (most_tokens > spec_.batching.max_num_batched_tokens) return false;
    return blocks_for(most_tokens) + watermark_blocks() <= pool_.total();
  }
  return blocks_for(most_tokens) <= pool_.total();
}

// ---- sequence bookkeeping ----

uint32_t LlmReplica::new_seq(const Request& request) {
  const uint32_t s = take_slot(seqs_, free_seqs_);
  Seq& q = seqs_[s];
  ++q.generation;
  q.request = request;
  q.prefill_target = request.prompt_tokens;
  // A request whose KV cache came from a prefill pool has its prompt computed and its first
  // token out.
  q.computed = request.prefilled ? request.prompt_tokens : 0;
  q.generated = request.prefilled ? 1 : 0;
  q.blocks = 0;
  q.cached = KvBlockPool::kNone;
  q.group = kNone;
  q.shared = 0;
  q.prev = q.next = kNone;
  q.phase = Phase::waiting;
  return s;
}

void LlmReplica::release_seq(uint32_t s) {
  pool_.forget(seqs_[s].cached);
  seqs_[s].cached = KvBlockPool::kNone;
  seqs_[s].phase = Phase::free;
  ++seqs_[s].generation;
  free_seqs_.push_back(s);
}

void LlmReplica::link_back(uint32_t s) {
  Seq& q = seqs_[s];
  q.prev = run_tail_;
  q.next = kNone;
  if (run_tail_ != kNone) seqs_[run_tail_].next = s;
  else run_head_ = s;
  run_tail_ = s;
  ++running_;
}

void LlmReplica::unlink(uint32_t s) {
  Seq& q = seqs_[s];
  if (q.prev != kNone) seqs_[q.prev].next = q.next;
  else run_head_ = q.next;
  if (q.next != kNone) seqs_[q.next].prev = q.prev;
  else run_tail_ = q.prev;
  q.prev = q.next = kNone;
  --running_;
}

void LlmReplica::update_load() {
  set_load(running_, static_cast<int>(waiting_.size()), static_cast<double>(pool_.used()) / static_cast<double>(pool_.total()));
}

// ---- decoding set ----
// A decoder that entered at clock k0 holding `base` KV tokens holds base + (k - k0) tokens
// before decode iteration k and needs a new block in iteration k exactly when that count is a
// multiple of the block size, i.e. when k = (k0 - base) mod block. Counting decoders by that
// phase gives each iteration's new blocks in O(1).

namespace {
std::size_t block_phase(uint64_t entry, int64_t base, int64_t block) {
  const int64_t e = static_cast<int64_t>(entry % static_cast<uint64_t>(block));
  return static_cast<std::size_t>(((e - base % block) % block + block) % block);
}
}  // namespace

void LlmReplica::start_decoding(uint32_t s) {
  Seq& q = seqs_[s];
  q.phase = Phase::decoding;
  q.decode_base = q.prefill_target;
  q.decode_entry = decode_clock_;
  q.finish_clock =
      decode_clock_ + static_cast<uint64_t>(q.request.output_tokens - q.generated - 1 + slot_lag_steps());
  if (!dense()) ++phase_count_[block_phase(q.decode_entry, q.decode_base, block_)];
  ++n_decode_;
  decode_kv_sum_ += static_cast<double>(q.decode_base);
  finishes_.push({q.finish_clock, s, q.generation});
}

int64_t LlmReplica::stop_decoding(uint32_t s) {
  Seq& q = seqs_[s];
  const int64_t kv = decode_kv_tokens(q);
  if (!dense()) --phase_count_[block_phase(q.decode_entry, q.decode_base, block_)];
  --n_decode_;
  decode_kv_sum_ -= static_cast<double>(kv);
  stats_.tokens_out -= static_cast<uint64_t>(lag_steps_done(q));
  q.generated += static_cast<int32_t>(decode_clock_ - q.decode_entry);
  ++q.generation;  // its heap entry is stale from now on
  return kv;
}

void LlmReplica::preempt(uint32_t s) {
  Seq& q = seqs_[s];
  int64_t computed_kv, held;  // KV tokens computed, own blocks held
  if (q.phase == Phase::decoding) {
    computed_kv = stop_decoding(s);
    held = blocks_for(computed_kv) - q.shared;
  } else {
    computed_kv = q.computed;
    held = q.blocks;
    const auto it = std::find(prefilling_.rbegin(), prefilling_.rend(), s);
    prefilling_.erase(std::next(it).base());
  }
  // Its full blocks stay cached (prefix caching): the partial last one and any allocated
  // ahead of the computation hold nothing reusable.
  const int64_t full =
      spec_.batching.prefix_caching ? std::clamp<int64_t>(computed_kv / block_ - q.shared, 0, held) : 0;
  pool_.free_uncached(held - full);
  q.cached = pool_.free_cached(full);
  leave_group(q);  // the prefix's blocks after its own: vLLM frees a request's tail first
  unlink(s);
  q.blocks = 0;
  q.phase = Phase::waiting;
  q.computed = 0;
  // Recompute mode: the prompt and every token produced so far are computed again, less
  // what the prefix cache still holds when it is scheduled (admit_prompt).
  q.prefill_target = q.request.prompt_tokens + q.generated;
  waiting_.push_front(s);
  ++stats_.preemptions;
}

void LlmReplica::grow_decoders() {
  while (n_decode_ > 0) {
    const int64_t need = dense() ? 0 : phase_count_[decode_clock_ % static_cast<uint64_t>(block_)];
    if (need <= free_blocks()) {
      pool_.allocate(need);
      break;
    }
    preempt(run_tail_);
  }
  decode_in_iteration_ = n_decode_ > 0;
  decode_kv_sum_ += n_decode_;  // each decoder's new token
}

// Requests at the head of the queue whose KV cache arrived join the decoders of this very
// iteration, while blocks and sequence slots last.
void LlmReplica::admit_arrived_kv() {
  while (!waiting_.empty() && running_ < spec_.batching.max_num_seqs) {
    const uint32_t s = waiting_.front();
    if (seqs_[s].computed != seqs_[s].prefill_target || !admit_prefilled(s)) break;
  }
}

int64_t LlmReplica::admit_prompt(uint32_t s, int64_t budget, int64_t reserve_blocks) {
  Seq& q = seqs_[s];
  const CacheHits hits = cache_hits(q);
  const int64_t hit = hits.shared + hits.own;
  const int64_t hit_tokens = hit * block_;
  const int64_t chunk = std::min(q.prefill_target - hit_tokens, budget);
  const int64_t need = blocks_for(hit_tokens + chunk) - hit;
  // Hit blocks in the free queue are free blocks until taken: they count against the free ones.
  if (chunk <= 0 || need + hits.free_shared + hits.own + reserve_blocks > free_blocks()) return 0;
  if ((q.group = prefix_group(q.request)) != kNone) {
    PrefixGroup& g = groups_[q.group];
    if (g.refs++ == 0) {
      pool_.reuse(g.cached, hits.shared);
      g.cached = KvBlockPool::kNone;
      g.blocks = hits.shared;
    }
  }
  q.shared = hits.shared;
  pool_.reuse(q.cached, hits.own);
  q.cached = KvBlockPool::kNone;
  pool_.allocate(need);
  q.blocks = hits.own + need;
  q.computed = hit_tokens;
  share_prefix(q, hit_tokens + chunk);
  stats_.cached_tokens += static_cast<uint64_t>(hit_tokens);
  waiting_.pop_front();
  link_back(s);
  q.phase = Phase::prefilling;
  prefilling_.push_back(s);
  if (q.request.start_s < 0) q.request.start_s = sim_.now();
  chunks_.push_back({s, chunk});
  return chunk;
}

bool LlmReplica::admit_prefilled(uint32_t s) {
  Seq& q = seqs_[s];
  const int64_t held = blocks_for(q.prefill_target);
  // Its first decode iteration needs one more block when the prompt fills its last block.
  const int64_t first_growth = q.prefill_target % block_ == 0 ? 1 : 0;
  if (held + first_growth > free_blocks()) return false;
  waiting_.pop_front();
  link_back(s);
  pool_.allocate(held);
  if (q.request.start_s < 0) q.request.start_s = sim_.now();
  start_decoding(s);
  return true;
}

// ---- schedulers ----

void LlmReplica::schedule_chunked() {
  const int max_seqs = spec_.batching.max_num_seqs;
  admit_arrived_kv();
  const uint64_t preemptions_before = stats_.preemptions;
  if (n_decode_ > 0) grow_decoders();
  int64_t budget = spec_.batching.max_num_batched_tokens - n_decode_;

  // Unfinished prompts, in admission order.
  for (std::size_t i = 0; i < prefilling_.size() && budget > 0; ++i) {
    const uint32_t s = prefilling_[i];
    Seq& q = seqs_[s];
    const int64_t chunk = std::min(q.prefill_target - q.computed, budget);
    const int64_t need = blocks_for(q.computed + chunk) - q.shared - q.blocks;
    while (need > free_blocks() && prefilling_.back() != s) preempt(prefilling_.back());
    if (need > free_blocks()) {
      preempt(s);
      break;
    }
    pool_.allocate(need);
    q.blocks += need;
    share_prefix(q, q.computed + chunk);
    chunks_.push_back({s, chunk});
    budget -= chunk;
  }
  if (stats_.preemptions != preemptions_before) return;  // vLLM admits nothing after preempting

  // Waiting requests, FCFS, while budget, sequence slots and KV blocks last.
  while (budget > 0 && !waiting_.empty() && running_ < max_seqs) {
    const uint32_t s = waiting_.front();
    Seq& q = seqs_[s];
    if (q.computed == q.prefill_target) break;  // arrived KV: next iteration, with the decoders
    const int64_t chunk = admit_prompt(s, budget, 0);
    if (chunk == 0) break;
    budget -= chunk;
  }
}

void LlmReplica::schedule_prefill_first() {
  admit_arrived_kv();
  // JetStream prefills one prompt at a time and keeps no watermark.
  const bool one_prompt = spec_.batching.scheduler == SchedulerMode::jetstream;
  const int64_t watermark = one_prompt ? 0 : watermark_blocks();
  int64_t budget = spec_.batching.max_num_batched_tokens;
  while (!waiting_.empty() && running_ < spec_.batching.max_num_seqs && !(one_prompt && !chunks_.empty())) {
    const uint32_t s = waiting_.front();
    const Seq& q = seqs_[s];
    if (q.computed == q.prefill_target) break;
    // Whole prompts only (less their cached blocks), the watermark kept free.
    const CacheHits hits = cache_hits(q);
    const int64_t remaining = q.prefill_target - (hits.shared + hits.own) * block_;
    // JetStream admits prompts up to its longest prefill, but a preempted sequence recomputes
    // its prompt and the tokens it produced, which may be longer: it is prefilled alone, whole
    // (JetStream itself never preempts; waiting for a budget it can never fit would stop the
    // replica for good). prefill_first admits prompt + output within the budget.
    const bool long_recompute = one_prompt && remaining > budget && q.prefill_target > q.request.prompt_tokens;
    if (remaining > budget && !long_recompute) break;
    const int64_t tokens = admit_prompt(s, long_recompute ? remaining : budget, watermark);
    if (tokens == 0) break;
    budget -= tokens;
  }
  // No prompt fits: a decode-only iteration of every running sequence.
  if (chunks_.empty() && n_decode_ > 0) grow_decoders();
}

// ---- iterations ----

int64_t LlmReplica::timed_prefill_tokens(int64_t tokens) const {
  if (static_batch()) return batch_prompt_;  // every prompt padded to the batch's longest
  if (spec_.batching.scheduler != SchedulerMode::jetstream) return tokens;
  // JetStream's DEFAULT_PREFILL_BUCKETS (jetstream/engine/token_utils.py): 16, 32, ..., capped at
  // the longest prefill.
  int64_t bucket = 16;
  while (bucket < tokens) bucket *= 2;
  return std::max(tokens, std::min(bucket, spec_.batching.max_num_batched_tokens));
}

void LlmReplica::start_iteration() {
  if (static_batch() && running_ == 0 && !forming_) {
    defer_static_batch();
    return;
  }
  chunks_.clear();
  decode_in_iteration_ = false;
  preemptions_at_schedule_ = stats_.preemptions;
  if (spec_.batching.scheduler == SchedulerMode::chunked_prefill) schedule_chunked();
  else if (static_batch()) schedule_static_batch();
  else schedule_prefill_first();  // prefill_first and jetstream
  update_load();
  if (!decode_in_iteration_ && chunks_.empty()) {
    maybe_drained();
    return;  // idle until a request arrives
  }
  IterationWork work;
  if (decode_in_iteration_ && static_batch()) {
    work.decode_sequences = batch_rows_;  // a finished request keeps its row
    work.decode_context_tokens = static_decode_context_tokens(decode_clock_);
  } else if (decode_in_iteration_ && dense()) {
    // The step's shapes are the dense array's: every slot computed, every slot read whole.
    work.decode_sequences = spec_.batching.max_num_seqs;
    work.decode_context_tokens = static_cast<double>(work.decode_sequences) * static_cast<double>(block_);
  } else if (decode_in_iteration_) {
    work.decode_sequences = n_decode_;
    work.decode_context_tokens = decode_kv_sum_;
  }
  for (const Chunk& c : chunks_) {
    const auto start = static_cast<double>(seqs_[c.seq].computed);
    const int64_t timed = timed_prefill_tokens(c.tokens);
    const auto n = static_cast<double>(timed);
    work.prefill_tokens += timed;
    work.prefill_attended += n * start + n * (n + 1) / 2;
    work.prefill_scores += n * (start + n);
    work.prefill_context_tokens += start;
    if (seqs_[c.seq].computed + c.tokens >= seqs_[c.seq].prefill_target) ++work.prompts_completed;
  }
  for (const Chunk& c : chunks_) stats_.prefill_tokens += static_cast<uint64_t>(c.tokens);
  if (spec_.batching.step_padding == StepPadding::power_of_two)
    pad_to_compiled_shapes(work, work.decode_sequences + static_cast<int64_t>(chunks_.size()), spec_.batching.max_num_seqs);
  busy_ = true;
  iteration_start_s_ = sim_.now();
  run_end_s_.clear();
  const IterationCost::TokenTerms terms = chunks_.empty() ? decode_terms(work) : cost_.token_terms(work);
  run_end_s_.push_back(sim_.now() + cost_.seconds(work, terms));
  if (spec_.batching.coalesce_decode_iterations && decode_in_iteration_ && chunks_.empty() &&
      stats_.preemptions == preemptions_at_schedule_) {
    plan_decode_run(work, terms);
  }
  iteration_event_ = sim_.schedule_at(run_end_s_.back(), *this, 0);
}

void LlmReplica::finish_request(uint32_t s) {
  Seq& q = seqs_[s];
  Request done = q.request;
  // Under a slot lag its last token came that many decode iterations before the slot's release
  // (decode_clock_ is finish_clock + 1 here: a decode run ends at its first finish).
  if (const int64_t lag = slot_lag_steps(); lag > 0 && q.phase == Phase::decoding)
    done.last_token_s = decode_end_s_[(q.finish_clock + 1 - static_cast<uint64_t>(lag)) % decode_end_s_.size()];
  // Its blocks stay cached in vLLM too, but nothing asks for a finished request's own tokens.
  pool_.free_uncached(q.phase == Phase::decoding ? blocks_for(stop_decoding(s)) - q.shared : q.blocks);
  leave_group(q);
  unlink(s);
  release_seq(s);
  update_load();
  complete(done);
  if (can_start_now()) slot_freed();
}

void LlmReplica::finish_iteration() {
  stats_.busy_s += sim_.now() - iteration_start_s_;
  const auto iterations = static_cast<uint64_t>(run_end_s_.size());
  stats_.iterations += iterations;
  if (decode_in_iteration_) {
    // The growth of a run's later iterations (the first's was taken when it started), taken
    // at once: the pool hands out blocks in one order, so n then m blocks are n + m blocks.
    pool_.allocate(run_growth(iterations - 1));
    decode_kv_sum_ += static_cast<double>(n_decode_) * static_cast<double>(iterations - 1);
    if (slot_lag_steps() > 0) {
      const uint64_t ring = decode_end_s_.size();
      for (uint64_t i = iterations - std::min(iterations, ring); i < iterations; ++i)
        decode_end_s_[(decode_clock_ + i + 1) % ring] = run_end_s_[i];
    }
    decode_clock_ += iterations;
    stats_.tokens_out += static_cast<uint64_t>(n_decode_) * iterations;
    while (!finishes_.empty() && finishes_.top().clock < decode_clock_) {
      const Finish f = finishes_.top();
      finishes_.pop();
      if (seqs_[f.seq].generation == f.generation) finish_request(f.seq);
    }
  }
  // Prompts that completed form a prefix of the chunks (only the last scheduled chunk can be
  // partial: nothing is scheduled after the budget runs out).
  for (const Chunk& c : chunks_) {
    Seq& q = seqs_[c.seq];
    q.computed += c.tokens;
    if (q.computed < q.prefill_target) break;
    prefilling_.pop_front();
    ++q.generated;
    ++stats_.tokens_out;
    if (q.request.first_token_s < 0) {
      q.request.first_token_s = sim_.now();
      first_token(q.request);
    }
    if (role_ == LlmRole::prefill || q.generated >= q.request.output_tokens) {
      finish_request(c.seq);
    } else {
      start_decoding(c.seq);
    }
  }
  chunks_.clear();
}

void LlmReplica::on_event(uint64_t tag) {
  if (tag == kFormBatch) {
    form_pending_ = false;
    forming_ = true;
    start_iteration();
    forming_ = false;
    return;
  }
  // The sequence finishing now is usually cold in cache: start loading it early.
  if (!finishes_.empty()) __builtin_prefetch(&seqs_[finishes_.top().seq]);
  finish_iteration();
  busy_ = false;
  start_iteration();
}

void LlmReplica::submit(const Request& request) {
  count_arrival();
  waiting_.push_back(new_seq(request));
  update_load();
  if (!busy_) start_iteration();
  else if (run_end_s_.size() > 1 && !static_batch()) cut_decode_run();  // a static batch takes no one in
}

void LlmReplica::take_queued(std::vector<Request>& out) {
  for (const uint32_t s : waiting_) {
    out.push_back(seqs_[s].request);
    release_seq(s);
  }
  waiting_.clear();
  update_load();
  maybe_drained();
}

void LlmReplica::abort(std::vector<Request>& out) {
  if (busy_) {
    sim_.cancel(iteration_event_);
    busy_ = false;
  }
  if (form_pending_) {
    sim_.cancel(form_event_);
    form_pending_ = false;
  }
  set_closed(false);  // no batch runs any more
  uncount_lag_tokens();
  for (uint32_t s = run_head_; s != kNone; s = seqs_[s].next) out.push_back(seqs_[s].request);
  for (const uint32_t s : waiting_) out.push_back(seqs_[s].request);
  for (uint32_t s = 0; s < seqs_.size(); ++s) {
    seqs_[s].group = kNone;  // every group goes below
    if (seqs_[s].phase != Phase::free) release_seq(s);
  }
  groups_.clear();
  group_of_prefix_.clear();
  waiting_.clear();
  prefilling_.clear();
  chunks_.clear();
  run_head_ = run_tail_ = kNone;
  running_ = 0;
  n_decode_ = 0;
  decode_kv_sum_ = 0;
  pool_.reset();
  std::fill(phase_count_.begin(), phase_count_.end(), 0);
  finishes_ = {};
  update_load();
}

}  // namespace cs::serving
