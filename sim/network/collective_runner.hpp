#pragma once
// A collective plan that runs on the simulator, on whichever network model: the flow model
// (CollectiveRun, collective_run.hpp), the analytical model's stage fluid (FluidCollectiveRun,
// stage_fluid.hpp), or the textbook step ring (StepRingRun, ring_collective.hpp). The
// communication layer (comm.hpp) drives them through this.
#include <cstddef>
#include <cstdint>
#include <functional>

#include "sim/network/collective_costs.hpp"

namespace cs::net {

// One run of a runner: its slot and the serial that tells it from later runs in the slot.
struct RunHandle {
  std::size_t slot = 0;
  uint64_t serial = 0;
};

class CollectiveRunner {
 public:
  virtual ~CollectiveRunner() = default;
  // Starts the collective of `bytes` (> 0, finite) now; on_done is called at the simulated
  // time its last transfer is delivered, and may start and cancel runs. Any number of runs
  // of one runner may be active at once.
  virtual RunHandle start(double bytes, const CollectiveCosts& costs, std::function<void()> on_done) = 0;
  // Stops a run now: its transfers leave the links at once and on_done is never called.
  // Returns the payload bytes it had delivered: over the plan's transfers, the bytes each had
  // moved (x protocol efficiency; a pipeline's every edge counts its bytes), so a whole run
  // delivers sum of shares x S. -1 when the run is not active.
  virtual double cancel(RunHandle run) = 0;
  virtual std::size_t active_runs() const = 0;
};

}  // namespace cs::net
