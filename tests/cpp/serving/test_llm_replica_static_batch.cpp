// LLM replica with static batches (scheduler static_batch, as transformers-neuronx's sample loop
// runs them): the batch forms after the instant's arrivals, its prompts padded to the longest in
// one context pass, every decode step timed at the batch's rows until its last request is done,
// later requests waiting for the whole batch; over dense slots the decode step reads the token
// bucket's cache.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "llm_replica_test_support.hpp"

using namespace cs::serving;
using namespace cs::serving::test;
using cs::engine::Simulator;

namespace {

// Measured timing: 10 ms an iteration + 0.1 ms a prompt token + 1 ms a decode row + 1 us a KV
// token read: each step's time is then a closed form of its shapes.
LlmReplicaSpec static_batch_spec(int max_num_seqs = 8) {
  LlmReplicaSpec spec = ten_ms_iterations();
  spec.timing.measured.per_prefill_token_s = 1e-4;
  spec.timing.measured.per_decode_sequence_s = 1e-3;
  spec.timing.measured.per_context_token_s = 1e-6;
  spec.batching.scheduler = SchedulerMode::static_batch;
  spec.batching.prefix_caching = false;
  spec.batching.max_num_seqs = max_num_seqs;
  return spec;
}

// A decode step of `rows` rows each reading `kv` tokens.
double step_s(int rows, double kv) { return 0.010 + 1e-3 * rows + 1e-6 * rows * kv; }

// `requests` submitted together at t = 0 to one replica, run to the end: what completed, and
// the replica's stats.
struct Outcome {
  std::vector<Done> done;
  LlmReplicaStats stats;
};
Outcome run_together(const LlmReplicaSpec& spec, const std::vector<cs::serving::Request>& requests) {
  Simulator sim;
  Collector sink(sim);
  LlmReplica replica(sim, sink, 0, spec);
  for (const auto& r : requests) replica.submit(r);
  sim.run();
  REQUIRE(sink.done.size() == requests.size());
  return {sink.done, replica.stats()};
}

}  // namespace

TEST_CASE("A static batch encodes its prompts padded to the longest and decodes until its last is done",
          "[serving][llm]") {
  // Prompts of 100, 100, 100 and 200 tokens with 3, 3, 3 and 5 output tokens at t = 0: one context
  // pass of 4 x 200 tokens (10 + 80 ms) gives every first token; then every decode step runs the
  // 4 rows at the batch's position 200 + k + 1, also after three of them are done. A request
  // arriving at 50 ms, during the batch, waits for the whole batch and runs alone.
  Simulator sim;
  Collector sink(sim);
  LlmReplica replica(sim, sink, 0, static_batch_spec());
  for (uint64_t id = 1; id <= 3; ++id) replica.submit(make_request(id, 0, 100, 3));
  replica.submit(make_request(4, 0, 200, 5));
  sim.schedule_at(0.050, [&] { replica.submit(make_request(5, 0.050, 100, 2)); });
  sim.run();
  REQUIRE(sink.done.size() == 5);
  const double ttft = 0.010 + 1e-4 * 4 * 200;
  double t = ttft;
  std::vector<double> step_end;
  for (int k = 0; k < 4; ++k) step_end.push_back(t += step_s(4, 200 + k + 1));
  for (uint64_t id = 1; id <= 4; ++id) CHECK(find(sink.done, id).request.first_token_s == Approx(ttft).epsilon(1e-12));
  for (uint64_t id = 1; id <= 3; ++id) CHECK(find(sink.done, id).time_s == Approx(step_end[1]).epsilon(1e-12));
  CHECK(find(sink.done, 4).time_s == Approx(step_end[3]).epsilon(1e-12));
  // The next batch: request 5 alone, its 100-token prompt, one decode step at 101 tokens.
  const double first5 = step_end[3] + 0.010 + 1e-4 * 100;
  CHECK(find(sink.done, 5).request.first_token_s == Approx(first5).epsilon(1e-12));
  CHECK(find(sink.done, 5).time_s == Approx(first5 + step_s(1, 101)).epsilon(1e-12));
  CHECK(replica.stats().prefill_tokens == 600);  // the prompts' tokens, not the padding
  CHECK(replica.stats().tokens_out == 3 * 3 + 5 + 2);
  CHECK(replica.kv_blocks_used() == 0);
}

TEST_CASE("Requests arriving together from events of one instant share a static batch", "[serving][llm]") {
  // b identical requests sent at t = 1 s from separate events: one context pass of b prompts,
  // the same first token and last token for all, whatever b; max_num_seqs 4 caps the batch, so
  // the fifth and sixth run as a second batch after the first's last token.
  for (const int b : {1, 3, 6}) {
    Simulator sim;
    Collector sink(sim);
    LlmReplica replica(sim, sink, 0, static_batch_spec(4));
    for (int i = 0; i < b; ++i)
      sim.schedule_at(1.0, [&replica, i] { replica.submit(make_request(static_cast<uint64_t>(i), 1.0, 64, 4)); });
    sim.run();
    REQUIRE(sink.done.size() == static_cast<std::size_t>(b));
    const auto batch_end = [](double start, int rows) {
      double t = start + 0.010 + 1e-4 * rows * 64;
      for (int k = 0; k < 3; ++k) t += step_s(rows, 64 + k + 1);
      return t;
    };
    const int first = std::min(b, 4);
    const double end1 = batch_end(1.0, first);
    INFO(b << " requests");
    for (int i = 0; i < b; ++i) {
      const Done& d = find(sink.done, static_cast<uint64_t>(i));
      const bool second = i >= 4;
      const double start = second ? end1 : 1.0;
      const int rows = second ? b - 4 : first;
      CHECK(d.request.first_token_s == Approx(start + 0.010 + 1e-4 * rows * 64).epsilon(1e-12));
      CHECK(d.time_s == Approx(batch_end(start, rows)).epsilon(1e-12));
    }
  }
}

