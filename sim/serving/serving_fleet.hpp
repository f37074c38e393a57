#pragma once
// A serving fleet on one Simulator: arrivals generated as the run goes, a pool of replicas
// behind a load balancer scaled by an autoscaler (or, disaggregated, a prefill pool and a
// decode pool, each with its own autoscaler, with every prompt's KV cache moved between
// them), request statistics, cost, and time series through the engine's Recorder.
//
// Time series (every timeseries_interval_s):
//   per pool, prefixed "serving." (or "serving.prefill." and "serving.decode." when
//   disaggregated): replicas_ready, replicas_starting, replicas_waiting (for capacity: a
//   reclaimed or failed replica's successor), replicas_draining, replicas_desired,
//   queue_length (balancer queue + requests queued at ready replicas), scaling_metric (the
//   fleet total the autoscaler last saw), cost_usd (the pool's, cumulative);
//   fleet-wide: serving.arrival_rate (1/s over the interval), serving.latency_p50_s / _p95_s /
//   _p99_s of the requests completed in the interval (within the sketch's relative error),
//   serving.ttft_p50_s / _p99_s (LLM), serving.total_cost_usd (cumulative, all pools).
//
// Use: construct, start(), sim.run(config.until_s), result(); or run_serving().
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/serving/kv_transfer.hpp"
#include "sim/serving/llm_replica.hpp"
#include "sim/serving/replica_pool.hpp"
#include "sim/serving/scaling_loop.hpp"
#include "sim/serving/serving_config.hpp"
#include "sim/serving/serving_result.hpp"
#include "sim/serving/serving_stats.hpp"
#include "sim/sources/arrival_source.hpp"

namespace cs::serving {

// An overloaded fleet whose requests in the system passed ServingConfig::max_in_flight: the
// run cannot finish within its memory, so it stops (the world reports it at run.max_memory).
class InFlightLimitError : public std::runtime_error {
 public:
  InFlightLimitError(uint64_t in_flight, double at_s)
      : std::runtime_error("serving: " + std::to_string(in_flight) + " requests in the system"), in_flight(in_flight),
        at_s(at_s) {}
  uint64_t in_flight;
  double at_s;  // simulated time it was reached
};

class ServingFleet final : public engine::EventTarget,
                           private RequestSink,
                           private KvTransferObserver {
 public:
  // Throws std::invalid_argument on an invalid config. Disaggregated, the KV caches move
  // through `kv_transfer` when given (it outlives the fleet: CommKvTransfer over the simulated
  // network), else through a LinkKvTransfer on config.disaggregated.link.
  ServingFleet(engine::Simulator& sim, const ServingConfig& config, KvTransfer* kv_transfer = nullptr);
  ~ServingFleet() override;
  ServingFleet(const ServingFleet&) = delete;
  ServingFleet& operator=(const ServingFleet&) = delete;

  void start();
  ServingResult result() const;

  // The unified pool, or the prefill pool when disaggregated: the spot seam lives here.
  ReplicaPool& pool() { return *pool_; }
  ReplicaPool* decode_pool() { return decode_pool_.get(); }
  ScalingLoop& scaling() { return *scaling_; }
  ScalingLoop* decode_scaling() { return decode_scaling_.get(); }
  const ServingStats& stats() const { return stats_; }
  const ServingConfig& config() const { return config_; }

  void on_event(uint64_t tag) override;

 private:
  // Completions of the prefill pool go on to the decode pool through the KV transfer.
  class PrefillSink final : public RequestSink {
   public:
    explicit PrefillSink(ServingFleet& fleet) : fleet_(fleet) {}
    void on_complete(const Request& request, uint32_t replica) override;
    void on_dropped(const Request& request, DropReason reason) override;
    void on_first_token(const Request& request) override;

   private:
    ServingFleet& fleet_;
  };

  void on_complete(const Request& request, uint32_t replica) override;
  void on_dropped(const Request& request, DropReason reason) override;
  void on_first_token(const Request& request) override;
  void on_kv_delivered(uint64_t tag) override;
  void arrive();
  void sample_timeseries();
  void sample_pool(const char* prefix, const ReplicaPool& pool, const ScalingLoop& loop);
  ReplicaFactory factory_for(const LlmReplicaSpec* llm, LlmRole role);
  PoolSummary summarize(const ReplicaPool& pool) const;

  engine::Simulator& sim_;
  ServingConfig config_;
  ServingStats stats_;
  LlmReplicaStats llm_totals_;  // outlives the pools: replicas add to it when destroyed
  PrefillSink prefill_sink_;
  sources::ArrivalSource source_;
  std::optional<sources::Arrival> next_arrival_;
  uint64_t next_id_ = 0;
  uint64_t in_flight_ = 0;  // arrived, neither completed nor dropped
  void left_system() { --in_flight_; }
  std::unique_ptr<ReplicaPool> pool_, decode_pool_;
  std::unique_ptr<ScalingLoop> scaling_, decode_scaling_;
  std::unique_ptr<LinkKvTransfer> own_kv_;
  KvTransfer* kv_ = nullptr;
  struct InTransit {
    Request request;
    uint32_t decode_replica = ReplicaPool::kNoReplica;  // picked when the prefill ended
  };
  std::vector<InTransit> in_transit_;
  std::vector<uint32_t> free_transit_;
  double last_sample_s_ = 0;
  engine::EventId arrival_event_, sample_event_;
};

// Runs one serving scenario on a fresh Simulator seeded with `seed` until config.until_s.
ServingResult run_serving(const ServingConfig& config, uint64_t seed);

}  // namespace cs::serving
