// LLM replica under vLLM for TPU's step padding: a step's GEMMs run on its tokens padded to
// the compiled shapes (tokens from 16 by powers of two, sampled rows from 8 up to max_num_seqs).
#include <catch2/catch.hpp>

#include <cstdint>
#include <utility>

#include "llm_replica_test_support.hpp"

using namespace cs::serving;
using namespace cs::serving::test;

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
