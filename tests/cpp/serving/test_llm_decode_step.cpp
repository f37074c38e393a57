// A decode-only iteration's time from its context alone (IterationCost::DecodeStep, what a run
// of decode iterations is planned with) is the general rule's double to the bit, under every
// timing rule: roofline with fused or unfused attention, tensor-parallel collectives, padded
// shapes, dense slots, measured timing.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sim/serving/llm_timing.hpp"

using namespace cs::serving;

TEST_CASE("A decode step from its context alone is the general rule's time to the bit", "[serving][llm]") {
  std::vector<std::pair<std::string, LlmTimingSpec>> rules;
  rules.emplace_back("roofline", LlmTimingSpec{});
  LlmTimingSpec unfused;
  unfused.flash_attention = false;
  rules.emplace_back("unfused attention", unfused);
  LlmTimingSpec tp;
  tp.gpus = 4;
  tp.tp_allreduce.pieces = {{7e-6, 1.1e-11}, {2.3e-5, 4e-12}};
  tp.tp_allgather.pieces = {{9e-6, 2e-11}};
  rules.emplace_back("tensor parallel", tp);
  LlmTimingSpec dense = tp;
  dense.kv_layout = KvLayout::dense_slots;
  rules.emplace_back("dense slots", dense);
  LlmTimingSpec measured;
  measured.measured = {.enabled = true, .base_s = 3e-3, .per_prefill_token_s = 1e-5, .per_decode_sequence_s = 7e-5,
                       .per_context_token_s = 3.3e-8};
  rules.emplace_back("measured", measured);

  for (const auto& [name, spec] : rules) {
    const IterationCost cost(spec);
    for (const bool padded : {false, true}) {
      for (const int64_t decodes : {1, 7, 64, 255}) {
        IterationWork work;
        work.decode_sequences = decodes;
        if (padded) pad_to_compiled_shapes(work, decodes, 256);
        const IterationCost::TokenTerms terms = cost.token_terms(work);
        const IterationCost::DecodeStep step = cost.decode_step(terms);
        // Contexts along a run: each iteration adds one token per sequence.
        for (double context = 0; context < 2e6; context = context * 1.7 + static_cast<double>(decodes) + 0.5) {
          work.decode_context_tokens = context;
          INFO(name << ", " << decodes << " decodes" << (padded ? " padded" : "") << ", context " << context);
          CHECK(step.seconds(context) == cost.seconds(work, terms));
        }
      }
    }
  }
}
