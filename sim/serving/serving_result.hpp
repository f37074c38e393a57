#pragma once
// What a serving run reports. The first block is docs/scenarios.md's `serving` summary; the rest
// are breakdowns. Percentiles are nearest-rank over the counted requests: exact up to
// QuantileSketch::Options::exact_limit requests, within its relative_error beyond
// (percentiles_exact says which).
#include <cstdint>
#include <vector>

#include "sim/fleet/market.hpp"
#include "sim/fleet/money.hpp"

namespace cs::serving {

struct LatencySummary {
  uint64_t count = 0;
  double mean_s = 0, p50_s = 0, p90_s = 0, p95_s = 0, p99_s = 0, max_s = 0;
};

// One bound of the SLO (latency, TTFT or TPOT) judged at the SLO's percentile.
struct SloBoundResult {
  bool given = false;      // a bound not given is not judged (and holds)
  double bound_s = 0;      // infinity when not given
  double observed_s = 0;   // the quantile at the percentile; NaN when nothing was observed
  bool met = false;        // observed_s <= bound_s, or nothing to observe (TPOT of 1-token requests)
};

struct PoolSummary {
  double replicas_mean = 0;  // billed replicas (starting, ready or draining), time-weighted
  double replicas_max = 0;
  double ready_mean = 0;     // ready replicas, time-weighted
  fleet::PerMarket<double> replica_hours;  // billed, by market
  fleet::PerMarket<double> cost_usd_by_market;  // replica-hours x the market's price
  double cost_usd = 0;       // every market
  fleet::Money money;        // cost_usd by market or by term of ownership
  uint64_t reclaims = 0;     // spot replicas given a reclaim notice
  double reclaim_exposure_hours = 0;  // spot replica-hours exposed to reclaims (no notice yet)
  uint64_t failures = 0;     // replicas whose instance failed
  uint64_t fallbacks = 0;    // reclaimed spot capacity bought on demand instead
};

struct ServingResult {
  // ---- summary keys (docs/scenarios.md) ----
  uint64_t requests = 0;   // arrived (after stats_start)
  uint64_t completed = 0;
  uint64_t dropped = 0;
  double latency_mean_s = 0, latency_p50_s = 0, latency_p95_s = 0, latency_p99_s = 0;
  double wait_mean_s = 0;       // arrival to first service (slot or batch)
  // Requests within every bound / (completed + dropped + missed_unfinished).
  double slo_attainment = 0;
  double replicas_mean = 0;     // billed replicas, time-weighted (all pools)
  double replicas_max = 0;
  double cost_usd = 0;
  fleet::Money money;           // all pools
  double tokens_out = 0;        // output tokens produced over the whole run (LLM)
  uint64_t finished = 0;        // requests completed over the whole run, warm-up included
  // ---- LLM serving ----
  bool llm = false;
  LatencySummary ttft;  // time to first token
  LatencySummary tpot;  // time per output token after the first (requests with >= 2 tokens)
  double output_tokens_per_s = 0;
  uint64_t preemptions = 0;
  // ---- breakdowns ----
  LatencySummary latency;
  bool slo_met = false;             // some request completed and every bound given holds
  double latency_at_slo_percentile_s = 0;
  SloBoundResult slo_latency, slo_ttft, slo_tpot;  // TTFT and TPOT: LLM serving only
  // slo_attainment of the requests that arrived in each hour of the run (hour i: [i h, (i+1) h));
  // NaN for an hour in which no counted request completed, was dropped or missed unfinished.
  std::vector<double> slo_attainment_by_hour;
  int64_t peak_hour = -1;           // the hour with the most arrivals (the first of equals); -1: none
  double slo_attainment_peak_hour = 0;  // NaN when there was no arrival
  uint64_t in_flight = 0;           // arrived, neither completed nor dropped at the end
  uint64_t missed_unfinished = 0;   // of those, already past some bound at the end (docs/serving.md)
  uint64_t undecided_unfinished = 0;  // of those, within every bound so far: not judged
  uint64_t dropped_queue_full = 0, dropped_timeout = 0, dropped_lost = 0, dropped_too_large = 0;
  uint64_t retries = 0;             // completed requests that were lost once and sent again
  bool percentiles_exact = true;
  PoolSummary pool;                 // unified pool, or prefill pool when disaggregated
  PoolSummary decode_pool;          // disaggregated only
  double kv_bytes_transferred = 0;  // disaggregated only
  double sim_time_s = 0;
  uint64_t events = 0;
};

}  // namespace cs::serving
