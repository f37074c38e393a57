// LLM replica under JetStream (MaxText on TPU): dense KV slots (every decode step reads every
// slot's whole cache; the array and each request must fit), one prompt prefilled at a time and
// padded to its bucket, a finished request's slot freed steps late, and preemption past the
// longest prefill.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "llm_replica_test_support.hpp"

using namespace cs::serving;
using namespace cs::serving::test;
using cs::engine::Simulator;

TEST_CASE("JetStream recomputes a preempted sequence longer than its longest prefill", "[serving][llm]") {
  // The paged layout under JetStream's scheduler, prefills of at most 64 tokens: the newer
  // request's prefill runs alone (the older skips that decode), so the older needs its sixth
  // block a step later and the newer is preempted holding 64 + 33 tokens; it recomputes all 97
  // in one prefill of its own
  // (JetStream itself never preempts); refusing it, as a prompt that long is refused, would
  // leave it at the head of the queue and the replica serving nothing more, ever.
  std::vector<Done> done;
  const LlmReplicaStats stats = older_and_newer_on_12_blocks(100, false, done, 0, SchedulerMode::jetstream, 64);
  REQUIRE(done.size() == 2);
  CHECK(stats.preemptions == 1);
  CHECK(stats.tokens_out == 200);
  CHECK(stats.prefill_tokens == 64u + 64 + 97);
}

TEST_CASE("A dense-slot decode step reads every slot's whole cache, busy or not", "[serving][llm]") {
  // MaxText under JetStream: 64 slots of 2048 tokens; the step's time is the closed form
  //   max(2 P x slots / F, W / B) + max(4 L H d x slots x len / F, slots x len x kv / B) + overhead,
  // whatever the sequences' lengths and however many slots are busy (B: no paged-read share).
  LlmReplicaSpec spec;  // Llama-3-8B on one H100, roofline
  spec.timing.kv_layout = KvLayout::dense_slots;
  spec.timing.dense_slot_tokens = 2048;
  spec.batching.max_num_seqs = 64;
  spec.batching.prefix_caching = false;
  const LlmModelSpec& m = spec.timing.model;
  const GpuSpec& g = spec.timing.gpu;
  const double F = g.peak_flops * g.compute_efficiency, B = g.hbm_bandwidth_Bps * g.memory_efficiency;
  const double slots = 64, len = 2048;
  const double linear = std::max(2 * m.params * slots / F, m.weight_bytes() / B);
  const double attention = std::max(4.0 * m.layers * m.query_heads() * m.head_dim * slots * len / F,
                                    slots * len * m.kv_bytes_per_token() / B);
  const double step = linear + attention + spec.timing.iteration_overhead_s;
  CHECK(attention > m.weight_bytes() / B);  // 17 GB of cache outweighs the 16 GB of weights
  for (const int busy : {1, 3}) {
    Simulator sim;
    Collector sink(sim);
    LlmReplica replica(sim, sink, 0, spec);
    for (int i = 0; i < busy; ++i) replica.submit(make_request(static_cast<uint64_t>(i), 0, 100, 51));
    sim.run();
    REQUIRE(sink.done.size() == static_cast<std::size_t>(busy));
    // The last request: its prompt is prefilled with the others after the first's (which
    // decodes beside that prefill), then every iteration is a pure decode step.
    const Done& d = find(sink.done, static_cast<uint64_t>(busy - 1));
    INFO(busy << " busy slots");
    CHECK(d.time_s - d.request.first_token_s == Approx(50 * step).epsilon(1e-9));
  }
  // The paged layout reads the 100-150 tokens the sequence holds: far less.
  LlmReplicaSpec paged = spec;
  paged.timing.kv_layout = KvLayout::paged;
  IterationWork one;
  one.decode_sequences = 1;
  one.decode_context_tokens = 150;
  CHECK(iteration_time_s(paged.timing, one) < 0.6 * step);
}

