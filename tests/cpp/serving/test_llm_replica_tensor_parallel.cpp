// LLM replica over several GPUs (or NeuronCores): tensor parallelism's all-reduces and logits
// all-gather, the KV-capacity rule and admissibility, and the model as the ranks hold it
// (query heads padded, KV heads copied) with its weights, FLOPs and KV cache.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "llm_replica_test_support.hpp"

using namespace cs::serving;
using namespace cs::serving::test;
using cs::engine::Simulator;

namespace {

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

TEST_CASE("A collective's cost without its dominated pieces gives the same seconds", "[serving][llm]") {
  // Pieces as NCCL's algorithms and protocols give them: the third is above the first in both
  // terms, the fifth equals the second; the others cross.
  AllReduceCost cost;
  cost.pieces = {{8e-6, 2.5e-11}, {2e-5, 1.2e-11}, {9e-6, 3e-11}, {4e-5, 6e-12}, {2e-5, 1.2e-11}};
  AllReduceCost pruned = cost;
  pruned.drop_dominated();
  REQUIRE(pruned.pieces.size() == 3);
  CHECK(pruned.pieces[0].fixed_s == 8e-6);
  CHECK(pruned.pieces[1].fixed_s == 2e-5);
  CHECK(pruned.pieces[2].fixed_s == 4e-5);
  for (double bytes = 0; bytes < 1e10; bytes = bytes * 1.37 + 1)
    CHECK(pruned.seconds(bytes) == cost.seconds(bytes));
  AllReduceCost none;
  none.drop_dominated();
  CHECK(none.pieces.empty());
}

TEST_CASE("A collective's cost without its dominated pieces gives the same seconds for any terms",
          "[serving][llm]") {
  // Terms validate_timing refuses, as a plain AllReduceCost may hold them: seconds() starts from
  // the first piece's time, so that piece stays even when another dominates it.
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<std::vector<AllReduceCost::Piece>> cases = {
      {{2e-5, 2e-11}, {nan, 0}, {1e-5, 1e-11}},     // a NaN piece the first's dominator would lead
      {{3e-5, inf}, {2e-5, 0}, {1e-5, inf}},        // at 0 bytes the first piece's time is NaN
      {{4e-5, 1e-11}, {4e-5, 1e-11}, {1e-5, 0}},    // the first dominated, an equal one after it
  };
  for (const auto& pieces : cases) {
    AllReduceCost cost;
    cost.pieces = pieces;
    AllReduceCost pruned = cost;
    pruned.drop_dominated();
    CHECK(pruned.pieces.size() <= cost.pieces.size());
    for (const double bytes : {0.0, 1.0, 1e3, 1e6, 1e9}) {
      INFO(pieces.size() << " pieces, " << bytes << " bytes");
      const double a = pruned.seconds(bytes), b = cost.seconds(bytes);
      CHECK((a == b || (std::isnan(a) && std::isnan(b))));
    }
  }
}
