#pragma once
// Ring all-reduce as flows with step dependencies (the textbook ring, as NCCL's ring runs it
// without chunk pipelining): the n ranks of the group form a ring; the buffer is cut into n
// chunks of S/n bytes; in each of 2(n-1) steps every rank sends one chunk to its successor
// (n-1 reduce-scatter steps, then n-1 all-gather steps). A rank starts step k+1 once its own
// step-k send has been delivered and it has received its predecessor's step-k chunk.
// Uncontended, with per-hop latency alpha and bottleneck bandwidth B: 2(n-1)(alpha + S/(nB)).
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/network/collective_costs.hpp"
#include "sim/network/network.hpp"

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

  void on_flow_done(FlowId flow, uint64_t tag) override;

 private:
  void try_start(std::size_t position);

  Network& network_;
  std::vector<int> ranks_;
  std::vector<RouteId> to_next_;  // path from position p to p+1
  std::vector<double> step_extra_s_;  // per position: the step latency beyond the wire
  double base_latency_s_ = 0;
  double chunk_bytes_;
  int steps_;
  std::vector<int> started_, sent_, received_;
  uint64_t remaining_sends_ = 0;
  std::function<void()> on_done_;
};

}  // namespace cs::net