TEST_CASE("Dense slots: the array must fit, a request must fit its slot", "[serving][llm]") {
  LlmReplicaSpec spec;
  spec.timing.kv_layout = KvLayout::dense_slots;
  spec.timing.dense_slot_tokens = 4096;
  spec.batching.prefix_caching = false;
  // Llama-3-8B's 128 KiB per token: 4096-token slots take 512 MiB each; an H100 leaves ~52 GB.
  const double kv = kv_cache_bytes(spec.timing);
  const int fitting = static_cast<int>(kv / (4096 * spec.timing.model.kv_bytes_per_token()));
  spec.batching.max_num_seqs = fitting;
  CHECK(dense_kv_bytes(spec) <= kv);
  CHECK_NOTHROW(validate_llm_replica(spec));
  spec.batching.max_num_seqs = fitting + 1;
  CHECK_THROWS_WITH(validate_llm_replica(spec), Catch::Contains("replica.max_num_seqs"));
  spec.batching.max_num_seqs = 4;
  spec.batching.prefix_caching = true;
  CHECK_THROWS_WITH(validate_llm_replica(spec), Catch::Contains("replica.prefix_caching"));
  spec.batching.prefix_caching = false;
  Simulator sim;
  Collector sink(sim);
  LlmReplica replica(sim, sink, 0, spec);
  CHECK(replica.kv_blocks_total() == 4);  // one block per slot
  CHECK(replica.admissible(make_request(1, 0, 96, 4000)));
  CHECK_FALSE(replica.admissible(make_request(2, 0, 97, 4000)));
  // A prefill replica's slot holds the prompt alone: the output is the decode replica's.
  LlmReplica prefill(sim, sink, 1, spec, LlmRole::prefill);
  CHECK(prefill.admissible(make_request(3, 0, 4096, 4000)));
  CHECK_FALSE(prefill.admissible(make_request(4, 0, 4097, 1)));
}

TEST_CASE("A dense slot of 2^30 tokens costs no memory per token of the slot", "[serving][llm]") {
  // A tiny model's 4 bytes of KV a token: one slot of 2^30 tokens (4.3 GB) fits an H100. No
  // decoder of a dense slot takes a new block, so the replica keeps no table per token of it
  // (which took 4 GB here and GBs per replica of a fleet).
  LlmReplicaSpec spec;
  LlmModelSpec& m = spec.timing.model;
  m.params = 1e6;
  m.layers = 1;
  m.hidden = 64;
  m.heads = 1;
  m.kv_heads = 1;
  m.head_dim = 1;
  spec.timing.kv_layout = KvLayout::dense_slots;
  spec.timing.dense_slot_tokens = int64_t{1} << 30;
  spec.batching.max_num_seqs = 1;
  spec.batching.prefix_caching = false;
  const Done done = run_alone(spec, make_request(1, 0, 100, 3));
  // Two decode steps after the first token, each reading the whole slot at B.
  const GpuSpec& g = spec.timing.gpu;
  const double slot_read_s = 4.0 * (int64_t{1} << 30) / (g.hbm_bandwidth_Bps * g.memory_efficiency);
  CHECK(done.time_s - done.request.first_token_s >= 2 * slot_read_s);
}

namespace {

// 10 ms an iteration + 0.1 ms a prompt token computed, under `mode` with a 1,024-token budget.
LlmReplicaSpec ten_ms_and_prompt_tokens(SchedulerMode mode) {
  LlmReplicaSpec spec = ten_ms_iterations();
  spec.timing.measured.per_prefill_token_s = 1e-4;
  spec.batching.scheduler = mode;
  spec.batching.max_num_batched_tokens = 1024;
  return spec;
}

// Requests 1..n of a 200-token prompt and 3 output tokens, all at t = 0.
void submit_200_token_prompts(LlmReplica& replica, uint64_t n) {
  for (uint64_t id = 1; id <= n; ++id) replica.submit(make_request(id, 0, 200, 3));
}

}  // namespace

