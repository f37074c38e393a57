#pragma once
// Drives one autoscaler over one pool: every period it measures each replica's metric over
// the window since the previous call (from the replicas' load integrals), asks the policy
// for a count and sets it on the pool.
//
// Per replica, over the window [previous call, now]: a replica ready for the whole window has
// a metric; one that became ready inside it is "missing" (its baseline is taken now); one
// still starting is pending. The fleet total counts every ready replica over the part of the
// window it was ready, plus the balancer's queue for concurrency and queue_length, and is the
// pool's routed requests per second for request_rate.
#include <memory>
#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/serving/autoscaler.hpp"
#include "sim/serving/replica_pool.hpp"

namespace cs::serving {

class ScalingLoop final : public engine::EventTarget {
 public:
  ScalingLoop(engine::Simulator& sim, ReplicaPool& pool, std::unique_ptr<Autoscaler> autoscaler,
              MetricKind metric);
  ~ScalingLoop() override;
  ScalingLoop(const ScalingLoop&) = delete;
  ScalingLoop& operator=(const ScalingLoop&) = delete;

  // First decision one period from now; the policy is primed with the pool's count.
  void start();
  void on_event(uint64_t tag) override;

  // The input of the last decision and its answer (for time series and tests).
  const ScalingInput& last_input() const { return input_; }
  int last_desired() const { return last_desired_; }
  uint64_t decisions() const { return decisions_; }
  Autoscaler& autoscaler() { return *autoscaler_; }

 private:
  void measure();

  engine::Simulator& sim_;
  ReplicaPool& pool_;
  std::unique_ptr<Autoscaler> autoscaler_;
  MetricKind metric_;
  double last_time_s_;
  uint64_t last_routed_ = 0;
  double last_queue_integral_ = 0;  // of the balancer queue's length
  std::vector<LoadIntegrals> baseline_;  // by replica id
  std::vector<bool> has_baseline_;
  std::vector<PodMetric> pods_;
  ScalingInput input_;
  int last_desired_ = 0;
  uint64_t decisions_ = 0;
  engine::EventId next_;
};

}  // namespace cs::serving
