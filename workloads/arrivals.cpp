#include "workloads/arrivals.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string_view>

namespace cs::work {

namespace {

void require(bool ok, const char* field, const char* what) {
  if (!ok) throw std::invalid_argument(std::string(field) + ": " + what);
}

bool positive_finite(double x) { return std::isfinite(x) && x > 0; }

}  // namespace

double expected_rate_at(const ArrivalSpec& spec, double t_s) {
  switch (spec.process) {
    case ArrivalProcess::poisson: return spec.rate_per_s;
    case ArrivalProcess::diurnal: {
      const DiurnalProfile& d = spec.diurnal;
      const double phase = 2 * std::numbers::pi * (t_s - d.peak_at_s) / d.period_s;
      return spec.rate_per_s * (1 + (d.peak_to_mean - 1) * std::cos(phase));
    }
    case ArrivalProcess::bursty: return mean_rate(spec);
    case ArrivalProcess::trace: return 0;
  }
  return 0;
}

double mean_rate(const ArrivalSpec& spec) {
  switch (spec.process) {
    case ArrivalProcess::poisson:
    case ArrivalProcess::diurnal: return spec.rate_per_s;
    case ArrivalProcess::bursty: {
      const BurstProfile& b = spec.bursty;
      const double burst_share = b.burst_duration_s / (b.burst_duration_s + b.burst_interval_s);
      return spec.rate_per_s * (1 + (b.burst_factor - 1) * burst_share);
    }
    case ArrivalProcess::trace: return 0;
  }
  return 0;
}

void validate_arrivals(const ArrivalSpec& spec) {
  if (spec.process == ArrivalProcess::trace) {
    require(!spec.trace_path.empty(), "trace", "a trace needs a file path");
    require(positive_finite(spec.trace_time_scale), "time_scale", "must be a finite number > 0");
    return;
  }
  require(positive_finite(spec.rate_per_s), "rate", "must be a finite rate > 0");
  if (spec.process == ArrivalProcess::diurnal) {
    require(positive_finite(spec.diurnal.period_s), "diurnal.period", "must be > 0");
    require(spec.diurnal.peak_to_mean >= 1 && spec.diurnal.peak_to_mean <= 2,
            "diurnal.peak_to_mean", "must be in [1, 2] (the trough rate is mean * (2 - peak_to_mean))");
    require(std::isfinite(spec.diurnal.peak_at_s), "diurnal.phase", "must be finite");
  }
  if (spec.process == ArrivalProcess::bursty) {
    require(std::isfinite(spec.bursty.burst_factor) && spec.bursty.burst_factor >= 1,
            "bursty.burst_factor", "must be >= 1");
    require(positive_finite(spec.bursty.burst_duration_s), "bursty.burst_duration", "must be > 0");
    require(positive_finite(spec.bursty.burst_interval_s), "bursty.burst_interval", "must be > 0");
  }
}

// ---- TraceReader ----

TraceReader::TraceReader(std::istream& in, double time_scale) : rows_(in), time_scale_(time_scale) {
  time_col_ = rows_.column("timestamp");
  prompt_col_ = rows_.column("prompt_tokens");
  output_col_ = rows_.column("output_tokens");
  service_col_ = rows_.column("service_time");
  prefix_id_col_ = rows_.column("prefix_id");
  prefix_tokens_col_ = rows_.column("prefix_tokens");
  if (time_col_ < 0) {
    throw std::invalid_argument("trace: the header row must name a 'timestamp' column");
  }
  // A shared prefix is an id and a length: one without the other says nothing.
  if ((prefix_id_col_ >= 0) != (prefix_tokens_col_ >= 0))
    rows_.fail(std::string("a ") + (prefix_id_col_ >= 0 ? "prefix_id column needs a prefix_tokens column"
                                                          : "prefix_tokens column needs a prefix_id column") +
               " (a shared prefix is its id and its length)");
}

std::optional<TraceRecord> TraceReader::next() {
  if (!rows_.next()) return std::nullopt;
  TraceRecord r;
  r.time_s = rows_.seconds(time_col_, "timestamp") * time_scale_;
  if (r.time_s < last_time_) rows_.fail("timestamps must not decrease");
  last_time_ = r.time_s;
  // A request has a prompt and produces at least one token (as the drawn counts: clamp_tokens).
  if (prompt_col_ >= 0) r.prompt_tokens = rows_.whole(prompt_col_, "prompt_tokens", 1, kMaxTokens);
  if (output_col_ >= 0) r.output_tokens = rows_.whole(output_col_, "output_tokens", 1, kMaxTokens);
  if (service_col_ >= 0) r.service_time_s = rows_.seconds(service_col_, "service_time");
  if (prefix_id_col_ >= 0) r.prefix_id = rows_.whole(prefix_id_col_, "prefix_id", 0, (int64_t{1} << 32) - 1);
  if (prefix_tokens_col_ >= 0) r.prefix_tokens = rows_.whole(prefix_tokens_col_, "prefix_tokens", 0, kMaxTokens);
  // The prefix is part of the prompt, and no prefix (id 0) has no length.
  if (r.prefix_tokens > 0 && r.prefix_id == 0)
    rows_.fail("column prefix_tokens: " + std::to_string(r.prefix_tokens) + " tokens of no prefix (prefix_id 0)");
  if (r.prompt_tokens >= 0 && r.prefix_tokens > r.prompt_tokens)
    rows_.fail("column prefix_tokens: a prefix of " + std::to_string(r.prefix_tokens) + " tokens is longer than its prompt (" +
               std::to_string(r.prompt_tokens) + " prompt_tokens)");
  // An id names one prefix (the cache keys its blocks by id): two lengths would be two prefixes.
  if (r.prefix_id > 0) {
    const auto [seen, first] = prefixes_.try_emplace(r.prefix_id, PrefixSeen{r.prefix_tokens, rows_.line()});
    if (!first && seen->second.tokens != r.prefix_tokens)
      rows_.fail("column prefix_tokens: prefix_id " + std::to_string(r.prefix_id) + " has " +
                 std::to_string(r.prefix_tokens) + " tokens here but " + std::to_string(seen->second.tokens) +
                 " on line " + std::to_string(seen->second.line) + " (an id names one prefix)");
  }
  return r;
}

}  // namespace cs::work