TEST_CASE("JetStream prefills one prompt at a time, padded to its bucket", "[serving][llm]") {
  // Measured timing: 10 ms an iteration + 0.1 ms a prompt token computed. Three 200-token
  // prompts at t = 0: JetStream prefills them one by one, each padded to 256 tokens (35.6 ms),
  // then decodes the three (10 ms a step); prefill_first computes the first alone (it starts
  // the replica: 30 ms), then the other two 200-token prompts in one iteration (50 ms).
  for (const SchedulerMode mode : {SchedulerMode::jetstream, SchedulerMode::prefill_first}) {
    Simulator sim;
    Collector sink(sim);
    LlmReplica replica(sim, sink, 0, ten_ms_and_prompt_tokens(mode));
    submit_200_token_prompts(replica, 3);
    sim.run();
    REQUIRE(sink.done.size() == 3);
    INFO(name_of(kSchedulerModeNames, mode));
    for (uint64_t id = 1; id <= 3; ++id) {
      const double first = mode == SchedulerMode::jetstream ? 0.0356 * static_cast<double>(id) : id == 1 ? 0.030 : 0.080;
      CHECK(find(sink.done, id).request.first_token_s == Approx(first));
      CHECK(find(sink.done, id).time_s == Approx(mode == SchedulerMode::jetstream ? 0.1268 : 0.100));
    }
    CHECK(replica.stats().prefill_tokens == 600);  // the prompts' tokens, not the padding
  }
  // JetStream refuses a prompt longer than its longest prefill, whatever the output.
  LlmReplicaSpec spec = ten_ms_iterations();
  spec.batching.scheduler = SchedulerMode::jetstream;
  spec.batching.max_num_batched_tokens = 1024;
  Simulator sim;
  Collector sink(sim);
  LlmReplica replica(sim, sink, 0, spec);
  CHECK(replica.admissible(make_request(1, 0, 1024, 5000)));
  CHECK_FALSE(replica.admissible(make_request(2, 0, 1025, 1)));
}

TEST_CASE("JetStream over dense slots reuses a finished request's slot 9 decode steps late", "[serving][llm]") {
  // One slot, 10 ms an iteration + 0.1 ms a prompt token, two 200-token prompts (padded to 256:
  // 35.6 ms) of 3 output tokens at t = 0. The first: its token at 35.6 ms, 2 decode steps, then
  // its slot 9 more steps before JetStream's detokenize thread frees it (kJetStreamSlotLagSteps):
  // done at 35.6 + 110 ms, its last token at 35.6 + 20 ms. The second is prefilled then. The
  // paged layout frees the slot at once.
  for (const KvLayout layout : {KvLayout::dense_slots, KvLayout::paged}) {
    LlmReplicaSpec spec = ten_ms_and_prompt_tokens(SchedulerMode::jetstream);
    spec.timing.kv_layout = layout;
    spec.batching.max_num_seqs = 1;
    spec.batching.prefix_caching = false;
    Simulator sim;
    Collector sink(sim);
    LlmReplica replica(sim, sink, 0, spec);
    submit_200_token_prompts(replica, 2);
    sim.run();
    REQUIRE(sink.done.size() == 2);
    INFO(name_of(kKvLayoutNames, layout));
    const double held_s = 0.010 * static_cast<double>(2 + (layout == KvLayout::dense_slots ? kJetStreamSlotLagSteps : 0));
    CHECK(find(sink.done, 1).request.first_token_s == Approx(0.0356));
    CHECK(find(sink.done, 1).time_s == Approx(0.0356 + held_s));
    // The user's answer is complete at the last token: reported with it when the slot lags.
    if (layout == KvLayout::dense_slots) {
      CHECK(find(sink.done, 1).request.last_token_s == Approx(0.0356 + 0.020));
      CHECK(find(sink.done, 2).request.last_token_s == Approx(0.0356 + held_s + 0.0356 + 0.020));
    } else {
      CHECK(find(sink.done, 1).request.last_token_s == -1);
    }
    CHECK(find(sink.done, 2).request.first_token_s == Approx(0.0356 + held_s + 0.0356));
    CHECK(find(sink.done, 2).time_s == Approx(2 * (0.0356 + held_s)));
    CHECK(replica.stats().tokens_out == 6);  // the lag's steps produce none
  }
}
