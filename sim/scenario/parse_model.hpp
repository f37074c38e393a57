#pragma once
// Internal: workload.model, the transformer a training or serving workload runs (docs/scenarios.md:
// a `preset` whose keys the file may override, or the shape: layers, hidden, heads, kv_heads,
// ffn_hidden, mlp, seq_len, vocab, and for MoE experts, top_k).
#include <string>

#include "sim/scenario/parse_util.hpp"
#include "workloads/training_model.hpp"

namespace cs::scenario::detail {

// The model at `at` (its object), validated by work::validate_model; every error names its
// key under `at` (an unknown preset: `at`.preset, with the nearest preset's name).
work::TransformerSpec parse_transformer(const json& model, const std::string& at);

}  // namespace cs::scenario::detail
