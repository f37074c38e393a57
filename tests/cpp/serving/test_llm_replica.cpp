// LLM replica: the roofline's two sides (batch-1 decode at the memory-bandwidth bound, a long
// prefill compute-bound), the KV cache (requests wait when it is full; decoding sequences
// that outgrow it preempt the newest, shared prompt prefixes), chunked prefill against
// prefill-first scheduling, disaggregated prefill and decode replicas, the listener's first
// tokens, and coalesced decode runs. The other test_llm_replica_*.cpp files hold tensor
// parallelism, JetStream's dense slots and vLLM for TPU's step padding.
#include <catch2/catch.hpp>

#include <tuple>
#include <utility>
#include <vector>

#include "llm_replica_test_support.hpp"

using namespace cs::serving;
using namespace cs::serving::test;
using cs::engine::Simulator;

TEST_CASE("Batch-1 decode runs at the memory-bandwidth bound", "[serving][llm]") {
  Simulator sim;
  Collector sink(sim);
  LlmReplicaSpec spec;  // Llama-3-8B on one H100, roofline
  spec.timing.iteration_overhead_s = 0;  // the roofline alone
  LlmReplica replica(sim, sink, 0, spec);
  const int prompt = 128, output = 1001;
  replica.submit(make_request(1, 0, prompt, output));
  sim.run();
  REQUIRE(sink.done.size() == 1);
  const Done& d = sink.done[0];
  // 1000 decode iterations, iteration i reading the weights and (prompt + i) tokens of KV, the
  // KV through the block table at paged_kv_efficiency of the weights' bandwidth.
  const LlmModelSpec& m = spec.timing.model;
  const double bandwidth = spec.timing.gpu.hbm_bandwidth_Bps * spec.timing.gpu.memory_efficiency;
  const double kv_bandwidth = bandwidth * spec.timing.gpu.paged_kv_efficiency;
  REQUIRE(spec.timing.gpu.paged_kv_efficiency == 0.9);  // the documented default
  double expected = 0;
  for (int i = 1; i < output; ++i)
    expected += m.weight_bytes() / bandwidth + m.kv_bytes_per_token() * (prompt + i) / kv_bandwidth;
  CHECK(d.time_s - d.request.first_token_s == Approx(expected).epsilon(1e-9));
  // Tokens per second at short context: HBM bandwidth x efficiency / weight bytes.
  const double tpot = (d.time_s - d.request.first_token_s) / (output - 1);
  CHECK(tpot == Approx(m.weight_bytes() / bandwidth + m.kv_bytes_per_token() * (prompt + output / 2.0) / kv_bandwidth)
                    .epsilon(1e-3));
  CHECK(1 / tpot == Approx(bandwidth / m.weight_bytes()).epsilon(0.02));
  // Dense KV reads (paged_kv_efficiency 1) save exactly the paged reads' extra time.
  IterationWork step;
  step.decode_sequences = 64;
  step.decode_context_tokens = 64 * 2048.0;
  LlmTimingSpec dense = spec.timing;
  dense.gpu.paged_kv_efficiency = 1;
  const double kv_dense_s = m.kv_bytes_per_token() * step.decode_context_tokens / bandwidth;
  CHECK(iteration_time_s(spec.timing, step) - iteration_time_s(dense, step) ==
        Approx(kv_dense_s / 0.9 - kv_dense_s).epsilon(1e-9));
  // The compute side is far below: a decode step is memory-bound.
  IterationWork one;
  one.decode_sequences = 1;
  one.decode_context_tokens = prompt + 1;
  const double flops_s = (2 * m.params + 4.0 * m.layers * m.hidden * (prompt + 1)) /
                         (spec.timing.gpu.peak_flops * spec.timing.gpu.compute_efficiency);
  CHECK(iteration_time_s(spec.timing, one) > 50 * flops_s);
}

