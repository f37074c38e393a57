#include "sim/serving/serving_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace cs::serving {

namespace {

constexpr double kHourS = 3600.0;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// The hour of the run a request arrived in (0 from the run's start).
std::size_t hour_of(double arrival_s) { return static_cast<std::size_t>(std::max(0.0, std::floor(arrival_s / kHourS))); }
std::size_t hour_of(const Request& r) { return hour_of(r.arrival_s); }

// A new hour (once an hour of the run, not per request: out of line).
[[gnu::noinline]] void grow_to(std::vector<uint64_t>& by_hour, std::size_t hour) { by_hour.resize(hour + 1, 0); }

inline void add_at(std::vector<uint64_t>& by_hour, std::size_t hour) {
  if (by_hour.size() <= hour) [[unlikely]] grow_to(by_hour, hour);
  ++by_hour[hour];
}

}  // namespace

ServingStats::ServingStats(const SloSpec& slo, const QuantileSketch::Options& sketch,
                           double stats_start_s, bool llm)
    : slo_(slo),
      stats_start_s_(stats_start_s),
      llm_(llm),
      latency_(sketch),
      ttft_(sketch),
      tpot_(sketch) {}

void ServingStats::on_arrival(const Request& request) {
  ++window_arrivals_;  // the time series' arrival rate: warm-up included, as the fleet sees it
  if (!counted(request)) return;
  ++arrivals_;
  add_at(arrivals_by_hour_, hour_of(request));
  unfinished_.emplace(request.id, Unfinished{request.arrival_s, -1, request.output_tokens});
}

void ServingStats::on_first_token(const Request& request) {
  Unfinished* const u = unfinished_.find(request.id);
  if (u && u->first_token_s < 0) u->first_token_s = request.first_token_s;
}

bool ServingStats::within_every_bound(double latency_s, double ttft_s, double tpot_s) const {
  // A comparison with an infinite bound (not given) holds; a NaN TPOT (no second token) too.
  return latency_s <= slo_.latency_s && (!llm_ || ttft_s <= slo_.ttft_s) && !(tpot_s > slo_.tpot_s);
}

void ServingStats::on_complete(const Request& r, double now) {
  ++finished_;  // over the whole run: what the run's cost is divided by
  if (!counted(r)) return;
  unfinished_.erase(r.id);
  ++completed_;
  if (r.attempts > 0) ++retries_;
  // The user has the answer at its last token, which a replica holding the slot longer
  // (JetStream's slot lag) reports before the request's completion.
  const double done_s = r.last_token_s >= 0 ? r.last_token_s : now;
  const double latency = done_s - r.arrival_s;
  latency_.add(latency);
  wait_sum_ += r.start_s >= 0 ? r.start_s - r.arrival_s : 0.0;
  double ttft = kNan, tpot = kNan;  // TPOT: requests with two tokens or more
  if (llm_) {
    output_tokens_ += static_cast<uint64_t>(r.output_tokens);
    ttft = r.first_token_s - r.arrival_s;
    ttft_.add(ttft);
    if (r.output_tokens > 1) {
      tpot = (done_s - r.first_token_s) / (r.output_tokens - 1);
      tpot_.add(tpot);
    }
  }
  const std::size_t hour = hour_of(r);
  add_at(finished_by_hour_, hour);
  if (within_every_bound(latency, ttft, tpot)) {
    ++met_slo_;
    add_at(met_by_hour_, hour);
  }
}

