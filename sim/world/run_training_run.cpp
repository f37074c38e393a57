#include "sim/world/run_training_run.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "sim/fleet/training_run.hpp"
#include "sim/network/comm_base.hpp"
#include "sim/report/summary.hpp"
#include "sim/scenario/input_error.hpp"
#include "sim/scenario/parse_sections.hpp"
#include "sim/scenario/quantity_range.hpp"
#include "sim/world/run.hpp"
#include "sim/world/run_checks.hpp"
#include "sim/world/run_training.hpp"
#include "workloads/training_memory.hpp"

namespace cs::world::detail {

using namespace cs::scenario;
using namespace cs::report;

using nlohmann::json;

json run_training_run(const Config& config, engine::Simulator& sim, bool record) {
  fleet::TrainingRunConfig c = config.training_run;
  c.record_timeseries = record;
  fleet::TrainingRun run(sim, std::move(c));
  run.start();
  fleet::run_until_done(sim, run, run.config().max_wall_time_s);
  return training_run_block(run.result());
}

json training_run_block(const fleet::TrainingRunResult& result) {
  json block = json::object();
  // Infinities (no failures: an infinite MTBF; no checkpoints: an infinite interval) as null.
  add_grouped_numbers(block, result.summary_numbers());
  return block;
}

json resolve_training_run_step(Config& config, const std::function<bool()>& interrupted) {
  const topo::Topology topology = build_topology(config);
  check_reachable(config, topology);
  engine::Simulator sim(config.seed);
  if (interrupted) sim.set_interrupt_check(interrupted);
  Fabric fabric = build_fabric(config, sim, topology, training_placement(config.training.workload, topology.ranks()));
  json step = run_training(config, sim, *fabric.comm);
  // A step that does not fit is a result for one step, but no run can train on it.
  if (!step.at("fits").get<bool>())
    throw InputError("workload.training.parallel",
                     "the plan does not fit in GPU memory less its headroom (" +
                         format_quantity(step.at("memory_per_gpu_bytes").get<double>(), QuantityKind::bytes) +
                         " per GPU of " + format_quantity(step.at("memory").at("usable_bytes").get<double>(), QuantityKind::bytes) +
                         " usable, " + format_quantity(config.gpu.memory_bytes, QuantityKind::bytes) +
                         " less memory_headroom): a training run needs a plan that fits",
                     "run it as a \"training\" workload to see the memory breakdown, or clustersim plan for one that fits");
  config.training_run.step_time_s = step.at("step_time_s").get<double>();
  config.training_run.tokens_per_step = step.at("flops").at("tokens_per_step").get<double>();
  step["model_checkpoint_bytes"] = work::checkpoint_bytes(config.training.workload.model, config.training.step.memory);
  scenario::detail::check_training_run_budget(config);
  return step;
}

}  // namespace cs::world::detail