TEST_CASE("A long prefill is compute-bound", "[serving][llm]") {
  LlmReplicaSpec spec;
  spec.timing.iteration_overhead_s = 0;  // the roofline alone
  Simulator sim;
  Collector sink(sim);
  LlmReplica replica(sim, sink, 0, spec);
  const int prompt = 4096;
  replica.submit(make_request(1, 0, prompt, 1));
  sim.run();
  REQUIRE(sink.done.size() == 1);
  const LlmModelSpec& m = spec.timing.model;
  const double flops = 2 * m.params * prompt + 4.0 * m.layers * m.hidden * (prompt * (prompt + 1.0) / 2);
  const double compute_s = flops / (spec.timing.gpu.peak_flops * spec.timing.gpu.compute_efficiency);
  const double memory_s = (m.weight_bytes() + m.kv_bytes_per_token() * prompt) /
                          (spec.timing.gpu.hbm_bandwidth_Bps * spec.timing.gpu.memory_efficiency);
  CHECK(compute_s > 10 * memory_s);
  CHECK(sink.done[0].request.first_token_s == Approx(compute_s).epsilon(1e-12));
  CHECK(sink.done[0].time_s == sink.done[0].request.first_token_s);  // one output token
}

TEST_CASE("A full KV cache makes requests wait", "[serving][llm]") {
  Simulator sim;
  Collector sink(sim);
  LlmReplicaSpec spec = ten_ms_iterations();
  spec.timing.kv_cache_bytes = 64 * 16 * spec.timing.model.kv_bytes_per_token();  // 64 blocks
  LlmReplica replica(sim, sink, 0, spec);
  REQUIRE(replica.kv_blocks_total() == 64);
  for (uint64_t id = 1; id <= 3; ++id) replica.submit(make_request(id, 0, 400, 10));  // 25 blocks each
  // The first starts at once; the others wait for the next iteration, where only the second
  // fits beside it.
  CHECK(replica.in_service() == 1);
  sim.run(0.015);
  CHECK(replica.in_service() == 2);
  CHECK(replica.queued() == 1);
  sim.run();
  REQUIRE(sink.done.size() == 3);
  const Done& first = find(sink.done, 1);
  const Done& third = find(sink.done, 3);
  CHECK(first.time_s == Approx(0.100));  // prefill + 9 decodes
  CHECK(third.request.start_s == Approx(first.time_s));  // admitted when the first left
  CHECK(replica.stats().preemptions == 0);
  CHECK(replica.kv_blocks_used() == 0);
}

TEST_CASE("Decoding sequences that outgrow the cache preempt the newest, which recomputes",
          "[serving][llm]") {
  // 64-token prompts (4 blocks each), 100 output tokens: together they need 2 x 11 blocks of
  // the 12. The newer request is preempted at decode clock 32 holding 95 KV tokens. With
  // prefix caching its 5 full blocks stay cached (its partial sixth is freed first); the older
  // one's growth at clocks 32, 48, 64, 80 and 96 takes the partial block, then 4 of the cached
  // ones (a run's last blocks first), so when the older one finishes at 1.0 s one block (16
  // tokens) is still cached: the newer one's re-prefill of 96 tokens (64 + 32 produced)
  // computes 80, or all 96 without prefix caching. Times are the same (10 ms iterations).
  for (const bool caching : {true, false}) {
    INFO("prefix caching " << caching);
    std::vector<Done> done;
    const LlmReplicaStats stats = older_and_newer_on_12_blocks(100, caching, done);
    REQUIRE(done.size() == 2);
    CHECK(stats.preemptions == 1);
    const Done& older = find(done, 1);
    const Done& newer = find(done, 2);
    CHECK(older.time_s == Approx(1.0));  // never preempted: 1 prefill + 99 decodes
    // The preempted request (admitted at the second iteration) keeps its first-token time and
    // still produces all 100 tokens: re-prefill at 1.00-1.01 s (the 33rd token), 67 decodes.
    CHECK(newer.request.first_token_s == Approx(0.020));
    CHECK(newer.time_s == Approx(1.68));
    CHECK(stats.tokens_out == 200);
    CHECK(stats.cached_tokens == (caching ? 16u : 0u));
    CHECK(stats.prefill_tokens == (caching ? 64u + 64 + 80 : 64u + 64 + 96));
  }
}

