#pragma once
// Helpers shared by the LLM replica tests (test_llm_replica*.cpp): a listener that records
// completions and first tokens, requests, a replica run alone, 10 ms iterations, and two
// requests outgrowing 12 KV blocks (the preemption cases of the paged and JetStream layouts).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "sim/serving/llm_replica.hpp"

namespace cs::serving::test {

struct Done {
  Request request;
  double time_s;
};

class Collector final : public ReplicaListener {
 public:
  explicit Collector(engine::Simulator& sim) : sim_(sim) {}
  void on_complete(Replica&, const Request& r) override { done.push_back({r, sim_.now()}); }
  void on_first_token(Replica&, const Request& r) override { first_tokens.push_back({r, sim_.now()}); }
  void on_slot_free(Replica&) override { slot_free_s.push_back(sim_.now()); }
  void on_drained(Replica&) override { drained = true; }
  std::vector<Done> done;
  std::vector<double> slot_free_s;  // when the replica reported a slot free
  std::vector<Done> first_tokens;  // each first token as the listener heard of it
  bool drained = false;

 private:
  engine::Simulator& sim_;
};

inline Request make_request(uint64_t id, double arrival, int prompt, int output) {
  Request r;
  r.id = id;
  r.arrival_s = arrival;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

// `request` alone on a replica of `spec`, run to the end: the completion.
inline Done run_alone(const LlmReplicaSpec& spec, const Request& request) {
  engine::Simulator sim;
  Collector sink(sim);
  LlmReplica replica(sim, sink, 0, spec);
  replica.submit(request);
  sim.run();
  REQUIRE(sink.done.size() == 1);
  return sink.done[0];
}

// Every iteration takes 10 ms, whatever it does: schedules are then easy to follow by hand.
inline LlmReplicaSpec ten_ms_iterations() {
  LlmReplicaSpec spec;
  spec.timing.measured.enabled = true;
  spec.timing.measured.base_s = 0.010;
  return spec;
}

inline const Done& find(const std::vector<Done>& done, uint64_t id) {
  for (const Done& d : done) {
    if (d.request.id == id) return d;
  }
  FAIL("request " << id << " did not complete");
  return done.front();
}

// Two 64-token prompts (4 blocks each) at t = 0 on 10 ms iterations over 12 KV blocks: the
// older gives `older_output` tokens, the newer 100; the newer is preempted at decode clock 32,
// when the older needs its sixth block. Returns the replica's stats; the completions in `done`.
inline LlmReplicaStats older_and_newer_on_12_blocks(int older_output, bool caching, std::vector<Done>& done,
                                                    double per_prefill_token_s = 0,
                                                    SchedulerMode mode = SchedulerMode::chunked_prefill,
                                                    int64_t max_num_batched_tokens = 8192) {
  engine::Simulator sim;
  Collector sink(sim);
  LlmReplicaSpec spec = ten_ms_iterations();
  spec.timing.measured.per_prefill_token_s = per_prefill_token_s;
  spec.batching.scheduler = mode;
  spec.batching.max_num_batched_tokens = max_num_batched_tokens;
  spec.timing.kv_cache_bytes = 12 * 16 * spec.timing.model.kv_bytes_per_token();
  spec.batching.prefix_caching = caching;
  LlmReplica replica(sim, sink, 0, spec);
  replica.submit(make_request(1, 0, 64, older_output));
  replica.submit(make_request(2, 0, 64, 100));
  sim.run();
  CHECK(replica.kv_blocks_used() == 0);
  done = sink.done;
  return replica.stats();
}

}  // namespace cs::serving::test
