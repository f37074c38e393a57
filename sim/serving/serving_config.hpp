#pragma once
// A serving run's configuration, as plain structs with SI units and defaults; the scenario
// layer fills them from workload.kind = "serving" and fleet.* (see each field's key).
//
//   arrivals      workload.arrivals      work::ArrivalSpec
//   request       workload.request       work::RequestSpec
//   replica       workload.replica       ReplicaConfig (plain server or LLM server)
//   slo           workload.slo           SloSpec
//   fleet         fleet.*                PoolConfig: autoscaler, cold_start, balancer, market
//   disaggregated workload.disaggregated prefill and decode pools (LLM only)
//   until_s       run.until; timeseries_interval_s: run.timeseries_interval
#include <cstdint>
#include <limits>

#include "sim/serving/autoscaler_spec.hpp"
#include "sim/serving/kv_transfer.hpp"
#include "sim/serving/llm_replica_spec.hpp"
#include "sim/serving/quantile_sketch_options.hpp"
#include "sim/serving/replica_pool.hpp"
#include "sim/serving/server_replica.hpp"
#include "workloads/arrivals.hpp"
#include "workloads/request_load.hpp"

namespace cs::serving {

enum class ReplicaKind : uint8_t { server, llm };

struct ReplicaConfig {
  ReplicaKind kind = ReplicaKind::server;
  ServerSpec server;   // kind == server: `concurrency`
  LlmReplicaSpec llm;  // kind == llm: `gpus`, batching, GPU and model numbers

  int gpus() const { return kind == ReplicaKind::llm ? llm.timing.gpus : server.gpus; }
};

// A request meets the SLO when its latency (and, for LLM serving, its TTFT and TPOT) are
// within these; infinity means no bound. `percentile` names the percentile held to every bound
// given: slo_met in the result holds when each one's quantile there is within it.
struct SloSpec {
  double latency_s = std::numeric_limits<double>::infinity();
  double percentile = 0.99;
  double ttft_s = std::numeric_limits<double>::infinity();
  double tpot_s = std::numeric_limits<double>::infinity();
};

struct PoolConfig {
  AutoscalerSpec autoscaler;
  PoolSpec pool;
};

// Separate prefill and decode pools (Splitwise, DistServe), each scaled by its own policy;
// the KV cache of each prompt moves from its prefill replica to a decode replica.
struct DisaggregationSpec {
  bool enabled = false;
  LlmReplicaSpec prefill_replica;  // decode replicas use ReplicaConfig::llm
  PoolConfig prefill;
  PoolConfig decode;
  KvLinkSpec link;
};

struct ServingConfig {
  work::ArrivalSpec arrivals;
  work::RequestSpec request;
  ReplicaConfig replica;
  SloSpec slo;
  PoolConfig fleet;
  DisaggregationSpec disaggregated;
  double until_s = 3600;              // arrivals stop here, and the run
  double stats_start_s = 0;           // requests arriving earlier are not counted (warm-up)
  double timeseries_interval_s = 60;  // Recorder samples; 0: none
  QuantileSketchOptions sketch;
  // Requests in the system at once (queued anywhere or being served): past it the run stops
  // with InFlightLimitError (serving_fleet.hpp). The world sets it from run.max_memory.
  uint64_t max_in_flight = std::numeric_limits<uint64_t>::max();
};

// Throws std::invalid_argument naming the field.
void validate_serving(const ServingConfig& config);

}  // namespace cs::serving