void ServingStats::on_dropped(const Request& r, DropReason reason) {
  if (!counted(r)) return;
  unfinished_.erase(r.id);
  ++dropped_[static_cast<int>(reason)];
  add_at(finished_by_hour_, hour_of(r));  // a dropped request is outside the SLO
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

SloBoundResult ServingStats::judge(double bound_s, const QuantileSketch& observed,
                                   std::vector<double> certain_misses) const {
  SloBoundResult b;
  b.given = std::isfinite(bound_s);
  b.bound_s = bound_s;
  const QuantileSketch* all = &observed;
  std::optional<QuantileSketch> with_misses;  // the lower bounds enter the judgment, not the latency summaries
  if (!certain_misses.empty()) {              // (copied only then: an exact sketch holds every sample)
    std::sort(certain_misses.begin(), certain_misses.end());  // the same sketch whatever the map's order
    with_misses.emplace(observed);
    for (const double x : certain_misses) with_misses->add(x);
    all = &*with_misses;
  }
  b.observed_s = all->count() ? all->quantile(slo_.percentile) : kNan;
  b.met = all->count() == 0 || b.observed_s <= bound_s;
  return b;
}

ServingStats::UnfinishedMisses ServingStats::unfinished_misses(double end_s) const {
  // A bound is certainly missed once its value's lower bound at the end exceeds it: the latency
  // is more than end - arrival; the TTFT is first token - arrival, or more than end - arrival
  // before the first token; the TPOT of n tokens is more than (end - first token) / (n - 1),
  // since the last token comes after the end. A request none of whose bounds is missed yet is
  // undecided (docs/serving.md).
  UnfinishedMisses out;
  unfinished_.for_each([&](uint64_t /*id*/, const Unfinished& u) {
    bool missed = false;
    if (u.arrival_s + slo_.latency_s <= end_s) {
      out.latency_s.push_back(end_s - u.arrival_s);
      missed = true;
    }
    if (llm_) {
      const bool token = u.first_token_s >= 0;
      if (token ? u.first_token_s - u.arrival_s > slo_.ttft_s : u.arrival_s + slo_.ttft_s <= end_s) {
        out.ttft_s.push_back((token ? u.first_token_s : end_s) - u.arrival_s);
        missed = true;
      }
      const double decoded_tokens = u.output_tokens - 1;
      if (token && decoded_tokens > 0 && u.first_token_s + slo_.tpot_s * decoded_tokens <= end_s) {
        out.tpot_s.push_back((end_s - u.first_token_s) / decoded_tokens);
        missed = true;
      }
    }
    if (missed) {
      add_at(out.by_hour, hour_of(u.arrival_s));
      ++out.count;
    }
  });
  return out;
}

void ServingStats::fill_hours(ServingResult& out, double elapsed_s, const std::vector<uint64_t>& missed_by_hour) const {
  const auto hours = std::max(arrivals_by_hour_.size(), static_cast<std::size_t>(std::ceil(elapsed_s / kHourS)));
  const auto at = [](const std::vector<uint64_t>& by_hour, std::size_t h) { return h < by_hour.size() ? by_hour[h] : 0; };
  out.slo_attainment_by_hour.assign(hours, kNan);
  for (std::size_t h = 0; h < hours; ++h)
    if (const uint64_t finished = at(finished_by_hour_, h) + at(missed_by_hour, h))
      out.slo_attainment_by_hour[h] = static_cast<double>(at(met_by_hour_, h)) / static_cast<double>(finished);
  const auto peak = std::max_element(arrivals_by_hour_.begin(), arrivals_by_hour_.end());  // the first of equals
  if (peak == arrivals_by_hour_.end() || *peak == 0) {
    out.peak_hour = -1;
    out.slo_attainment_peak_hour = kNan;
    return;
  }
  out.peak_hour = peak - arrivals_by_hour_.begin();
  out.slo_attainment_peak_hour = out.slo_attainment_by_hour[static_cast<std::size_t>(out.peak_hour)];
}

void ServingStats::fill(ServingResult& out, double elapsed_s) const {
  out.requests = arrivals_;
  out.completed = completed_;
  out.finished = finished_;
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
  // The SLO share: completed requests within every bound over every request whose outcome is
  // known at the end (docs/serving.md): completed, dropped, and unfinished past some bound.
  UnfinishedMisses missed = unfinished_misses(elapsed_s);
  out.missed_unfinished = missed.count;
  out.undecided_unfinished = out.in_flight >= missed.count ? out.in_flight - missed.count : 0;
  const uint64_t judged = completed_ + out.dropped + out.missed_unfinished;
  out.slo_attainment = judged ? static_cast<double>(met_slo_) / static_cast<double>(judged) : 0.0;
  out.slo_latency = judge(slo_.latency_s, latency_, std::move(missed.latency_s));
  out.latency_at_slo_percentile_s = out.slo_latency.observed_s;
  out.slo_met = completed_ > 0 && out.slo_latency.met;
  if (llm_) {
    out.slo_ttft = judge(slo_.ttft_s, ttft_, std::move(missed.ttft_s));
    out.slo_tpot = judge(slo_.tpot_s, tpot_, std::move(missed.tpot_s));
    out.slo_met = out.slo_met && out.slo_ttft.met && out.slo_tpot.met;
  }
  fill_hours(out, elapsed_s, missed.by_hour);
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
