#pragma once
// Shared by the training scenario tests: scenario documents for small training runs, and a
// step run through the whole scenario path (parse_config, run_scenario).
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/scenario/load.hpp"
#include "sim/world/run.hpp"
#include "workloads/training_flops.hpp"

namespace cs::scenario::test {

using nlohmann::json;

// A tiny transformer (2 layers per model chunk unless told).
inline json tiny_model(int layers) {
  return {{"layers", layers}, {"hidden", 64}, {"heads", 4}, {"seq_len", 32}, {"vocab", 128}, {"ffn_hidden", 256}};
}

// One node of `gpus` GPUs whose fabric costs next to nothing: 100 TB/s links (the most the
// schema allows), no latency, the wire alone
// (network.protocol "none").
inline json free_node(int gpus) {
  return {{"hardware", {{"gpu", "H100-SXM"},
                        {"node", {{"gpus", gpus}, {"fabric", "nvswitch"}, {"gpu_bandwidth", 1e14}, {"gpu_latency", 0},
                                  {"nics", 1}, {"pcie_latency", 0}}}}},
          {"topology", {{"kind", "single_node"}}},
          {"network", {{"model", "flow"}, {"protocol", "none"}}}};
}

// workload.measured giving every op of `w` no time except fc1, whose forward, input-gradient
// and weight-gradient passes take `forward`, `input` and `weight` seconds per layer and
// micro-batch: uniform stages whatever holds the embedding and the head.
inline json uniform_layer_times(const work::TrainingWorkload& w, double forward, double input, double weight) {
  json measured = json::object();
  for (work::Block b : {work::Block::embedding, work::Block::attention_in, work::Block::attention_out, work::Block::mlp,
                        work::Block::head})
    for (work::Phase ph : {work::Phase::forward, work::Phase::backward_input, work::Phase::backward_weight})
      for (const auto& op : work::block_ops(w, b, ph)) {
        const std::string phase = ph == work::Phase::forward          ? "forward"
                                  : ph == work::Phase::backward_input ? "backward_input"
                                                                      : "backward_weight";
        double t = 0;
        if (op.name == "fc1") t = ph == work::Phase::forward ? forward : ph == work::Phase::backward_input ? input : weight;
        measured[phase + "/" + std::string(op.name)] = t;
      }
  measured["optimizer/adam"] = 0;
  return measured;
}

inline json run_summary(const json& doc) { return cs::world::run_scenario(parse_config(doc)).summary; }

inline InputError scenario_error(const json& doc) {
  try {
    parse_config(doc);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no error for " << doc.dump());
  throw;  // unreachable
}

}  // namespace cs::scenario::test
