#pragma once
// Internal to run.cpp and plan_search.cpp: one optimizer step of a training workload on the
// scenario's network, and the summary's "training" block.
#include <nlohmann/json.hpp>

#include "sim/compute/replica_symmetry.hpp"
#include "sim/compute/training_step.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/network/comm.hpp"
#include "sim/network/placement.hpp"
#include "sim/scenario/config.hpp"

namespace cs::world::detail {

// Where the plan's ranks run (parallel.order): the communication layer's placement.
net::Placement training_placement(const work::TrainingWorkload& w, int gpus);

// Which simulation a step gets: the symmetry shortcut or every replica (workload.one_replica:
// auto takes the shortcut where compute::one_replica_exact says it is exact).
struct ReplicaChoice {
  bool one_replica = false;
  compute::ShortcutVerdict verdict;
};
ReplicaChoice choose_replicas(const scenario::Config& config, const work::TrainingWorkload& w);

// Simulates one step of `w` (config.training's options) on `comm`, whose ranks are the plan's
// (placed by training_placement). With keep_timeline the result keeps the graph and timings.
compute::TrainingResult simulate_step(const scenario::Config& config, const work::TrainingWorkload& w, const ReplicaChoice& replicas,
                                      engine::Simulator& sim, net::Comm& comm, bool keep_timeline = false);

// The plan's keys as the summary and `clustersim plan` name them: tp, pp, dp, cp, ep, zero,
// sequence_parallel, schedule, virtual_stages, micro_batch, micro_batches, recompute.
nlohmann::json plan_keys(const work::TrainingWorkload& w);

// The contract's numbers of a step (docs/scenarios.md's training keys but `fits`): step_time_s,
// tokens_per_s, tflops_per_gpu, model_tflops_per_gpu, mfu, bubble_fraction, compute_s,
// exposed_comm_s, memory_per_gpu_bytes. The summary's block and plan search's rows start with them.
nlohmann::json step_numbers(const compute::TrainingResult& r);

// The summary's "training" block: the contract's keys, then the step and memory breakdowns,
// the plan, FLOPs and how it was simulated.
nlohmann::json training_block(const scenario::Config& config, const work::TrainingWorkload& w, const ReplicaChoice& replicas,
                              const compute::TrainingResult& r);

// Runs config.training (beside config.background) on `comm` and returns the "training" block;
// with tracing on, records the step's timeline (training_trace.hpp) on the simulator's recorder.
nlohmann::json run_training(const scenario::Config& config, engine::Simulator& sim, net::Comm& comm);

}  // namespace cs::world::detail
