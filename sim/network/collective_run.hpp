#pragma once
// A collective plan run on the flow model: its stages one after another, each stage's
// transfers at once, sharing the fabric with whatever else runs.
//
// A pipeline (transfers with one chain id) runs as one flow over the chained route of its
// edges: every edge moves at the pipeline's single rate, and a link the pipeline crosses m
// times gives it 1/m of its share (flow_model.hpp). An independent transfer runs as its own
// flow on its rank-pair route. Every flow of a stage spends the stage's latency
// (StageLatency, collective_costs.hpp) in flight before it takes
// bandwidth, and the first stage also the collective's base latency. A stage ends when its
// last flow is delivered.
//
// Uncontended, a run takes exactly what the analytical model says (analytical_model.hpp).
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/network/collective_costs.hpp"
#include "sim/network/collective_runner.hpp"
#include "sim/network/network.hpp"
#include "workloads/collective_plan.hpp"

namespace cs::net {

class CollectiveRun final : public CollectiveRunner, public FlowObserver {
 public:
  // Registers the plan's routes once; `plan` must outlive the run.
  CollectiveRun(Network& network, const work::CollectivePlan& plan);
  CollectiveRun(const CollectiveRun&) = delete;
  CollectiveRun& operator=(const CollectiveRun&) = delete;

  // Starts the collective of `bytes` (> 0) now; on_done is called at the simulated time its
  // last transfer is delivered. One run at a time: start again only after on_done.
  void start(double bytes, const CollectiveCosts& costs, std::function<void()> on_done) override;
  bool running() const { return stage_ < stages_.size(); }
  const work::CollectivePlan& plan() const { return plan_; }

  void on_flow_done(FlowId flow, uint64_t tag) override;

 private:
  struct Flight {
    RouteId route;
    double share;
    double wire_latency_s;  // the route's own latency (0 for chained routes)
  };
  struct StageRoutes {
    std::vector<Flight> flights;  // chains first, then independent transfers
    StageLatency latency;
  };
  void start_stage(double extra_latency_s);

  Network& network_;
  const work::CollectivePlan& plan_;
  std::vector<StageRoutes> stages_;
  std::size_t stage_ = 0;
  std::size_t outstanding_ = 0;
  double bytes_ = 0;
  CollectiveCosts costs_;
  std::function<void()> on_done_;
};

}  // namespace cs::net
