#pragma once
// Internal to run.cpp: a serving workload on its fleet (cs::serving), and its summary block.
#include <nlohmann/json.hpp>

#include "sim/engine/simulator.hpp"
#include "sim/network/comm.hpp"
#include "sim/scenario/config.hpp"
#include "sim/serving/serving_result.hpp"

namespace cs::world::detail {

// Runs config.serving on `sim` until its run.until; returns the summary's "serving" block.
// With `comm` (disaggregated serving over a topology) the KV caches cross the simulated
// network: the prefill pool holds the first GPUs (max replicas x GPUs each), the decode pool
// the next. With `record`, the fleet's time series go to sim's Recorder.
nlohmann::json run_serving(const scenario::Config& config, engine::Simulator& sim, net::Comm* comm, bool record);

// docs/scenarios.md's keys (requests, completed, dropped, latency_mean_s, latency_p50_s,
// latency_p95_s, latency_p99_s, wait_mean_s, slo_attainment, replicas_mean, replicas_max,
// cost_usd), then the breakdowns nested: latency (count, mean, p50..p99, max, exact: 1 when
// the percentiles are exact), slo (its bounds, the latency at its percentile, met), ttft, tpot
// and llm (output tokens/s, preemptions) for an LLM server, request_counts (in flight at the
// end, retries), drops (by reason), cost_usd_by_market, replica_hours_by_market, fleet (ready
// replicas, reclaims and their exposure, failures, fallbacks), and pools (prefill, decode)
// with kv_bytes_transferred when disaggregated.
nlohmann::json serving_block(const serving::ServingResult& result, const serving::ServingConfig& config);

}  // namespace cs::world::detail
