#pragma once
// Raw traffic on the analytical model's stage fluid (stage_fluid.hpp): the flows that start
// at one time form one stage of independent transfers, one demand on the links they cross,
// which starts at that time. So a batch of flows ends together, when its busiest link (shared
// with whatever else runs) has carried its bytes: the analytical view of the traffic, not a
// flow-by-flow one (the flow model gives each flow its own completion time). Each flow takes
// the route the flow model gives it (its index is its flow key, for hashed routings).
#include <memory>
#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/network/stage_fluid.hpp"
#include "workloads/traffic.hpp"

namespace cs::net {

class FluidTraffic final : public engine::EventTarget {
 public:
  FluidTraffic(StageFluid& fluid, Network& network, const std::vector<work::FlowSpec>& flows);
  // Schedules every batch's start.
  void start();
  std::size_t flows() const { return flows_; }
  std::size_t completed() const { return completed_; }

  void on_event(uint64_t batch) override;

 private:
  struct Batch {
    double start_s = 0;
    work::CollectivePlan plan;        // one stage; each transfer's share is its bytes (S = 1)
    std::vector<uint64_t> flow;       // per transfer: its index in the traffic (flow key)
    std::unique_ptr<RoutedPlan> routed;
  };
  StageFluid& fluid_;
  engine::Simulator& sim_;
  std::vector<std::unique_ptr<Batch>> batches_;  // by start time; never move (routed refers to plan)
  std::size_t flows_ = 0, completed_ = 0;
};

}  // namespace cs::net
