// The prefill's attention unfused (flash_attention false, as transformers-neuronx builds its
// context encoding up to Neuron SDK 2.18): the whole score matrix computed, its bytes through
// the GEMMs and the softmax at the HBM's achievable bandwidth (workloads/unfused_attention.hpp);
// closed forms of one iteration and of a chunked prompt's TTFT.
#include <catch2/catch.hpp>

#include <vector>

#include "sim/serving/llm_replica.hpp"
#include "workloads/unfused_attention.hpp"

using namespace cs::serving;
using cs::engine::Simulator;

namespace {

// Llama 3 70B on an inf2.48xlarge's 12 chips, 24 NeuronCores (72 query heads as held), at the
// Inferentia2's rates; no collectives, no iteration overhead: the roofline alone.
LlmTimingSpec inf2_70b(bool flash) {
  LlmTimingSpec t;
  t.gpus = 12;
  t.ranks_per_gpu = 2;
  t.pad_heads = true;
  t.gpu.peak_flops = 190e12;
  t.gpu.hbm_bandwidth_Bps = 820e9;
  t.gpu.hbm_bytes = 32 * 1073741824.0;
  t.model = {.params = 70.55e9, .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8, .head_dim = 128};
  t.iteration_overhead_s = 0;
  t.flash_attention = flash;
  return t;
}

IterationWork whole_prompt(double n) {
  IterationWork w;
  w.prefill_tokens = static_cast<int64_t>(n);
  w.prefill_attended = n * (n + 1) / 2;
  w.prefill_scores = n * n;
  w.prompts_completed = 1;
  return w;
}

class FirstTokens final : public ReplicaListener {
 public:
  explicit FirstTokens(Simulator& sim) : sim_(sim) {}
  void on_complete(Replica&, const Request&) override {}
  void on_first_token(Replica&, const Request&) override { at_s.push_back(sim_.now()); }
  void on_slot_free(Replica&) override {}
  void on_drained(Replica&) override {}
  std::vector<double> at_s;

 private:
  Simulator& sim_;
};

}  // namespace

TEST_CASE("An unfused prefill computes the whole score matrix and moves it through HBM", "[serving][llm]") {
  namespace ua = cs::work::unfused_attention;
  const double n = 2048;
  const LlmTimingSpec unfused = inf2_70b(false);
  const LlmModelSpec held = unfused.held_model();
  REQUIRE(held.heads == 72);
  const double flops_per_s = 12 * 190e12 * 0.6, bytes_per_s = 12 * 820e9 * 0.7;
  const double linear = 2 * held.params * n / flops_per_s;  // compute-bound at 2,048 tokens
  const double kv = held.kv_bytes_per_token() * n / (bytes_per_s * 0.9);
  const double scores = 80.0 * 72 * n * n;  // elements over every layer and held head
  // Flash: the causal half's FLOPs.
  CHECK(iteration_time_s(inf2_70b(true), whole_prompt(n)) ==
        Approx(linear + 4.0 * 128 * 80 * 72 * (n * (n + 1) / 2) / flops_per_s));
  // Unfused: the whole matrix's FLOPs against the GEMMs' bytes (the scores written, the
  // probabilities read: 4 bytes an element, more than the FLOPs take on a NeuronCore, whose
  // 190 TFLOP/s over 820 GB/s is 232 FLOP a byte against the 128 of these GEMMs), then the
  // softmax's pass (4 bytes).
  const double flops_s = 4.0 * 128 * scores / flops_per_s;
  const double gemm_bytes_s = kv + ua::kGemmTrafficBytes * scores / bytes_per_s;
  REQUIRE(gemm_bytes_s > flops_s);
  const double softmax_s = ua::kSoftmaxBytes * scores / bytes_per_s;
  CHECK(iteration_time_s(unfused, whole_prompt(n)) == Approx(linear + gemm_bytes_s + softmax_s));
  // 28 ms on top of the 223 ms of the weight GEMMs: 14.0 ms for the GEMMs' score bytes, 14.0
  // for the softmax, where fused attention's causal FLOPs take 4.5 ms.
  CHECK(softmax_s == Approx(0.014030).epsilon(0.001));

  // Decode steps are priced alike fused or not.
  IterationWork decode;
  decode.decode_sequences = 1;
  decode.decode_context_tokens = 3000;
  CHECK(iteration_time_s(unfused, decode) == iteration_time_s(inf2_70b(true), decode));
}

TEST_CASE("A chunked unfused prefill computes each chunk's queries against every key up to its end",
          "[serving][llm]") {
  // A 2,048-token prompt in two chunks of 1,024: the second chunk's score matrix is 1,024 x 2,048.
  LlmReplicaSpec spec;
  spec.timing = inf2_70b(false);
  spec.batching.scheduler = SchedulerMode::chunked_prefill;
  spec.batching.max_num_seqs = 1;
  spec.batching.max_num_batched_tokens = 1024;
  Simulator sim;
  FirstTokens sink(sim);
  LlmReplica replica(sim, sink, 0, spec);
  Request r;
  r.id = 1;
  r.prompt_tokens = 2048;
  r.output_tokens = 1;
  replica.submit(r);
  sim.run();
  REQUIRE(sink.at_s.size() == 1);

  IterationWork first;
  first.prefill_tokens = 1024;
  first.prefill_attended = 1024.0 * 1025 / 2;
  first.prefill_scores = 1024.0 * 1024;
  IterationWork second;
  second.prefill_tokens = 1024;
  second.prefill_attended = 1024.0 * 1024 + 1024.0 * 1025 / 2;
  second.prefill_scores = 1024.0 * 2048;
  second.prefill_context_tokens = 1024;
  second.prompts_completed = 1;
  CHECK(sink.at_s[0] == Approx(iteration_time_s(spec.timing, first) + iteration_time_s(spec.timing, second)));
}