TEST_CASE("Over dense slots a static batch's decode step reads the token bucket's cache", "[serving][llm]") {
  // transformers-neuronx's token buckets over n_positions 200: 128, then 200. A 120-token prompt
  // with 12 output tokens decodes 11 steps at positions 121..131: 8 read 128 tokens, 3 read 200.
  LlmReplicaSpec spec = static_batch_spec();
  spec.timing.kv_layout = KvLayout::dense_slots;
  spec.timing.dense_slot_tokens = 200;
  const Done d = run_alone(spec, make_request(1, 0, 120, 12));
  const double ttft = 0.010 + 1e-4 * 120;
  CHECK(d.request.first_token_s == Approx(ttft).epsilon(1e-12));
  CHECK(d.time_s == Approx(ttft + 8 * step_s(1, 128) + 3 * step_s(1, 200)).epsilon(1e-12));
  // The paged layout reads the position itself.
  double paged = ttft;
  for (int k = 0; k < 11; ++k) paged += step_s(1, 121 + k);
  CHECK(run_alone(static_batch_spec(), make_request(1, 0, 120, 12)).time_s == Approx(paged).epsilon(1e-12));
}

TEST_CASE("Over dense slots a static batch takes only requests whose padded rows fit n_positions", "[serving][llm]") {
  // n_positions 200: a 150-token prompt with 10 output tokens and a 10-token prompt with 180 each
  // fit a slot alone, but in one batch the second row would decode to 150 + 180 = 330 positions:
  // it waits for the first's batch and runs alone, padded to its own prompt.
  LlmReplicaSpec spec = static_batch_spec();
  spec.timing.kv_layout = KvLayout::dense_slots;
  spec.timing.dense_slot_tokens = 200;
  const Outcome o = run_together(spec, {make_request(1, 0, 150, 10), make_request(2, 0, 10, 180)});
  const double ttft1 = 0.010 + 1e-4 * 150;  // one row: the second is not in the batch
  CHECK(find(o.done, 1).request.first_token_s == Approx(ttft1).epsilon(1e-12));
  const double end1 = ttft1 + 9 * step_s(1, 200);  // positions 151..159: the bucket of 200
  CHECK(find(o.done, 1).time_s == Approx(end1).epsilon(1e-12));
  CHECK(find(o.done, 2).request.first_token_s == Approx(end1 + 0.010 + 1e-4 * 10).epsilon(1e-12));
}

TEST_CASE("A static batch takes only the requests whose KV cache fits to their last token", "[serving][llm]") {
  // 12 blocks of 16 tokens: two requests of 64 + 100 tokens need 11 blocks each, so the second
  // waits for the first's batch; nothing is ever preempted.
  LlmReplicaSpec spec = static_batch_spec();
  spec.timing.kv_cache_bytes = 12 * 16 * spec.timing.model.kv_bytes_per_token();
  const Outcome o = run_together(spec, {make_request(1, 0, 64, 100), make_request(2, 0, 64, 100)});
  CHECK(o.stats.preemptions == 0);
  CHECK(find(o.done, 2).request.first_token_s > find(o.done, 1).time_s);
}

TEST_CASE("A replica running a static batch reports its slots free only when the batch ends", "[serving][llm]") {
  // Outputs of 2 and 5 tokens in one batch: the first row is done after the first decode step,
  // but nothing can start before the batch's last, so a central queue must not hand the replica
  // a request then (it would wait for the whole batch while another replica may be free).
  Simulator sim;
  Collector sink(sim);
  LlmReplica replica(sim, sink, 0, static_batch_spec(4));
  replica.submit(make_request(1, 0, 64, 2));
  replica.submit(make_request(2, 0, 64, 5));
  CHECK(replica.can_start_now());  // the batch forms at the end of the instant: room for more
  const double ttft = 0.010 + 1e-4 * 2 * 64;
  double end = ttft;
  for (int k = 0; k < 4; ++k) end += step_s(2, 64 + k + 1);
  bool checked = false;
  sim.schedule_at(ttft + step_s(2, 65) + 1e-6, [&] {
    CHECK(sink.done.size() == 1);
    CHECK_FALSE(replica.can_start_now());
    CHECK(sink.slot_free_s.empty());
    checked = true;
  });
  sim.run();
  CHECK(checked);
  CHECK(find(sink.done, 2).time_s == Approx(end).epsilon(1e-12));
  REQUIRE(sink.slot_free_s.size() == 1);
  CHECK(sink.slot_free_s[0] == Approx(end).epsilon(1e-12));
  CHECK(replica.can_start_now());
}

TEST_CASE("A static batch runs on a unified replica without prefix caching", "[serving][llm]") {
  Simulator sim;
  Collector sink(sim);
  CHECK_THROWS_AS(LlmReplica(sim, sink, 0, static_batch_spec(), LlmRole::prefill), std::invalid_argument);
  LlmReplicaSpec cached = static_batch_spec();
  cached.batching.prefix_caching = true;
  CHECK_THROWS_WITH(validate_llm_replica(cached), Catch::Contains("replica.prefix_caching"));
}
