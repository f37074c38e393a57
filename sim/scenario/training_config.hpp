#pragma once
// The training workload of a scenario (workload.kind "training"), typed: the workload as data
// (model, parallel plan, batch, precision, recomputation) and how its step is simulated
// (efficiencies, measured op times, the compute slowdown share, gradient bytes, the symmetry
// shortcut). Filled by parse_training.cpp; run by run_training.cpp.
#include <cstdint>

#include "sim/compute/training_step.hpp"
#include "workloads/training_plan.hpp"

namespace cs::scenario {

// workload.one_replica: simulate one (expert-)data-parallel replica and mirror the others'
// traffic (the symmetry shortcut), all of them, or decide (auto: the shortcut where it is exact,
// compute/replica_symmetry.hpp).
enum class ReplicaMode : uint8_t { automatic, one, all };

struct TrainingConfig {
  work::TrainingWorkload workload;
  // parallel.allow_tp_across_nodes: tensor parallelism may span nodes (refused by default).
  bool allow_tp_across_nodes = false;
  ReplicaMode replicas = ReplicaMode::automatic;
  // graph (bucket size, gradient bytes, overlapped gathers), executor (comm_compute_share),
  // efficiency (roofline overrides and measured times), memory (framework overhead, flash
  // attention), host (CPU offload). keep_timeline is set by the runner when a trace is asked for.
  compute::TrainingStepOptions step;
};

}  // namespace cs::scenario
