// LLM replica: the roofline's two sides (batch-1 decode at the memory-bandwidth bound, a long
// prefill compute-bound), the KV cache (requests wait when it is full; decoding sequences
// that outgrow it preempt the newest), chunked prefill against prefill-first scheduling,
// disaggregated decode admission, tensor parallelism and the KV-capacity rule.
#include <catch2/catch.hpp>

#include <tuple>
#include <utility>
#include <vector>

#include "sim/serving/llm_replica.hpp"

using namespace cs::serving;
using cs::engine::Simulator;

namespace {

struct Done {
  Request request;
  double time_s;
};

class Collector final : public ReplicaListener {
 public:
  explicit Collector(Simulator& sim) : sim_(sim) {}
  void on_complete(Replica&, const Request& r) override { done.push_back({r, sim_.now()}); }
  void on_first_token(Replica&, const Request& r) override { first_tokens.push_back({r, sim_.now()}); }
  void on_slot_free(Replica&) override {}
  void on_drained(Replica&) override { drained = true; }
  std::vector<Done> done;
  std::vector<Done> first_tokens;  // each first token as the listener heard of it
  bool drained = false;

 private:
  Simulator& sim_;
};

Request make_request(uint64_t id, double arrival, int prompt, int output) {
  Request r;
  r.id = id;
  r.arrival_s = arrival;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

// `request` alone on a replica of `spec`, run to the end: the completion.
Done run_alone(const LlmReplicaSpec& spec, const Request& request) {
  Simulator sim;
  Collector sink(sim);
  LlmReplica replica(sim, sink, 0, spec);
  replica.submit(request);
  sim.run();
  REQUIRE(sink.done.size() == 1);
  return sink.done[0];
}

// Every iteration takes 10 ms, whatever it does: schedules are then easy to follow by hand.
LlmReplicaSpec ten_ms_iterations() {
  LlmReplicaSpec spec;
  spec.timing.measured.enabled = true;
  spec.timing.measured.base_s = 0.010;
  return spec;
}

const Done& find(const std::vector<Done>& done, uint64_t id) {
  for (const Done& d : done) {
    if (d.request.id == id) return d;
  }
  FAIL("request " << id << " did not complete");
  return done.front();
}

// Two 64-token prompts (4 blocks each) at t = 0 on 10 ms iterations over 12 KV blocks: the
// older gives `older_output` tokens, the newer 100; the newer is preempted at decode clock 32,
// when the older needs its sixth block. Returns the replica's stats; the completions in `done`.
LlmReplicaStats older_and_newer_on_12_blocks(int older_output, bool caching, std::vector<Done>& done,
                                             double per_prefill_token_s = 0,
                                             SchedulerMode mode = SchedulerMode::chunked_prefill,
                                             int64_t max_num_batched_tokens = 8192) {
  Simulator sim;
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

// Batch-1 decode over `context` KV tokens on `t`'s GPUs, the bandwidth bound of the model as
// they hold it: its weights at the achievable HBM rate, the KV cache at the paged share of that.
double held_decode_bound_s(const LlmTimingSpec& t, double context) {
  const LlmModelSpec held = t.held_model();
  const double bytes_per_s = t.gpus * t.gpu.hbm_bandwidth_Bps * t.gpu.memory_efficiency;
  return held.weight_bytes() / bytes_per_s +
         held.kv_bytes_per_token() * context / (bytes_per_s * t.gpu.paged_kv_efficiency);
}

IterationWork one_decode(double context) {
  IterationWork w;
  w.decode_sequences = 1;
  w.decode_context_tokens = context;
  return w;
}

}  // namespace

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

TEST_CASE("vLLM for TPU's padding: a step's GEMMs run on its tokens padded to a power of two", "[serving][llm]") {
  // One 3,000-token prompt, compute-bound: with step_padding power_of_two its GEMMs run on 4,096
  // tokens (the attention on its 3,000), so its prefill takes 2 x params x 1,096 FLOPs longer.
  const auto first_token_s = [](StepPadding padding) {
    LlmReplicaSpec spec;
    spec.timing.iteration_overhead_s = 0;
    spec.batching.step_padding = padding;
    return std::pair{run_alone(spec, make_request(1, 0, 3000, 1)).request.first_token_s, spec};
  };
  const auto [plain_s, spec] = first_token_s(StepPadding::none);
  const auto [padded_s, padded_spec] = first_token_s(StepPadding::power_of_two);
  const LlmModelSpec& m = spec.timing.model;
  const double extra_s = 2 * m.params * (4096 - 3000) / (spec.timing.gpu.peak_flops * spec.timing.gpu.compute_efficiency);
  CHECK(padded_s - plain_s == Approx(extra_s).epsilon(1e-9));
}

TEST_CASE("vLLM for TPU's padded shapes: tokens from 16, sampled requests from 8 up to max_num_seqs", "[serving][llm]") {
  // The shapes are those of vllm/v1/worker/tpu_model_runner.py's paddings (llm_replica.hpp).
  LlmTimingSpec t;
  t.gpus = 2;  // a tensor-parallel replica: the logits are gathered
  t.iteration_overhead_s = 0;
  t.tp_allreduce.pieces = {{1e-5, 1e-10}};
  t.tp_allgather.pieces = {{1e-5, 1e-10}};
  const IterationCost cost(t);
  IterationWork decode;  // 5 decodes: 16 token rows, 8 logits rows
  decode.decode_sequences = 5;
  decode.decode_context_tokens = 5000;
  IterationWork padded = decode;
  padded.padded_tokens = 16;
  padded.padded_sampled = 8;
  IterationWork as_if = decode;  // the same shapes, as real work
  as_if.decode_sequences = 16;
  const IterationCost::TokenTerms p = cost.token_terms(padded), a = cost.token_terms(as_if), d = cost.token_terms(decode);
  CHECK(p.comm_s == a.comm_s);   // the all-reduces of 16 tokens
  CHECK(p.comm_s > d.comm_s);
  CHECK(p.linear_s == a.linear_s);
  IterationWork eight = decode;
  eight.decode_sequences = 8;
  CHECK(p.gather_s == cost.token_terms(eight).gather_s);  // the logits of 8 rows
  CHECK(p.gather_s > d.gather_s);
  // The shapes: (decodes, prefill tokens, requests, max_num_seqs) -> (tokens, sampled rows).
  const auto shapes = [](int64_t decodes, int64_t prefill, int64_t requests, int64_t max_seqs) {
    IterationWork w;
    w.decode_sequences = decodes;
    w.prefill_tokens = prefill;
    pad_to_compiled_shapes(w, requests, max_seqs);
    return std::pair{w.padded_tokens, w.padded_sampled};
  };
  CHECK(shapes(5, 0, 5, 256) == std::pair<int64_t, int64_t>{16, 8});
  CHECK(shapes(3, 100, 4, 256) == std::pair<int64_t, int64_t>{128, 8});
  CHECK(shapes(63, 449, 64, 64) == std::pair<int64_t, int64_t>{512, 64});  // a full 512-token step
  CHECK(shapes(63, 102, 64, 64) == std::pair<int64_t, int64_t>{256, 64});
  CHECK(shapes(19, 494, 20, 16) == std::pair<int64_t, int64_t>{1024, 16});  // capped at max_num_seqs
  CHECK(shapes(3, 0, 3, 4) == std::pair<int64_t, int64_t>{16, 8});         // never below 8 rows
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

TEST_CASE("Tensor parallelism, the KV-capacity rule, and admissibility", "[serving][llm]") {
  LlmTimingSpec one;
  LlmTimingSpec two = one;
  two.gpus = 2;
  IterationWork decode;
  decode.decode_sequences = 8;
  decode.decode_context_tokens = 8 * 1000;
  // Memory-bound: two GPUs read their halves at once (the per-iteration overhead aside).
  one.iteration_overhead_s = two.iteration_overhead_s = 0;
  CHECK(iteration_time_s(two, decode) == Approx(iteration_time_s(one, decode) / 2));
  // Two all-reduces per layer of the batch's activations (8 tokens x 4096 x 2 bytes), each
  // the cheaper of two affine costs: here the latency-bound one.
  two.tp_allreduce.pieces = {{10e-6, 1 / 10e9}, {30e-6, 1 / 100e9}};
  const double bytes = 8 * 4096 * 2.0;
  CHECK(two.tp_allreduce.seconds(bytes) == Approx(10e-6 + bytes / 10e9));
  CHECK(two.tp_allreduce.seconds(1e8) == Approx(30e-6 + 1e8 / 100e9));
  CHECK(iteration_time_s(two, decode) == Approx(iteration_time_s(one, decode) / 2 + 2 * 32 * (10e-6 + bytes / 10e9)));
  two.iteration_overhead_s = 0.5e-3;
  CHECK(iteration_time_s(two, decode) == Approx(iteration_time_s(one, decode) / 2 + 2 * 32 * (10e-6 + bytes / 10e9) + 0.5e-3));
  // The logits' all-gather: every sampled sequence's 128,256 logits x 2 bytes, once per
  // iteration; a prompt that ends in the iteration is sampled too, a chunk that does not is not.
  const double before = iteration_time_s(two, decode);
  two.tp_allgather.pieces = {{20e-6, 1 / 5e9}};
  const double logits = 128256 * 2.0;
  CHECK(iteration_time_s(two, decode) == Approx(before + 20e-6 + 8 * logits / 5e9));
  IterationWork with_prompt = decode;
  with_prompt.prefill_tokens = 100;
  const double unfinished = iteration_time_s(two, with_prompt);
  with_prompt.prompts_completed = 1;
  CHECK(iteration_time_s(two, with_prompt) == Approx(unfinished + logits / 5e9));
  LlmTimingSpec one_with_costs = one;  // one GPU gathers nothing, whatever costs it holds
  one_with_costs.tp_allgather = two.tp_allgather;
  CHECK(iteration_time_s(one_with_costs, with_prompt) == Approx(iteration_time_s(one, with_prompt)));
  // KV cache = GPUs x HBM x utilization - weights - reserve.
  CHECK(kv_cache_bytes(one) == Approx(80e9 * 0.9 - 8.03e9 * 2 - 4e9));
  CHECK(kv_cache_bytes(two) == Approx(2 * 80e9 * 0.9 - 8.03e9 * 2 - 4e9));
  LlmTimingSpec tiny = one;
  tiny.gpu.hbm_bytes = 16e9;
  CHECK_THROWS_AS(validate_timing(tiny), std::invalid_argument);  // 8B BF16 does not fit

  Simulator sim;
  Collector sink(sim);
  LlmReplicaSpec spec = ten_ms_iterations();
  spec.timing.kv_cache_bytes = 10 * 16 * spec.timing.model.kv_bytes_per_token();
  LlmReplica replica(sim, sink, 0, spec);
  CHECK(replica.admissible(make_request(1, 0, 100, 60)));
  CHECK_FALSE(replica.admissible(make_request(2, 0, 100, 61)));  // 161 tokens > 160
}

TEST_CASE("Padded query heads and copied KV heads add their weights, FLOPs and KV cache", "[serving][llm]") {
  // Llama 3 70B's attention: 64 query heads and 8 KV heads of 128 over 80 layers of 8,192.
  const LlmModelSpec m{.params = 70.55e9, .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8, .head_dim = 128};
  const double per_head = 2.0 * 80 * 8192 * 128;  // two hidden x head_dim weights a layer
  // 8 GPUs divide both: nothing added.
  CHECK(m.held_by(8).params == m.params);
  CHECK(m.held_by(8).kv_heads == 8);
  // 16 GPUs: one KV head each, 8 copies more (K and V weights and cache); the queries divide.
  CHECK(m.held_by(16).heads == 64);
  CHECK(m.held_by(16).kv_heads == 16);
  CHECK(m.held_by(16).params == Approx(m.params + 8 * per_head));
  CHECK(m.held_by(16).kv_bytes_per_token() == Approx(2 * m.kv_bytes_per_token()));
  // 12 GPUs (an inf2.48xlarge's chips): queries padded 64 -> 72 (Q and O of 8 heads), KV 8 -> 12.
  const LlmModelSpec inf2 = m.held_by(12);
  CHECK(inf2.heads == 72);
  CHECK(inf2.kv_heads == 12);
  CHECK(inf2.params == Approx(m.params + (8 + 4) * per_head));

  // On the replica: batch-1 decode reads the held weights; attention's FLOPs run over the
  // padded heads (72 / 64 of the unpadded).
  LlmTimingSpec twelve;
  twelve.gpus = 12;
  twelve.model = m;
  twelve.iteration_overhead_s = 0;
  CHECK(twelve.held_model().params == inf2.params);
  CHECK(iteration_time_s(twelve, one_decode(1000)) == Approx(held_decode_bound_s(twelve, 1000)));
  IterationWork prefill;  // compute-bound: 4,096 tokens attending to 2,048 positions on average
  prefill.prefill_tokens = 4096;
  prefill.prefill_attended = 4096.0 * 2048;
  const double flops_per_s = 12 * twelve.gpu.peak_flops * twelve.gpu.compute_efficiency;
  CHECK(iteration_time_s(twelve, prefill) ==
        Approx(2 * inf2.params * 4096 / flops_per_s + 4.0 * 80 * 72 * 128 * prefill.prefill_attended / flops_per_s));
  CHECK(kv_cache_bytes(twelve) == Approx(12 * 80e9 * 0.9 - inf2.weight_bytes() - 4e9));
}

TEST_CASE("Ranks per GPU split the heads over NeuronCores: the chips' bandwidth, the cores' copies",
          "[serving][llm]") {
  // Llama 3 70B on an inf2.48xlarge as transformers-neuronx runs it: tp_degree 24 NeuronCores on
  // 12 chips. Queries padded 64 -> 72 (a multiple of 24, as of 12), KV heads 8 -> 24 copies (12
  // more than one rank per chip holds); the weights are read at the 12 chips' bandwidth.
  const LlmModelSpec m{.params = 70.55e9, .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8, .head_dim = 128};
  const double per_head = 2.0 * 80 * 8192 * 128;
  LlmTimingSpec cores;
  cores.gpus = 12;
  cores.ranks_per_gpu = 2;
  cores.model = m;
  cores.iteration_overhead_s = 0;
  CHECK(cores.tp_ranks() == 24);
  const LlmModelSpec held = cores.held_model();
  CHECK(held.heads == 72);
  CHECK(held.kv_heads == 24);
  CHECK(held.params == Approx(m.held_by(12).params + 12 * per_head));
  CHECK(held.kv_bytes_per_token() == Approx(3 * m.kv_bytes_per_token()));
  CHECK(iteration_time_s(cores, one_decode(1000)) == Approx(held_decode_bound_s(cores, 1000)));
  CHECK(kv_cache_bytes(cores) == Approx(12 * 80e9 * 0.9 - held.weight_bytes() - 4e9));
  // Llama 2 7B's 32 heads (MHA) over 24 NeuronCores: 48 query and KV heads, not 12 chips' 36.
  const LlmModelSpec mha{.params = 6.74e9, .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 32, .head_dim = 128};
  cores.model = mha;
  CHECK(cores.held_model().heads == 48);
  CHECK(cores.held_model().kv_heads == 48);
  CHECK(cores.held_model().params == Approx(mha.params + 2 * 16 * 2.0 * 32 * 4096 * 128));
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
