#pragma once
// Internal to run_jobs.cpp: the slowdown of a jobs class's job from its simulated training step
// (workload.classes[i].training), the StepTimeModel the scheduler asks once per class and
// placement shape (sim/fleet/step_time.hpp).
//
// slowdown = step time on the allocation's GPUs / step time on a compact allocation, each step
// simulated on its own Simulator and network over the scenario's topology, the plan's ranks
// placed (parallel.order) on the allocation's GPUs: node by node in the allocation's order, the
// first `gpus` GPUs of each node (a node's GPUs are alike behind its NVSwitch or PCIe). The
// compact allocation is the first nodes of the cluster, whole, as many as the job needs: nodes
// of one leaf (rail group, dragonfly group) where the topology numbers them so, as every builder
// does. A class without a training workload keeps SpreadPenaltyModel's rule.
#include <functional>
#include <optional>
#include <vector>

#include "sim/jobs/step_time.hpp"
#include "sim/scenario/config.hpp"
#include "topology/topology.hpp"

namespace cs::world::detail {

class SimulatedStepModel final : public jobs::StepTimeModel {
 public:
  // `config` must outlive this; config.job_class_training has an entry per class. Every step's
  // simulator polls `interrupted` (the run's: engine::Simulator::interrupt_check; may be empty).
  SimulatedStepModel(const scenario::Config& config, std::function<bool()> interrupted);
  double slowdown(int job_class, const jobs::PlacementShape& shape, const jobs::Allocation& allocation) override;

  // The compact step time of each class (nullopt: no training workload, or not asked yet).
  const std::vector<std::optional<double>>& compact_step_s() const { return compact_s_; }

 private:
  double step_s(int job_class, const jobs::Allocation& allocation);

  const scenario::Config& config_;
  std::function<bool()> interrupted_;
  topo::Topology topology_;
  jobs::SpreadPenaltyModel penalty_;
  std::vector<std::optional<double>> compact_s_;
};

}  // namespace cs::world::detail
