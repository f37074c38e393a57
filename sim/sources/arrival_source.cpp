#include "sim/sources/arrival_source.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "sim/sources/diurnal_bounds.hpp"

namespace cs::sources {

ArrivalSource::ArrivalSource(engine::Simulator& sim, const work::ArrivalSpec& arrivals,
                             const work::RequestSpec& requests, DemandKind demand,
                             const std::string& name)
    : ArrivalSource(sim.random(name + "/arrivals"), sim.random(name + "/requests"), arrivals, requests, demand) {}

ArrivalSource::ArrivalSource(engine::RandomStream& times, engine::RandomStream& demands,
                             const work::ArrivalSpec& arrivals, const work::RequestSpec& requests,
                             DemandKind demand)
    : spec_(arrivals),
      requests_(requests),
      demand_(demand),
      time_rng_(times),
      demand_rng_(demands),
      service_time_(requests.service_time),
      prompt_tokens_(requests.prompt_tokens),
      output_tokens_(requests.output_tokens) {
  work::validate_arrivals(spec_);
  work::validate_request(requests_);
  if (spec_.process == work::ArrivalProcess::trace) {
    trace_file_ = std::make_unique<std::ifstream>(spec_.trace_path);
    if (!*trace_file_) throw std::invalid_argument("trace: cannot open '" + spec_.trace_path + "'");
    trace_ = std::make_unique<work::TraceReader>(*trace_file_, spec_.trace_time_scale);
  }
  if (spec_.process == work::ArrivalProcess::bursty) {
    state_end_s_ = time_rng_.exponential(spec_.bursty.burst_interval_s);
  }
}

double ArrivalSource::next_time() {
  switch (spec_.process) {
    case work::ArrivalProcess::poisson:
      return t_ + time_rng_.exponential(1.0 / spec_.rate_per_s);
    case work::ArrivalProcess::diurnal: {
      const double segment = spec_.diurnal.period_s / 96;
      double t = t_;
      while (true) {
        if (t >= segment_end_s_) {
          const double start = std::floor(t / segment) * segment;
          segment_end_s_ = start + segment;
          segment_rate_ = diurnal_majorant(spec_, start);
          segment_floor_ = diurnal_floor(spec_, start);
        }
        const double candidate = t + time_rng_.exponential(1.0 / segment_rate_);
        if (candidate >= segment_end_s_) {
          t = segment_end_s_;  // memoryless: start again from the next segment
          continue;
        }
        t = candidate;
        const double x = time_rng_.uniform() * segment_rate_;
        if (x < segment_floor_ || x < work::expected_rate_at(spec_, t)) return t;
      }
    }
    case work::ArrivalProcess::bursty: {
      double t = t_;
      while (true) {
        const double rate =
            spec_.rate_per_s * (in_burst_ ? spec_.bursty.burst_factor : 1.0);
        const double candidate = t + time_rng_.exponential(1.0 / rate);
        if (candidate < state_end_s_) return candidate;
        t = state_end_s_;
        in_burst_ = !in_burst_;
        state_end_s_ = t + time_rng_.exponential(in_burst_ ? spec_.bursty.burst_duration_s
                                                           : spec_.bursty.burst_interval_s);
      }
    }
    case work::ArrivalProcess::trace: break;
  }
  return std::numeric_limits<double>::infinity();
}

void ArrivalSource::fill_demand(Arrival& a, const work::TraceRecord* record) {
  if (demand_ == DemandKind::service_time) {
    a.service_s = record && record->service_time_s >= 0 ? record->service_time_s
                                                        : service_time_(demand_rng_);
    return;
  }
  // A trace's count when it has one, else a draw; either way rounded and clamped.
  const auto tokens = [&](int64_t from_trace, const sources::DistributionSampler& sample, int64_t max_tokens) {
    const double value = from_trace >= 0 ? static_cast<double>(from_trace) : sample(demand_rng_);
    return static_cast<int32_t>(work::clamp_tokens(value, max_tokens));
  };
  a.prompt_tokens = tokens(record ? record->prompt_tokens : -1, prompt_tokens_,
                           requests_.max_prompt_tokens);
  a.output_tokens = tokens(record ? record->output_tokens : -1, output_tokens_,
                           requests_.max_output_tokens);
  // A shared prefix: the trace's, else one of the spec's groups (drawn only when there are
  // some, so that runs without keep their random draws).
  if (record && record->prefix_id > 0) {
    a.prefix_id = static_cast<uint32_t>(record->prefix_id);
    a.prefix_tokens = static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(record->prefix_tokens, 0), a.prompt_tokens));
  } else if (!record && requests_.shared_prefix_tokens > 0) {
    a.prefix_id = 1 + static_cast<uint32_t>(demand_rng_.uniform_int(static_cast<uint64_t>(requests_.shared_prefix_groups)));
    a.prefix_tokens = static_cast<int32_t>(std::min<int64_t>(requests_.shared_prefix_tokens, requests_.max_prompt_tokens));
    a.prompt_tokens = std::max(a.prompt_tokens, a.prefix_tokens);
  }
}

std::optional<Arrival> ArrivalSource::next() {
  Arrival a;
  if (trace_) {
    const std::optional<work::TraceRecord> record = trace_->next();
    if (!record) return std::nullopt;
    a.time_s = record->time_s;
    fill_demand(a, &*record);
  } else {
    a.time_s = next_time();
    fill_demand(a, nullptr);
  }
  t_ = a.time_s;
  ++generated_;
  return a;
}

}  // namespace cs::sources
