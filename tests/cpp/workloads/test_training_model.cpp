// Model presets, parameter counts and the FLOP accounting.
#include <catch2/catch.hpp>

#include "workloads/training_flops.hpp"
#include "workloads/training_model.hpp"

namespace cs::work {
namespace {

TransformerSpec preset(const char* name) {
  auto m = find_model_preset(name);
  REQUIRE(m);
  return *m;
}

TEST_CASE("presets carry their published parameter counts", "[training][model]") {
  // Published totals: GPT-3 175B (174.6 B with tied embeddings and learned positions), Llama 2
  // 7B 6.74 B, Llama 3 8B 8.03 B, 70B 70.6 B, 405B 405.9 B, Mixtral 46.7 B total / 12.9 B
  // active per token, DeepSeek-V3 671 B (37 B active) with MLA.
  CHECK(parameter_counts(preset("gpt3-175b")).total == Approx(174.6e9).epsilon(0.002));
  CHECK(parameter_counts(preset("llama2-7b")).total == Approx(6.738e9).epsilon(0.002));
  CHECK(parameter_counts(preset("llama2-70b")).total == Approx(68.98e9).epsilon(0.002));
  CHECK(parameter_counts(preset("llama3-8b")).total == Approx(8.03e9).epsilon(0.002));
  CHECK(parameter_counts(preset("llama3-70b")).total == Approx(70.55e9).epsilon(0.002));
  CHECK(parameter_counts(preset("llama3-405b")).total == Approx(405.85e9).epsilon(0.002));
  const auto mixtral = parameter_counts(preset("mixtral-8x7b"));
  CHECK(mixtral.total == Approx(46.70e9).epsilon(0.002));
  // 12.9 B active: the GEMM weights a token passes through (the LM head's included) and the
  // 131 M input embedding it looks up.
  CHECK(mixtral.active_matmul + mixtral.embedding == Approx(12.88e9).epsilon(0.002));
  // MLA replaced by wider multi-head attention: a little above 671 B.
  CHECK(parameter_counts(preset("deepseek-v3-like")).total == Approx(671e9).epsilon(0.03));
  for (const auto& m : model_presets()) {
    INFO(m.name);
    CHECK_FALSE(m.source.empty());
    CHECK_NOTHROW(validate_model(m));
  }
}

TrainingWorkload workload(const TransformerSpec& m, int tp, int cp, bool sp, Recompute r = Recompute::none) {
  TrainingWorkload w;
  w.model = m;
  w.parallel.tp = tp;
  w.parallel.cp = cp;
  w.parallel.pp = 2;
  w.parallel.dp = 3;
  w.parallel.sequence_parallel = sp;
  w.batch = {24, 2};
  w.recompute = r;
  return w;
}

TEST_CASE("model FLOPs are 6 x params x tokens plus attention, whatever the plan", "[training][flops]") {
  for (const char* name : {"gpt3-175b", "llama3-8b", "llama2-70b"}) {
    const auto m = preset(name);
    const double active = parameter_counts(m).active_matmul;
    for (auto [tp, cp, sp] : {std::tuple{1, 1, false}, {8, 1, false}, {8, 1, true}, {4, 2, true}}) {
      INFO(name << " tp " << tp << " cp " << cp << " sp " << sp);
      const auto w = workload(m, tp, cp, sp);
      const StepFlops f = step_flops(w);
      const double tokens = 24.0 * m.seq_len;
      CHECK(f.tokens == tokens);
      // PaLM's convention: 6 N per token plus attention, 6 L h s for its causal half.
      const double expected = 6 * active * tokens + 6.0 * m.layers * m.hidden * m.seq_len * tokens;
      CHECK(f.model == Approx(expected).epsilon(1e-12));
      CHECK(f.executed == f.model);
      // Within 0.1% of 6 x every parameter but those only looked up (the untied input
      // embedding, learned positions): biases and norms are the rest.
      const auto counts = parameter_counts(m);
      const double lookup = m.tied_embeddings ? counts.embedding - double(m.vocab) * m.hidden : counts.embedding;
      CHECK(f.model == Approx(6 * (counts.total - lookup) * tokens + 6.0 * m.layers * m.hidden * m.seq_len * tokens)
                           .epsilon(0.001));
    }
  }
}

TEST_CASE("MoE model FLOPs count top_k experts; padding is executed work", "[training][flops]") {
  auto m = preset("mixtral-8x7b");
  auto w = workload(m, 2, 1, true);
  const StepFlops f = step_flops(w);
  const double tokens = 24.0 * m.seq_len;
  CHECK(f.model == Approx(6 * parameter_counts(m).active_matmul * tokens +
                          6.0 * m.layers * m.hidden * m.seq_len * tokens)
                       .epsilon(1e-12));
}

TEST_CASE("recomputation adds executed FLOPs only", "[training][flops]") {
  const auto m = preset("llama3-8b");
  const StepFlops none = step_flops(workload(m, 2, 1, true));
  const StepFlops full = step_flops(workload(m, 2, 1, true, Recompute::full));
  const StepFlops selective = step_flops(workload(m, 2, 1, true, Recompute::selective));
  CHECK(full.model == none.model);
  CHECK(selective.model == none.model);
  // Full: every layer's forward again (a third of its model FLOPs); the head is not recomputed.
  const double tokens = 24.0 * m.seq_len;
  const double layer_model = none.model - 6.0 * m.vocab * m.hidden * tokens;
  CHECK(full.executed == Approx(none.model + layer_model / 3).epsilon(1e-12));
  // Selective: the attention core's forward again, its causal half: 2 s h per token per layer.
  CHECK(selective.executed == Approx(none.model + 2.0 * m.layers * m.hidden * m.seq_len * tokens).epsilon(1e-12));
}

}  // namespace
}  // namespace cs::work
