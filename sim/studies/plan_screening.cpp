#include "sim/studies/plan_screening.hpp"

#include <algorithm>

#include "sim/compute/alone_time_comm.hpp"
#include "sim/compute/step_bound.hpp"
#include "sim/compute/step_extrapolation.hpp"
#include "sim/network/comm.hpp"
#include "sim/scenario/training_gpu.hpp"
#include "sim/world/run.hpp"
#include "sim/world/run_training.hpp"
#include "topology/topology.hpp"
#include "workloads/training_placement.hpp"

namespace cs::studies {

using nlohmann::json;

compute::TrainingStepOptions screening_options(const scenario::Config& config) {
  compute::TrainingStepOptions options = config.training.step;
  options.graph.one_replica = true;
  options.graph.mirror_replica_traffic = false;
  return options;
}

json plan_row(const work::TrainingWorkload& w, const compute::TrainingResult& r, const char* simulation) {
  json row = world::detail::step_numbers(r);
  row["simulation"] = simulation;
  row.update(world::detail::plan_keys(w));
  return row;
}

struct PlanScreening::Fabric {
  Fabric(const scenario::Config& config, const topo::Topology& topology, const work::TrainingWorkload& w)
      : sim(config.seed),
        fabric(world::build_fabric(config, sim, topology, world::detail::training_placement(w, topology.ranks()))),
        estimates(sim, *fabric.comm) {}
  engine::Simulator sim;
  world::Fabric fabric;
  compute::AloneTimeComm estimates;  // the bound's transfer times (it never starts one)
};

PlanScreening::PlanScreening(const scenario::Config& config, const topo::Topology& topology,
                             const work::TrainingWorkload& placed)
    : config_(config), fabric_(std::make_unique<Fabric>(config, topology, placed)) {}

PlanScreening::~PlanScreening() = default;

json PlanScreening::bound(const work::TrainingWorkload& w) {
  const compute::GpuSpec gpu = scenario::detail::gpu_spec(config_.gpu);
  const compute::TrainingStepOptions options = screening_options(config_);
  const compute::Roofline roofline(gpu, w.precision, options.efficiency, options.host);
  // A long step's graph at its first extrapolation point: the same warm-up and drain, shorter.
  const auto points = compute::extrapolation_points(w);
  const work::TaskGraph graph =
      work::build_training_graph(points ? compute::with_micro_batches(w, points->a) : w, options.graph);
  const compute::StepBound b = compute::step_time_lower_bound(
      graph, compute::item_seconds(graph, roofline), work::micro_batches(w),
      compute::comm_item_seconds(graph, fabric_->estimates, options.executor.nccl_algorithms));
  compute::TrainingResult r;
  r.step_time_s = b.step_time_s;
  r.compute_s = b.compute_s;
  r.optimizer_s = b.optimizer_s;
  r.bubble_s = std::max(0.0, b.step_time_s - b.compute_s - b.optimizer_s);
  compute::derive_step_figures(r, w, gpu, options);
  json row = plan_row(w, r, "bound");
  row["screening_tokens_per_s"] = nullptr;
  return row;
}

json PlanScreening::screen(const work::TrainingWorkload& w, const std::function<bool()>& interrupted) {
  const compute::GpuSpec gpu = scenario::detail::gpu_spec(config_.gpu);
  const compute::TrainingStepOptions options = screening_options(config_);
  // Each simulated step on its own Simulator and screening layer (a step's figures are its
  // own run's).
  const auto step = [&](const work::TrainingWorkload& at) {
    engine::Simulator sim(config_.seed);
    if (interrupted) sim.set_interrupt_check(interrupted);
    sim.poll_interrupt();  // a step may take fewer events than one poll
    compute::AloneTimeComm comm(sim, *fabric_->fabric.comm);
    return compute::simulate_training_step(sim, comm, at, gpu, options);
  };
  compute::TrainingResult r;
  try {
    if (const auto points = compute::extrapolation_points(w))
      r = compute::extrapolate_step(w, *points, step(compute::with_micro_batches(w, points->a)),
                                    step(compute::with_micro_batches(w, points->b)), gpu, options);
    else
      r = step(w);
  } catch (const net::CommError& e) {
    throw world::detail::input_error(e, "workload");
  }
  json row = plan_row(w, r, "screening");
  row["screening_tokens_per_s"] = r.tokens_per_s;
  return row;
}

}  // namespace cs::studies
