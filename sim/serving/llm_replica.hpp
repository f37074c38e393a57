#pragma once
// An LLM server with continuous batching and a paged KV cache, as vLLM schedules it.
//
// Every iteration the scheduler picks work under a token budget (max_num_batched_tokens) and
// a sequence cap (max_num_seqs), runs it for iteration_time_s() (llm_timing.hpp), and at the
// end every decoding sequence has one more token. The schedulers (`scheduler`):
//
//   chunked_prefill  vLLM v1 (vllm/v1/core/sched/scheduler.py): running sequences first, each
//                    decoding sequence takes one token of the budget; unfinished prompts go on
//                    in admission order, each taking min(remaining prompt, budget left); then
//                    waiting requests are admitted FCFS while budget and sequence slots remain,
//                    their prompt cut into a chunk that fits. Decodes and prefill chunks share
//                    an iteration. Requires max_num_batched_tokens >= max_num_seqs (as vLLM).
//   prefill_first    vLLM v0 without chunked prefill: when waiting requests fit (whole prompts
//                    within the budget, the KV blocks of their prompts free beyond a 1%
//                    watermark), the iteration is a prefill-only batch of them; otherwise it
//                    is a decode-only batch of every running sequence. A request needs
//                    prompt + output <= max_num_batched_tokens (vLLM v0 requires the budget to
//                    cover max_model_len).
//   jetstream        JetStream's orchestrator with prefill and generate on the same chips
//                    (interleaved mode, jetstream/core/orchestrator.py): while a slot is free
//                    and a request waits, one prompt alone is prefilled (an iteration of its
//                    own, padded to the next of JetStream's power-of-two prefill buckets from
//                    16 tokens, at most max_num_batched_tokens: MaxText's
//                    max_prefill_predict_length) and inserted into the slot; otherwise one
//                    decode step of every slot. A request needs prompt <= max_num_batched_tokens
//                    (a preempted sequence's recompute, prompt + output so far, is prefilled
//                    alone however long: JetStream itself never preempts).
//   static_batch     static batches, as transformers-neuronx's sample loop (and HuggingFace
//                    generate, TensorRT-LLM without inflight batching) runs them: when no batch
//                    runs, the replica takes up to max_num_seqs waiting requests, those arriving at
//                    that very instant included (the batch forms in an event of priority resolve,
//                    after the instant's arrivals), whose KV cache fits to their last token;
//                    encodes their prompts in one context pass, each padded to the batch's longest
//                    prompt (rows x longest tokens); then decodes the whole batch step by step until
//                    its last request is done. A finished request keeps its row: every decode step
//                    is timed at the batch's rows, each reading the KV cache of the batch's
//                    position (the longest prompt + the steps so far); over dense slots, up to
//                    transformers-neuronx's token bucket, the first of 128, 256, ... (powers of
//                    two, the last dense_slot_tokens: its n_positions) that holds the position
//                    (bucket.py token_sizes and decoder.py find_bucket_id at 0623de2: the decode
//                    graph of a bucket reads its cache to the bucket's length; a batch's longest
//                    prompt + longest output fit n_positions). Requests arriving
//                    while a batch runs wait for the whole batch. Nothing is preempted or cached;
//                    max_num_batched_tokens is not read; a unified replica only.
//
// Under jetstream with dense slots a finished request keeps its slot kJetStreamSlotLagSteps more
// decode steps (JetStream's detokenize thread frees it late; llm_replica.cpp says why) and is
// reported done when the slot is freed, with its last token's time (Request::last_token_s): the
// user has the answer then, as JetStream returns each step's tokens when they reach the host.
//
// With kv_layout dense_slots (llm_timing.hpp) each sequence holds one slot of
// dense_slot_tokens (a KV block of that many tokens, max_num_seqs of them, whatever the
// memory rule leaves beyond: the dense array must fit in it), a request needs prompt + output
// <= dense_slot_tokens (a prefill replica, which holds the prompt alone: prompt <= it), nothing is preempted or cached, and every decode iteration is timed as
// max_num_seqs sequences reading max_num_seqs x dense_slot_tokens KV tokens, however many
// slots are busy and however long their sequences.
//
// KV cache: paged in blocks of block_size tokens (kv_block_pool.hpp); a sequence holds
// ceil(tokens / block_size) blocks and takes a new one when its last is full. Prompts are
// admitted only when their (chunk's) blocks are free, so a full cache makes requests wait.
// When decoding sequences need blocks that are not free, the most recently admitted running
// sequence is preempted (vLLM's FCFS victim) and goes back to the head of the waiting queue
// (vLLM's recompute mode: it is computed again as a prefill of prompt + the tokens it had
// produced). With `prefix_caching` (vLLM v1's default) its full blocks stay cached when it
// is preempted, and when it is scheduled again it takes back those not evicted meanwhile and
// recomputes only the rest (at least its last token, as vLLM); without, it recomputes all.
// Requests that share a prompt prefix (Request::prefix_id) share its full blocks: computed by
// the first, held once while any running sequence uses them, cached when none does, so a
// later request with that prefix computes only what follows it (vLLM's block hashes chain
// from the first block: a sequence's own blocks are hits only behind its prefix's).
// A prefill chunk that finds no free blocks preempts the most recently admitted unfinished
// prompt (never a decoding sequence: this keeps decodes moving, where vLLM would take
// whichever sequence is last).
//
// Token accounting: the iteration that computes a prompt's last token produces the first
// output token (TTFT = end of that iteration - arrival); each later iteration produces one
// more; a request with o output tokens is done o - 1 decode iterations after its prefill.
//
// Roles (disaggregated serving, as Splitwise and DistServe): `prefill` replicas complete a
// request when its first token is out (the pool then moves its KV cache); `decode` replicas
// take requests whose KV cache has arrived (Request::prefilled) and admit them straight into
// decoding when their prompt's blocks are free.
//
// Cost per iteration: O(1) for the decoding set (sequences advancing together are counted by
// KV-block phase, finishes kept in a heap) plus O(log n) per sequence that starts, finishes
// or is preempted; never a loop over every running sequence. Runs of decode-only iterations
// take one engine event (BatchingSpec::coalesce_decode_iterations).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <deque>
#include <optional>
#include <queue>
#include <unordered_map>
#include <vector>