TEST_CASE("A preempted sequence scheduled again before eviction recomputes only its last token",
          "[serving][llm]") {
  // The older request (34 tokens) finishes in the iteration of the newer one's preemption and
  // frees 7 blocks: the newer one's 95 KV tokens (5 full blocks) come back from the cache. Up
  // to (96 - 1) / 16 = 5 blocks may be hits: 80 tokens are, 16 are computed again.
  std::vector<Done> done;
  const LlmReplicaStats stats = older_and_newer_on_12_blocks(34, true, done, 1e-4);
  REQUIRE(done.size() == 2);
  CHECK(stats.preemptions == 1);
  CHECK(stats.cached_tokens == 80);
  CHECK(stats.prefill_tokens == 64u + 64 + 16);
}

TEST_CASE("Requests sharing a prompt prefix compute its blocks once", "[serving][llm]") {
  // 100-token prompts starting with the same 70-token prefix: its 4 full blocks (64 tokens)
  // are computed by the first request and held once; the second, admitted an iteration later,
  // computes only its last 36 tokens, and a third arriving after both left finds the prefix
  // still cached. A different prefix id shares nothing; without prefix caching nothing is.
  const auto run = [](bool caching, uint32_t third_prefix) {
    Simulator sim;
    Collector sink(sim);
    LlmReplicaSpec spec = ten_ms_iterations();
    spec.batching.prefix_caching = caching;
    LlmReplica replica(sim, sink, 0, spec);
    const auto with_prefix = [](Request r, uint32_t id) {
      r.prefix_id = id;
      r.prefix_tokens = 70;
      return r;
    };
    replica.submit(with_prefix(make_request(1, 0, 100, 3), 7));
    replica.submit(with_prefix(make_request(2, 0, 100, 3), 7));
    sim.run(0.015);
    // After the second's admission: the prefix's 4 blocks once + 3 of each's own, not 2 x 7.
    const int64_t both = replica.kv_blocks_used();
    sim.run();
    replica.submit(with_prefix(make_request(3, 1.0, 100, 1), third_prefix));
    sim.run();
    REQUIRE(sink.done.size() == 3);
    CHECK(replica.kv_blocks_used() == 0);
    return std::make_tuple(replica.stats().cached_tokens, replica.stats().prefill_tokens, both);
  };
  CHECK(run(true, 7) == std::make_tuple(uint64_t{128}, uint64_t{300 - 128}, int64_t{4 + 3 + 3}));
  CHECK(run(true, 8) == std::make_tuple(uint64_t{64}, uint64_t{300 - 64}, int64_t{4 + 3 + 3}));
  CHECK(run(false, 7) == std::make_tuple(uint64_t{0}, uint64_t{300}, int64_t{7 + 7}));
}

TEST_CASE("Chunked prefill splits a long prompt over iterations beside running decodes",
          "[serving][llm]") {
  Simulator sim;
  Collector sink(sim);
  LlmReplicaSpec spec = ten_ms_iterations();
  spec.batching.max_num_batched_tokens = 512;
  LlmReplica replica(sim, sink, 0, spec);
  replica.submit(make_request(1, 0, 10, 20));  // decoding from 10 ms on
  sim.run(0.015);
  replica.submit(make_request(2, 0.015, 2000, 2));
  sim.run();
  const Done& small = find(sink.done, 1);
  const Done& big = find(sink.done, 2);
  // The big prompt: 511 tokens per iteration beside the decode, 4 iterations from 20 ms on.
  CHECK(big.request.first_token_s == Approx(0.060));
  CHECK(big.time_s == Approx(0.070));
  // The small request never paused: 1 prefill + 19 decodes.
  CHECK(small.time_s == Approx(0.200));
}

TEST_CASE("Prefill-first pauses decodes for a prefill-only iteration (vLLM v0)",
          "[serving][llm]") {
  for (const SchedulerMode mode : {SchedulerMode::chunked_prefill, SchedulerMode::prefill_first}) {
    Simulator sim;
    Collector sink(sim);
    LlmReplicaSpec spec = ten_ms_iterations();
    spec.batching.scheduler = mode;
    LlmReplica replica(sim, sink, 0, spec);
    replica.submit(make_request(1, 0, 10, 5));
    sim.run(0.015);
    replica.submit(make_request(2, 0.015, 10, 5));
    sim.run();
    const Done& a = find(sink.done, 1);
    const Done& b = find(sink.done, 2);
    CHECK(b.request.first_token_s == Approx(0.030));
    CHECK(b.time_s == Approx(0.070));
    // A: prefill, decode, then (prefill-first) a pause while B's prompt runs alone.
    CHECK(a.time_s == Approx(mode == SchedulerMode::prefill_first ? 0.060 : 0.050));
  }
}

