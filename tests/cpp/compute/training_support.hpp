#pragma once
// Shared by the compute tests: a small transformer, a plan around it, and a step run on the
// alpha-beta communication double with compute times set per pass (uniform stages).
#include <memory>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/compute/step_analysis.hpp"
#include "sim/compute/testing/alpha_beta_comm.hpp"
#include "topology/topology.hpp"
#include "workloads/training_graph.hpp"

namespace cs::compute::test {

// 2 layers per stage unless told; tiny shapes (the compute times are set by hand).
// A fat-tree of radix-8 switches over `nodes` NVSwitch nodes of `gpus` GPUs, one NIC each
// (NVLink 370.8 GB/s and 0.3 us per GPU; the builder's NIC and link defaults unless changed).
inline topo::TopologyParams small_fat_tree(int nodes, int gpus) {
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::fat_tree;
  p.nodes = nodes;
  p.switch_radix = 8;
  p.node.gpus = gpus;
  p.node.nics = gpus;
  p.node.gpu_bandwidth_Bps = 370.8e9;
  p.node.gpu_latency_s = 0.3e-6;
  return p;
}

inline work::TrainingWorkload small_workload(int pp, int micro_batches, work::Schedule schedule, int virtual_stages = 1,
                                             int layers = 0) {
  work::TrainingWorkload w;
  w.model = {.name = "tiny", .layers = layers > 0 ? layers : 2 * pp * virtual_stages, .hidden = 64, .heads = 4,
             .kv_heads = 4, .ffn_hidden = 256, .mlp = work::MlpKind::gelu, .seq_len = 32, .vocab = 128,
             .tied_embeddings = false, .bias = false, .learned_positions = false, .moe = {}, .source = ""};
  w.parallel.pp = pp;
  w.parallel.schedule = schedule;
  w.parallel.virtual_stages = virtual_stages;
  w.batch = {micro_batches, 1};
  return w;
}

// Seconds per compute item: `forward` per forward item of a layer, `input` / `weight` per
// backward item; embedding, head and optimizer items take no time (uniform stages).
struct PassTimes {
  double forward = 1, input = 1, weight = 1;
};

inline bool is_edge_item(const work::ComputeItem& item) {
  for (const auto& op : item.ops)
    if (op.name == "embedding" || op.name == "lm_head" || op.name == "adam") return true;
  return false;
}

inline std::vector<double> uniform_times(const work::TaskGraph& g, PassTimes t) {
  std::vector<double> s;
  for (const auto& item : g.compute_items) {
    if (is_edge_item(item) || item.ops.empty()) {
      s.push_back(0);
      continue;
    }
    switch (item.ops.front().phase) {
      case work::Phase::forward: s.push_back(t.forward); break;
      case work::Phase::backward_input: s.push_back(t.input); break;
      case work::Phase::backward_weight: s.push_back(t.weight); break;
      case work::Phase::optimizer:
      case work::Phase::host: s.push_back(0); break;
    }
  }
  return s;
}

struct StepRun {
  work::TaskGraph graph;
  std::unique_ptr<engine::Simulator> sim;
  std::unique_ptr<testing::AlphaBetaComm> comm;
  std::unique_ptr<TrainingExecutor> executor;
  StepAnalysis analysis;
};

inline std::unique_ptr<StepRun> run_step(const work::TrainingWorkload& w, const std::vector<double>& times_or_empty,
                                         PassTimes pass = {}, testing::AlphaBetaConfig comm = {},
                                         work::GraphOptions graph = {}, ExecutorOptions executor = {}) {
  auto run = std::make_unique<StepRun>();
  run->graph = work::build_training_graph(w, graph);
  run->sim = std::make_unique<engine::Simulator>(1);
  run->comm = std::make_unique<testing::AlphaBetaComm>(*run->sim, run->graph.ranks, comm);
  auto times = times_or_empty.empty() ? uniform_times(run->graph, pass) : times_or_empty;
  run->executor = std::make_unique<TrainingExecutor>(*run->sim, *run->comm, run->graph, times, executor);
  run->executor->start();
  run->sim->run();
  REQUIRE(run->executor->done());
  run->analysis = analyze_step(run->graph, *run->executor);
  return run;
}

// Every worker's step adds up: compute + optimizer + exposed + bubble = step.
inline void check_accounting(const StepAnalysis& a) {
  for (const auto& b : a.workers)
    CHECK(b.compute_s + b.optimizer_s + b.exposed_s.total() + b.bubble_s == Approx(a.step_time_s).epsilon(1e-9));
}

}  // namespace cs::compute::test
