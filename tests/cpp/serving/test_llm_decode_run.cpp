// Runs of decode-only iterations (BatchingSpec::coalesce_decode_iterations) against one event per
// iteration, under every scheduler, KV layout and timing rule a replica takes: a run's times come
// from IterationCost::DecodeStep and its KV blocks from the decoders' phases (llm_decode_run.cpp),
// one iteration at a time from the general rule; both must give the same completions to the bit.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "llm_replica_test_support.hpp"

using namespace cs::serving;
using namespace cs::serving::test;
using cs::engine::Simulator;

namespace {

// 300 requests on one replica of `spec` (a small KV cache: waits, runs cut by arrivals and
// preemptions); a third share a 48-token prefix. Returns the completions and the stats.
std::pair<std::vector<Done>, LlmReplicaStats> serve(LlmReplicaSpec spec, bool coalesce) {
  spec.batching.coalesce_decode_iterations = coalesce;
  Simulator sim(7);
  Collector sink(sim);
  LlmReplica replica(sim, sink, 0, spec);
  cs::engine::RandomStream& rng = sim.random("load");
  double t = 0;
  for (uint64_t id = 0; id < 300; ++id) {
    t += rng.exponential(0.03);
    Request r = make_request(id, t, 49 + static_cast<int>(rng.uniform_int(uint64_t{900})),
                             1 + static_cast<int>(rng.uniform_int(uint64_t{300})));
    if (id % 3 == 0) {
      r.prefix_id = 1;
      r.prefix_tokens = 48;
    }
    sim.schedule_at(t, [&replica, r] { replica.submit(r); });
  }
  sim.run();
  return {sink.done, replica.stats()};
}

}  // namespace

TEST_CASE("Coalesced decode runs equal one event per iteration under every scheduler, layout and timing",
          "[serving][llm]") {
  std::vector<std::pair<std::string, LlmReplicaSpec>> cases;
  LlmReplicaSpec base;
  base.timing.kv_cache_bytes = 6000 * base.timing.held_model().kv_bytes_per_token();
  cases.emplace_back("chunked prefill, prefix caching", base);
  LlmReplicaSpec one = base;
  one.batching.block_size = 1;
  cases.emplace_back("blocks of one token", one);
  LlmReplicaSpec odd = base;
  odd.batching.block_size = 7;
  odd.batching.prefix_caching = false;
  odd.batching.max_num_seqs = 24;
  cases.emplace_back("blocks of 7 tokens, 24 sequences", odd);
  LlmReplicaSpec first = base;
  first.batching.scheduler = SchedulerMode::prefill_first;
  cases.emplace_back("prefill first", first);
  LlmReplicaSpec batch = base;
  batch.batching.scheduler = SchedulerMode::static_batch;
  batch.batching.prefix_caching = false;
  batch.batching.max_num_seqs = 16;
  cases.emplace_back("static batches", batch);
  LlmReplicaSpec slots = base;
  slots.batching.scheduler = SchedulerMode::jetstream;
  slots.batching.prefix_caching = false;
  slots.batching.max_num_seqs = 8;
  slots.timing.kv_layout = KvLayout::dense_slots;
  slots.timing.dense_slot_tokens = 1280;
  slots.timing.kv_cache_bytes = 8 * 1280 * base.timing.held_model().kv_bytes_per_token();
  cases.emplace_back("JetStream's dense slots", slots);
  LlmReplicaSpec tp = base;
  tp.timing.gpus = 2;
  tp.timing.tp_allreduce.pieces = {{7e-6, 1.1e-11}, {9e-6, 2e-11}, {2.3e-5, 4e-12}};
  tp.timing.tp_allgather.pieces = {{9e-6, 2e-11}};
  tp.timing.flash_attention = false;
  tp.timing.kv_cache_bytes = 6000 * tp.timing.held_model().kv_bytes_per_token();
  tp.batching.step_padding = StepPadding::power_of_two;
  cases.emplace_back("TP 2, unfused attention, padded steps", tp);
  LlmReplicaSpec measured = base;
  measured.timing.measured = {.enabled = true, .base_s = 3e-3, .per_prefill_token_s = 1e-5,
                              .per_decode_sequence_s = 7e-5, .per_context_token_s = 3.3e-8};
  cases.emplace_back("measured timing", measured);

  for (const auto& [name, spec] : cases) {
    INFO(name);
    const auto [coalesced, coalesced_stats] = serve(spec, true);
    const auto [stepped, stepped_stats] = serve(spec, false);
    REQUIRE(stepped.size() == 300);
    REQUIRE(coalesced.size() == stepped.size());
    CHECK(coalesced_stats.iterations == stepped_stats.iterations);
    CHECK(coalesced_stats.preemptions == stepped_stats.preemptions);
    CHECK(coalesced_stats.tokens_out == stepped_stats.tokens_out);
    CHECK(coalesced_stats.busy_s == Approx(stepped_stats.busy_s).epsilon(1e-12));
    // The paged layouts outgrow the cache (runs cut where their KV would not fit); a static
    // batch reserves its growth and a dense slot holds its sequence whole.
    const bool reserved = spec.batching.scheduler == SchedulerMode::static_batch ||
                          spec.timing.kv_layout == KvLayout::dense_slots;
    CHECK((stepped_stats.preemptions > 0) != reserved);
    for (std::size_t i = 0; i < stepped.size(); ++i) {
      INFO("completion " << i);
      REQUIRE(coalesced[i].request.id == stepped[i].request.id);
      CHECK(coalesced[i].time_s == stepped[i].time_s);
      CHECK(coalesced[i].request.first_token_s == stepped[i].request.first_token_s);
    }
  }
}