TEST_CASE("A decode replica admits a request whose KV cache arrived straight into decoding",
          "[serving][llm]") {
  Simulator sim;
  Collector sink(sim);
  LlmReplica replica(sim, sink, 0, ten_ms_iterations(), LlmRole::decode);
  Request r = make_request(1, 0, 1000, 5);
  r.prefilled = true;
  r.first_token_s = 0.0;
  replica.submit(r);
  CHECK(replica.decoding() == 1);
  sim.run();
  REQUIRE(sink.done.size() == 1);
  CHECK(sink.done[0].time_s == Approx(0.040));  // 4 decode iterations, no prefill
  CHECK(replica.stats().prefill_tokens == 0);
}

TEST_CASE("A prefill replica completes a request at its first token", "[serving][llm]") {
  Simulator sim;
  Collector sink(sim);
  LlmReplica replica(sim, sink, 0, ten_ms_iterations(), LlmRole::prefill);
  replica.submit(make_request(1, 0, 100, 50));
  sim.run();
  REQUIRE(sink.done.size() == 1);
  CHECK(sink.done[0].time_s == Approx(0.010));
  CHECK(sink.done[0].request.first_token_s == Approx(0.010));
}

TEST_CASE("The listener hears of a request's first token once, when the prefill ends", "[serving][llm]") {
  // 10 ms iterations: the prefill's iteration ends at 10 ms with the first token, then four
  // decode iterations give the other four tokens (done at 50 ms).
  Simulator sim;
  Collector sink(sim);
  LlmReplica replica(sim, sink, 0, ten_ms_iterations());
  replica.submit(make_request(1, 0, 100, 5));
  sim.run();
  REQUIRE(sink.first_tokens.size() == 1);
  CHECK(sink.first_tokens[0].time_s == Approx(0.010));
  CHECK(sink.first_tokens[0].request.first_token_s == Approx(0.010));
  REQUIRE(sink.done.size() == 1);
  CHECK(sink.done[0].time_s == Approx(0.050));
}

TEST_CASE("Coalesced decode runs give the times of one event per iteration", "[serving][llm]") {
  // A busy replica with arrivals cutting runs, finishes ending them, and preemptions.
  const auto run = [](bool coalesce) {
    Simulator sim(12);
    Collector sink(sim);
    LlmReplicaSpec spec;
    spec.timing.kv_cache_bytes = 3000 * 16 * spec.timing.model.kv_bytes_per_token();
    spec.batching.coalesce_decode_iterations = coalesce;
    LlmReplica replica(sim, sink, 0, spec);
    cs::engine::RandomStream& rng = sim.random("load");
    double t = 0;
    for (uint64_t id = 0; id < 3000; ++id) {
      t += rng.exponential(0.08);
      const int prompt = 1 + static_cast<int>(rng.uniform_int(uint64_t{3000}));
      const int output = 1 + static_cast<int>(rng.uniform_int(uint64_t{600}));
      sim.schedule_at(t, [&replica, id, t, prompt, output] {
        replica.submit(make_request(id, t, prompt, output));
      });
    }
    sim.run();
    return std::make_pair(sink.done, replica.stats());
  };
  const auto [coalesced, coalesced_stats] = run(true);
  const auto [stepped, stepped_stats] = run(false);
  REQUIRE(coalesced.size() == 3000);
  REQUIRE(stepped.size() == 3000);
  CHECK(coalesced_stats.preemptions > 0);
  CHECK(coalesced_stats.preemptions == stepped_stats.preemptions);
  CHECK(coalesced_stats.iterations == stepped_stats.iterations);
  CHECK(coalesced_stats.tokens_out == stepped_stats.tokens_out);
  for (std::size_t i = 0; i < coalesced.size(); ++i) {
    INFO("completion " << i);
    REQUIRE(coalesced[i].request.id == stepped[i].request.id);
    CHECK(coalesced[i].time_s == stepped[i].time_s);
    CHECK(coalesced[i].request.first_token_s == stepped[i].request.first_token_s);
  }
}