#include "sim/serving/kv_block_pool.hpp"
#include "sim/serving/llm_replica_spec.hpp"
#include "sim/serving/llm_timing.hpp"
#include "sim/serving/replica.hpp"

namespace cs::serving {

// JetStream's slot lag: decode steps between a request's last token and its slot's reuse (above).
inline constexpr int64_t kJetStreamSlotLagSteps = 9;

struct LlmReplicaStats {
  uint64_t iterations = 0;
  uint64_t preemptions = 0;
  uint64_t tokens_out = 0;      // output tokens produced
  uint64_t prefill_tokens = 0;  // prompt (and recomputed) tokens computed
  uint64_t cached_tokens = 0;   // prompt tokens taken from the prefix cache instead
  double busy_s = 0;            // time with an iteration running

  LlmReplicaStats& operator+=(const LlmReplicaStats& o) {
    iterations += o.iterations;
    preemptions += o.preemptions;
    tokens_out += o.tokens_out;
    prefill_tokens += o.prefill_tokens;
    cached_tokens += o.cached_tokens;
    busy_s += o.busy_s;
    return *this;
  }
};

class LlmReplica final : public Replica {
 public:
  // `totals`, when given, receives this replica's stats when it is destroyed (a fleet's sum
  // over replicas that come and go).
  LlmReplica(engine::Simulator& sim, ReplicaListener& listener, uint32_t id,
             const LlmReplicaSpec& spec, LlmRole role = LlmRole::unified,
             LlmReplicaStats* totals = nullptr);
  ~LlmReplica() override;

