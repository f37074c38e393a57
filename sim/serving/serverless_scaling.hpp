#pragma once
// How a serverless platform (Modal, RunPod serverless, Cloud Run) scales a pool: by requests,
// not by a periodic autoscaler, down to zero.
//
//   scale up    when a request waits at the balancer (every ready replica is full) and the
//               replicas starting cannot take the waiting requests (requests_per_replica
//               each), one more replica starts at once, up to max_replicas; its cold start
//               (the platform's container start and image pull, then the model load) is what
//               the first waiting request's latency and TTFT pay.
//   scale down  a ready replica with nothing outstanding for idle_timeout_s stops (its bill
//               ends), unless that would leave fewer than min_replicas.
// The pool bills each replica per second from its start to its stop at the serverless price
// (serving_market.hpp), so a replica's bill is its cold start + busy time + the idle window.
#include <cstdint>
#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/serving/serving_market.hpp"

namespace cs::serving {

class ReplicaPool;

class ServerlessScaling final : public engine::EventTarget {
 public:
  ServerlessScaling(engine::Simulator& sim, ReplicaPool& pool, const ServerlessSpec& spec);
  ~ServerlessScaling() override;
  ServerlessScaling(const ServerlessScaling&) = delete;
  ServerlessScaling& operator=(const ServerlessScaling&) = delete;

  // The pool's events: a request queued at the balancer, a ready replica left with nothing
  // outstanding, one taking a request.
  void on_queued();
  void on_idle(uint32_t replica);
  void on_busy(uint32_t replica);
  void on_event(uint64_t replica) override;  // an idle timeout ends

  uint64_t scale_ups() const { return scale_ups_; }
  uint64_t idle_stops() const { return idle_stops_; }

 private:
  engine::Simulator& sim_;
  ReplicaPool& pool_;
  ServerlessSpec spec_;
  std::vector<engine::EventId> idle_timer_;  // by replica id
  uint64_t scale_ups_ = 0, idle_stops_ = 0;
};

}  // namespace cs::serving
