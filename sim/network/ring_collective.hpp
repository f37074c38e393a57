#pragma once
// Ring all-reduce as flows with step dependencies (the textbook ring, as NCCL's ring runs it
// without chunk pipelining): the n ranks of the group form a ring; the buffer is cut into n
// chunks of S/n bytes; in each of 2(n-1) steps every rank sends one chunk to its successor
// (n-1 reduce-scatter steps, then n-1 all-gather steps). A rank starts step k+1 once its own
// step-k send has been delivered and it has received its predecessor's step-k chunk.
// Uncontended, with per-hop latency alpha and bottleneck bandwidth B: 2(n-1)(alpha + S/(nB)).
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "sim/network/collective_costs.hpp"
#include "sim/network/collective_runner.hpp"
#include "sim/network/network.hpp"
#include "workloads/collective_plan.hpp"

namespace cs::net {

class RingAllReduce final : public FlowObserver {
 public:
  // ranks: the group in ring order (at least 2, distinct). bytes: the buffer size S (> 0).
  // on_done is called once, at the simulated time the last chunk is delivered.
  // `costs` add their step latency (by the class of each rank's hop) to every step and their
  // base latency to the first, and scale bytes by 1 / bandwidth_efficiency.
  RingAllReduce(Network& network, std::vector<int> ranks, double bytes,
                std::function<void()> on_done, const CollectiveCosts& costs = {});

  void start();
  bool done() const { return remaining_sends_ == 0; }
  int steps() const { return steps_; }
  // Stops every send in flight now; on_done is never called. Returns the payload bytes
  // delivered (chunks x efficiency), or -1 when it was cancelled before.
  double cancel();

  void on_flow_done(FlowId flow, uint64_t tag) override;

 private:
  void try_start(std::size_t position);
  static constexpr FlowId kNoFlow = ~FlowId{0};

  Network& network_;
  std::vector<int> ranks_;
  std::vector<RouteId> to_next_;  // path from position p to p+1
  std::vector<double> step_extra_s_;  // per position: the step latency beyond the wire
  double base_latency_s_ = 0;
  double chunk_bytes_;
  double efficiency_ = 1;
  int steps_;
  std::vector<FlowId> in_flight_;  // per position: its send now, or kNoFlow
  bool cancelled_ = false;
  std::vector<int> started_, sent_, received_;
  uint64_t remaining_sends_ = 0;
  std::function<void()> on_done_;
};



// The textbook ring as a CollectiveRunner (network.granularity "step", flow model): a ring
// all-reduce plan's every channel (chain) runs as its own RingAllReduce over the chain's
// ranks in ring order, with its part of the bytes.
class StepRingRun final : public CollectiveRunner {
 public:
  // `plan` must be a ring all_reduce plan (one stage of chains); it must outlive this.
  StepRingRun(Network& network, const work::CollectivePlan& plan);
  RunHandle start(double bytes, const CollectiveCosts& costs, std::function<void()> on_done) override;
  double cancel(RunHandle run) override;
  std::size_t active_runs() const override { return active_; }

 private:
  struct Channel {
    std::vector<int> members;  // in ring order
    double part = 0;           // its part of S
  };
  struct Instance {
    std::vector<std::unique_ptr<RingAllReduce>> rings;
    std::size_t left = 0;
    uint64_t serial = 0;
    bool active = false;
    std::function<void()> on_done;
  };
  Network& network_;
  std::vector<Channel> channels_;
  std::deque<Instance> instances_;  // never moved: rings' callbacks refer to their slot
  std::size_t active_ = 0;
};

}  // namespace cs::net
