#include "sim/world/jobs_step_time.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/network/comm_base.hpp"
#include "sim/world/run.hpp"
#include "sim/world/run_training.hpp"
#include "workloads/training_placement.hpp"

namespace cs::world::detail {

using namespace cs::scenario;
namespace {

std::vector<double> penalties(const Config& config) {
  std::vector<double> p;
  for (const jobs::JobClass& k : config.jobs.classes) p.push_back(k.spread_penalty);
  return p;
}

}  // namespace

SimulatedStepModel::SimulatedStepModel(const Config& config, std::function<bool()> interrupted)
    : config_(config), interrupted_(std::move(interrupted)), topology_(build_topology(config)), penalty_(penalties(config)),
      compact_s_(config.jobs.classes.size()) {}

double SimulatedStepModel::step_s(int job_class, const jobs::Allocation& allocation) {
  // The step as a "training" scenario on these GPUs: the file's hardware, topology and network.
  Config step = config_;
  step.workload = WorkloadKind::training;
  step.training = *config_.job_class_training[std::size_t(job_class)];
  const work::TrainingWorkload& w = step.training.workload;
  const int per_node = topology_.gpus_per_node();
  std::vector<int> gpus;  // the allocation's GPUs, node by node
  for (const jobs::NodeShare& share : allocation)
    for (int g = 0; g < share.gpus; ++g) gpus.push_back(share.node * per_node + g);
  std::vector<int> gpu_of_rank = work::RankLayout(w.parallel).gpu_of_rank();
  if (gpu_of_rank.size() != gpus.size())
    throw std::logic_error("SimulatedStepModel: the allocation does not hold the plan's GPUs");
  for (int& g : gpu_of_rank) g = gpus[std::size_t(g)];
  engine::Simulator sim(config_.seed);
  if (interrupted_) sim.set_interrupt_check(interrupted_);
  Fabric fabric = build_fabric(step, sim, topology_, net::Placement(std::move(gpu_of_rank), topology_.ranks()));
  return simulate_step(step, w, choose_replicas(step, w), sim, *fabric.comm).step_time_s;
}

double SimulatedStepModel::slowdown(int job_class, const jobs::PlacementShape& shape,
                                    const jobs::Allocation& allocation) {
  if (job_class < 0 || !config_.job_class_training[std::size_t(job_class)])
    return penalty_.slowdown(job_class, shape, allocation);
  std::optional<double>& compact = compact_s_[std::size_t(job_class)];
  if (!compact) {
    jobs::Allocation first;
    const int per_node = topology_.gpus_per_node();
    for (int left = shape.gpus, node = 0; left > 0; left -= per_node, ++node)
      first.push_back({node, std::min(left, per_node)});
    compact = step_s(job_class, first);
  }
  return step_s(job_class, allocation) / *compact;
}

}  // namespace cs::world::detail