  // False when the request could never run here (its tokens exceed the whole KV cache, or
  // prefill_first's budget); the pool drops such requests instead of submitting them.
  bool admissible(const Request& request) const override;
  void submit(const Request& request) override;
  void take_queued(std::vector<Request>& out) override;
  void abort(std::vector<Request>& out) override;
  void on_event(uint64_t tag) override;

  int64_t kv_blocks_total() const { return pool_.total(); }
  int64_t kv_blocks_used() const { return pool_.used(); }
  int decoding() const { return n_decode_; }
  const LlmReplicaStats& stats() const { return stats_; }
  const LlmReplicaSpec& spec() const { return spec_; }

 private:
  enum class Phase : uint8_t { free, waiting, prefilling, decoding };
  static constexpr uint32_t kNone = ~uint32_t{0};
  struct Seq {
    Request request;
    int64_t prefill_target = 0;  // tokens to compute before the next token comes out
    int64_t computed = 0;        // of them, computed so far
    int64_t blocks = 0;          // KV blocks held while prefilling
    KvBlockPool::Handle cached = KvBlockPool::kNone;  // its own blocks cached while preempted
    uint32_t group = kNone;      // the shared prefix it holds blocks of (running)
    int64_t shared = 0;          // of the prefix's blocks, those it holds (not in `blocks`)
    int64_t decode_base = 0;     // KV tokens when decoding started
    uint64_t decode_entry = 0;   // decode clock of its first decode iteration
    uint64_t finish_clock = 0;   // decode clock of its last decode iteration
    int32_t generated = 0;       // output tokens produced
    uint32_t generation = 0;     // bumps when it leaves decoding (stale heap entries)
    uint32_t prev = kNone, next = kNone;  // running list, admission order
    Phase phase = Phase::free;
  };
  struct Finish {
    uint64_t clock;
    uint32_t seq;
    uint32_t generation;
    bool operator>(const Finish& o) const {
      return clock != o.clock ? clock > o.clock : seq > o.seq;
    }
  };
  struct Chunk {
    uint32_t seq;
    int64_t tokens;
  };

  bool dense() const { return spec_.timing.kv_layout == KvLayout::dense_slots; }
  // Decode steps a finished sequence keeps its slot (JetStream's over dense slots, else 0), and
  // of a decoding sequence's steps so far those past its last output token.
  int64_t slot_lag_steps() const;
  int64_t lag_steps_done(const Seq& q) const;
  int64_t blocks_for(int64_t tokens) const { return (tokens + block_ - 1) / block_; }
  // Prompt tokens an iteration computes for a chunk of `tokens` (jetstream pads a prompt to its
  // prefill bucket).
  int64_t timed_prefill_tokens(int64_t tokens) const;
  int64_t free_blocks() const { return pool_.free(); }
  int64_t watermark_blocks() const {
    return static_cast<int64_t>(std::ceil(spec_.batching.admission_watermark * static_cast<double>(pool_.total())));
  }
  // A waiting sequence's blocks still in the prefix cache: of its shared prefix (`free_shared`
  // of them in the free queue, the rest held by running sequences) and of its own; never its
  // last token's (vLLM recomputes it for the logits).
  struct CacheHits {
    int64_t shared = 0, free_shared = 0, own = 0;
  };
  CacheHits cache_hits(const Seq& q) const;
  uint32_t prefix_group(const Request& r);  // kNone when it has none (or caching is off)
  void share_prefix(Seq& q, int64_t computed_tokens);  // its computed prefix blocks become the group's
  void leave_group(Seq& q);
  uint32_t new_seq(const Request& request);
  void release_seq(uint32_t s);
  void uncount_lag_tokens();
  void link_back(uint32_t s);
  void unlink(uint32_t s);
  int64_t decode_kv_tokens(const Seq& q) const { return q.decode_base + static_cast<int64_t>(decode_clock_ - q.decode_entry); }
  void start_decoding(uint32_t s);
  int64_t stop_decoding(uint32_t s);  // leaves the decode set; returns its KV tokens (blocks still held)
  void preempt(uint32_t s);
  void preempt_last_running();
  bool admit_prefilled(uint32_t s);
  void admit_arrived_kv();
  // Admits the head of the queue with a first chunk of at most `budget` tokens after its
  // prefix-cache hits, if its blocks fit with `reserve_blocks` to spare; the chunk, or 0.
  int64_t admit_prompt(uint32_t s, int64_t budget, int64_t reserve_blocks);
  void schedule_chunked();
  void schedule_prefill_first();
  // static_batch (llm_static_batch.cpp): the scheduler, the batch's KV tokens read by the decode
  // step at `clock`, and the deferral of a new batch to the end of the instant's arrivals.
  bool static_batch() const { return spec_.batching.scheduler == SchedulerMode::static_batch; }
  void schedule_static_batch();
  double static_decode_context_tokens(uint64_t clock) const;
  void defer_static_batch();
  void grow_decoders();
  void start_iteration();
  IterationCost::TokenTerms decode_terms(const IterationWork& work);  // llm_decode_run.cpp
  void plan_decode_run(const IterationWork& work, const IterationCost::TokenTerms& terms);
  int64_t run_growth(uint64_t later_iterations) const;  // KV blocks of a run's later iterations
  void cut_decode_run();
  void finish_iteration();
  void finish_request(uint32_t s);
  void update_load();

