#pragma once
// A collective plan that runs on the simulator, on whichever network model: the flow model
// (CollectiveRun, collective_run.hpp) or the analytical model's stage fluid
// (FluidCollectiveRun, stage_fluid.hpp). Workloads drive both through this.
#include <functional>

#include "sim/network/collective_costs.hpp"

namespace cs::net {

class CollectiveRunner {
 public:
  virtual ~CollectiveRunner() = default;
  // Starts the collective of `bytes` (> 0) now; on_done is called at the simulated time its
  // last transfer is delivered. One run at a time: start again only after on_done.
  virtual void start(double bytes, const CollectiveCosts& costs, std::function<void()> on_done) = 0;
};

}  // namespace cs::net
