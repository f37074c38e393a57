#include "sim/serving/predictive_scaling.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cs::serving {

namespace {
std::size_t season_buckets(const PredictiveSpec& spec) {
  if (!(spec.bucket_s > 0) || !(spec.season_s >= 2 * spec.bucket_s)) {
    throw std::invalid_argument("predictive: needs bucket > 0 and a season of >= 2 buckets");
  }
  return static_cast<std::size_t>(std::llround(spec.season_s / spec.bucket_s));
}
}  // namespace

PredictiveScaling::PredictiveScaling(const PredictiveSpec& spec, int min_replicas,
                                     int max_replicas, std::unique_ptr<Autoscaler> inner)
    : spec_(spec),
      min_(min_replicas),
      max_(max_replicas),
      inner_(std::move(inner)),
      model_(season_buckets(spec), spec.alpha, spec.beta, spec.gamma) {
  if (!inner_) throw std::invalid_argument("predictive: needs a reactive (inner) policy");
  if (!(spec_.target_per_replica > 0))
    throw std::invalid_argument("predictive.target_per_replica: must be > 0");
  if (!(spec_.scheduling_buffer_s >= 0))
    throw std::invalid_argument("predictive.scheduling_buffer: must be >= 0");
}

// Spreads the window's requests over the buckets it covers (uniformly), closing buckets.
void PredictiveScaling::observe(double from_s, double to_s, double rate_per_s) {
  while (from_s < to_s) {
    const double bucket_end = (static_cast<double>(model_.samples()) + 1) * spec_.bucket_s;
    const double until = std::min(to_s, bucket_end);
    bucket_requests_ += rate_per_s * (until - from_s);
    from_s = until;
    if (until >= bucket_end) {
      model_.add(bucket_requests_ / spec_.bucket_s);
      bucket_requests_ = 0;
    }
  }
}

int PredictiveScaling::forecast_replicas(double now_s) const {
  if (!model_.ready()) return 0;
  const auto last = static_cast<double>(model_.samples()) - 1;  // last closed bucket
  const auto ahead = [&](double t) {
    const double h = std::max(1.0, std::floor(t / spec_.bucket_s) - last);
    return model_.forecast(static_cast<std::size_t>(h));
  };
  const double load = std::max(ahead(now_s), ahead(now_s + spec_.scheduling_buffer_s));
  return static_cast<int>(std::ceil(std::max(0.0, load) / spec_.target_per_replica));
}

int PredictiveScaling::desired(const ScalingInput& input) {
  observe(input.now_s - input.window_s, input.now_s, input.arrival_rate_per_s);
  const int reactive = inner_->desired(input);
  return std::clamp(std::max(reactive, forecast_replicas(input.now_s)), min_, max_);
}

}  // namespace cs::serving
