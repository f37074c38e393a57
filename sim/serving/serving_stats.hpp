#pragma once
// Counts and latency sketches of a serving run: what every completed or dropped request
// adds to the result, overall and per time-series window. Requests that arrived before
// `stats_start_s` are left out everywhere (a warm-up).
#include <cstdint>
#include <vector>

#include "sim/serving/quantile_sketch.hpp"
#include "sim/serving/replica_pool.hpp"
#include "sim/serving/request.hpp"
#include "sim/serving/requests_by_id.hpp"
#include "sim/serving/serving_config.hpp"
#include "sim/serving/serving_result.hpp"

namespace cs::serving {

class ServingStats {
 public:
  ServingStats(const SloSpec& slo, const QuantileSketch::Options& sketch, double stats_start_s,
               bool llm);

  void on_arrival(const Request& request);
  void on_complete(const Request& request, double now_s);
  void on_dropped(const Request& request, DropReason reason);
  // A counted request's first token came at request.first_token_s (LLM; the first call counts).
  void on_first_token(const Request& request);

  // Fills the request-level fields of `out` (counts, latencies, SLO, TTFT, TPOT).
  void fill(ServingResult& out, double elapsed_s) const;

  // The window since the last reset_window(): arrivals (warm-up included), and percentiles of
  // the latencies and TTFTs completed in it (of requests after the warm-up; from the
  // histograms: within the sketch's relative error).
  uint64_t window_arrivals() const { return window_arrivals_; }
  double window_latency_quantile(double p) const { return latency_.quantile_since(p, latency_mark_); }
  double window_ttft_quantile(double p) const { return ttft_.quantile_since(p, ttft_mark_); }
  void reset_window();

 private:
  bool counted(const Request& r) const { return r.arrival_s >= stats_start_s_; }
  static LatencySummary summarize(const QuantileSketch& s);
  // A bound judged at the percentile over the completed requests' `observed` values and
  // `certain_misses`: lower bounds, each above the bound, of unfinished requests' values.
  SloBoundResult judge(double bound_s, const QuantileSketch& observed, std::vector<double> certain_misses) const;
  // Whether a completed request was within every bound (those not given hold).
  bool within_every_bound(double latency_s, double ttft_s, double tpot_s) const;
  // A counted request not completed nor dropped yet.
  struct Unfinished {
    double arrival_s = 0;
    double first_token_s = -1;  // -1: no token yet
    int32_t output_tokens = 1;
  };
  // The unfinished requests at `end_s` already certain to miss a bound, whatever comes next.
  struct UnfinishedMisses {
    std::vector<uint64_t> by_hour;  // by the hour of arrival
    uint64_t count = 0;
    // Per bound, the lower bound of each missing request's value (latency, TTFT, TPOT; s).
    std::vector<double> latency_s, ttft_s, tpot_s;
  };
  UnfinishedMisses unfinished_misses(double end_s) const;
  void fill_hours(ServingResult& out, double elapsed_s, const std::vector<uint64_t>& missed_by_hour) const;

  SloSpec slo_;
  double stats_start_s_;
  bool llm_;
  QuantileSketch latency_, ttft_, tpot_;
  double wait_sum_ = 0;  // only its mean is reported
  QuantileSketch::Mark latency_mark_, ttft_mark_;
  uint64_t arrivals_ = 0, completed_ = 0, met_slo_ = 0, retries_ = 0;
  uint64_t finished_ = 0;  // completed, warm-up included
  uint64_t dropped_[4] = {0, 0, 0, 0};  // by DropReason
  uint64_t output_tokens_ = 0;
  uint64_t window_arrivals_ = 0;
  // By the hour of arrival: arrivals, completed or dropped, and completed within every bound.
  std::vector<uint64_t> arrivals_by_hour_, finished_by_hour_, met_by_hour_;
  RequestsById<Unfinished> unfinished_;  // counted requests in flight
};

}  // namespace cs::serving