  LlmReplicaSpec spec_;
  LlmRole role_;
  LlmReplicaStats* totals_;
  IterationCost cost_;
  std::vector<std::optional<IterationCost::TokenTerms>> decode_terms_;  // by decode sequences
  int64_t block_;
  KvBlockPool pool_;
  // A shared prefix's full blocks: held (counted once) while refs > 0, cached when not.
  struct PrefixGroup {
    int64_t blocks = 0;  // held, while refs > 0
    int32_t refs = 0;    // running sequences holding them
    KvBlockPool::Handle cached = KvBlockPool::kNone;  // while refs == 0
  };
  std::vector<PrefixGroup> groups_;
  std::unordered_map<uint32_t, uint32_t> group_of_prefix_;

  std::vector<Seq> seqs_;
  std::vector<uint32_t> free_seqs_;
  std::deque<uint32_t> waiting_;
  std::deque<uint32_t> prefilling_;  // running, prompt not finished; admission order
  uint32_t run_head_ = kNone, run_tail_ = kNone;
  int running_ = 0;

  // Decoding set.
  int n_decode_ = 0;
  uint64_t decode_clock_ = 0;         // index of the next decode iteration
  // Under a slot lag: the end times of the last kJetStreamSlotLagSteps + 1 decode iterations,
  // the one that brought decode_clock_ to c at c mod the size (a finished sequence's last token
  // is that many iterations back at most: a decode run ends at its first finish).
  std::array<double, kJetStreamSlotLagSteps + 1> decode_end_s_{};
  double decode_kv_sum_ = 0;          // KV tokens held by decoding sequences
  std::vector<int32_t> phase_count_;  // decoders taking a new block at clock = phase mod block
  std::priority_queue<Finish, std::vector<Finish>, std::greater<>> finishes_;

  // The iteration in flight.
  bool busy_ = false;
  bool decode_in_iteration_ = false;
  std::vector<Chunk> chunks_;
  // The end of each iteration of the run in flight (>= 1). The KV blocks its later iterations
  // take follow from the decoders' phases (run_growth()).
  std::vector<double> run_end_s_;
  double iteration_start_s_ = 0;
  uint64_t preemptions_at_schedule_ = 0;
  engine::EventId iteration_event_;
  // static_batch: the batch formation pending at this instant (event tag kFormBatch), and the
  // batch that runs: its rows, its padded prompt, the decode clock of its first decode step.
  static constexpr uint64_t kFormBatch = 1;
  bool form_pending_ = false;
  bool forming_ = false;
  engine::EventId form_event_;
  int64_t batch_rows_ = 0;
  int64_t batch_prompt_ = 0;
  uint64_t batch_clock_ = 0;
  LlmReplicaStats stats_;
};

}  // namespace cs::serving
