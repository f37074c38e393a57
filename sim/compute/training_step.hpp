#pragma once
// One optimizer step of a training workload, simulated: builds the task graph, times its
// compute by roofline on the GPU, runs it on the simulator with communication through `comm`,
// and reports the contract's `training` summary with its breakdowns and the memory model.
//
// Comm's ranks are the plan's canonical ranks (training_placement.hpp); the placement that maps
// them to GPUs is RankLayout(plan).gpu_of_rank().
// Definitions (docs/scenarios.md): tflops_per_gpu counts executed FLOPs (recomputation included),
// model_tflops_per_gpu model FLOPs, both per GPU-second of the step; mfu is
// model_tflops_per_gpu over the GPU's dense peak for the run's precision; bubble_fraction the
// mean idle share of a stage's step spent waiting for other stages, from the timeline.
#include <memory>
#include <string>
#include <vector>

#include "sim/compute/replica_symmetry.hpp"
#include "sim/compute/roofline.hpp"
#include "sim/compute/step_analysis.hpp"
#include "workloads/training_flops.hpp"
#include "workloads/training_memory.hpp"

namespace cs::compute {

struct TrainingStepOptions {
  work::GraphOptions graph;
  ExecutorOptions executor;
  Efficiency efficiency;
  work::MemoryOptions memory;
  HostSpec host;               // CPU offload: each GPU's host link and the host's DRAM
  bool keep_timeline = false;  // keep the graph and every task's times (for a trace)
  // With graph.one_replica (mirrored): where the ranks run (RankLayout::gpu_of_rank) and the
  // nodes' shape, to leave out other replicas' traffic that cannot change the step
  // (isolated_mirrored_groups). Empty: every mirrored transfer is issued.
  std::vector<int> gpu_of_rank;
  NodeShape node;
};

// Roofline seconds of one op kind per step on one GPU (mean over workers).
struct OpSeconds {
  std::string phase;  // forward, backward_input, backward_weight, optimizer, host
  std::string name;   // qkv, attention, fc1, ...
  double seconds = 0;
};

struct TrainingResult {
  // The contract's summary keys.
  double step_time_s = 0;
  double tokens_per_s = 0;
  double tflops_per_gpu = 0;
  double model_tflops_per_gpu = 0;
  double mfu = 0;
  double bubble_fraction = 0;
  double compute_s = 0;        // per GPU (mean): forward, backward, recompute
  double exposed_comm_s = 0;   // per GPU (mean): exposed_by_group.total()
  double memory_per_gpu_bytes = 0;  // the fullest GPU's
  double host_memory_per_gpu_bytes = 0;  // CPU offload: host memory a GPU's states take
  bool fits = false;
  // Step breakdown (means per GPU): compute_s + optimizer_s + exposed_comm_s + bubble_s =
  // step_time_s.
  double optimizer_s = 0;
  double bubble_s = 0;
  double slowdown_s = 0;       // of compute and optimizer: lost to overlapping communication
  ExposedComm exposed_by_group;
  std::vector<WorkerBreakdown> workers;
  std::vector<OpSeconds> ops;
  work::MemoryReport memory;
  work::StepFlops flops;
  double peak_flops = 0;       // dense, the run's precision
  std::size_t tasks = 0;
  uint64_t events = 0;         // simulator events the step took
  // With keep_timeline: the graph and each task's times (see training_trace.hpp).
  std::shared_ptr<const work::TaskGraph> graph;
  std::vector<TaskTiming> timings;
};

// Compute seconds of each of graph.compute_items on `roofline`.
std::vector<double> item_seconds(const work::TaskGraph& graph, const Roofline& roofline);

// The figures that follow from a step's times (step_time_s, compute_s, optimizer_s, bubble_s,
// slowdown_s, exposed_by_group) and the workload: FLOPs, tokens/s, TFLOP/s, MFU, the bubble
// fraction, exposed_comm_s and the memory model.
void derive_step_figures(TrainingResult& r, const work::TrainingWorkload& w, const GpuSpec& gpu,
                         const TrainingStepOptions& options);

// `w` must be valid (work::validate). Runs `sim` until the step is done (other models on the
// simulator keep running alongside). One step per Simulator and Comm: a second step on the same
// ones is not supported (sim/scenario/plan_search.cpp builds a pair per step). Throws work::TrainingError("precision") when the GPU
// lacks the precision.
TrainingResult simulate_training_step(engine::Simulator& sim, net::Comm& comm, const work::TrainingWorkload& w,
                                      const GpuSpec& gpu, const TrainingStepOptions& options = {});

}  // namespace cs::compute
