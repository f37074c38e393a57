#include "sim/serving/serving_stats.hpp"

namespace cs::serving {

ServingStats::ServingStats(const SloSpec& slo, const QuantileSketch::Options& sketch,
                           double stats_start_s, bool llm)
    : slo_(slo),
      stats_start_s_(stats_start_s),
      llm_(llm),
      latency_(sketch),
      ttft_(sketch),
      tpot_(sketch) {}

void ServingStats::on_arrival(const Request& request) {
  if (!counted(request)) return;
  ++arrivals_;
  ++window_arrivals_;
}

void ServingStats::on_complete(const Request& r, double now) {
  if (!counted(r)) return;
  ++completed_;
  if (r.attempts > 0) ++retries_;
  const double latency = now - r.arrival_s;
  latency_.add(latency);
  wait_sum_ += r.start_s >= 0 ? r.start_s - r.arrival_s : 0.0;
  bool met = latency <= slo_.latency_s;
  if (llm_) {
    output_tokens_ += static_cast<uint64_t>(r.output_tokens);
    const double ttft = r.first_token_s - r.arrival_s;
    ttft_.add(ttft);
    met = met && ttft <= slo_.ttft_s;
    if (r.output_tokens > 1) {
      const double tpot = (now - r.first_token_s) / (r.output_tokens - 1);
      tpot_.add(tpot);
      met = met && tpot <= slo_.tpot_s;
    }
  }
  if (met) ++met_slo_;
}

void ServingStats::on_dropped(const Request& r, DropReason reason) {
  if (!counted(r)) return;
  ++dropped_[static_cast<int>(reason)];
}

void ServingStats::reset_window() {
  window_arrivals_ = 0;
  latency_mark_ = latency_.mark();
  if (llm_) ttft_mark_ = ttft_.mark();
}

LatencySummary ServingStats::summarize(const QuantileSketch& s) {
  LatencySummary out;
  out.count = s.count();
  out.mean_s = s.mean();
  out.p50_s = s.quantile(0.50);
  out.p90_s = s.quantile(0.90);
  out.p95_s = s.quantile(0.95);
  out.p99_s = s.quantile(0.99);
  out.max_s = s.max();
  return out;
}

void ServingStats::fill(ServingResult& out, double elapsed_s) const {
  out.requests = arrivals_;
  out.completed = completed_;
  out.dropped_queue_full = dropped_[static_cast<int>(DropReason::queue_full)];
  out.dropped_timeout = dropped_[static_cast<int>(DropReason::timeout)];
  out.dropped_lost = dropped_[static_cast<int>(DropReason::lost)];
  out.dropped_too_large = dropped_[static_cast<int>(DropReason::too_large)];
  out.dropped = out.dropped_queue_full + out.dropped_timeout + out.dropped_lost + out.dropped_too_large;
  out.in_flight = arrivals_ >= completed_ + out.dropped ? arrivals_ - completed_ - out.dropped : 0;
  out.retries = retries_;
  out.latency = summarize(latency_);
  out.latency_mean_s = out.latency.mean_s;
  out.latency_p50_s = out.latency.p50_s;
  out.latency_p95_s = out.latency.p95_s;
  out.latency_p99_s = out.latency.p99_s;
  out.wait_mean_s = completed_ ? wait_sum_ / static_cast<double>(completed_) : 0.0;
  const uint64_t finished = completed_ + out.dropped;
  out.slo_attainment = finished ? static_cast<double>(met_slo_) / static_cast<double>(finished) : 0.0;
  out.latency_at_slo_percentile_s = latency_.quantile(slo_.percentile);
  out.slo_met = completed_ > 0 && out.latency_at_slo_percentile_s <= slo_.latency_s;
  out.percentiles_exact = latency_.exact();
  out.llm = llm_;
  if (llm_) {
    out.ttft = summarize(ttft_);
    out.tpot = summarize(tpot_);
    const double span = elapsed_s - stats_start_s_;
    out.output_tokens_per_s = span > 0 ? static_cast<double>(output_tokens_) / span : 0.0;
  }
}

}  // namespace cs::serving
