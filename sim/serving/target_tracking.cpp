#include "sim/serving/target_tracking.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cs::serving {

TargetTracking::TargetTracking(const TargetTrackingSpec& spec, int min_replicas, int max_replicas,
                               double target)
    : spec_(spec), min_(min_replicas), max_(max_replicas), target_(target) {
  if (!(spec_.period_s > 0)) throw std::invalid_argument("target_tracking.period: must be > 0");
  if (spec_.scale_out_datapoints < 1 || spec_.scale_in_datapoints < 1)
    throw std::invalid_argument("target_tracking: datapoints must be >= 1");
  if (!(spec_.scale_in_threshold > 0 && spec_.scale_in_threshold <= 1))
    throw std::invalid_argument("target_tracking.scale_in_threshold: must be in (0, 1]");
  if (spec_.scale_in_cooldown_s < 0 || spec_.instance_warmup_s < 0)
    throw std::invalid_argument("target_tracking: cooldowns and warm-up must be >= 0");
  if (!(target_ > 0)) throw std::invalid_argument("autoscaler.target: must be > 0");
}

int TargetTracking::desired(const ScalingInput& input) {
  const double now = input.now_s;
  const int current = input.current_replicas;
  const MetricMean mean = mean_metric(
      input.pods, [&](const PodMetric& p) { return now - p.launched_s >= spec_.instance_warmup_s; });
  if (mean.pods == 0) return std::clamp(current, min_, max_);  // INSUFFICIENT_DATA: no action
  const int measured = mean.pods;
  const double metric = mean.value;
  datapoints_.push_back(metric);
  const std::size_t keep = static_cast<std::size_t>(std::max(spec_.scale_out_datapoints, spec_.scale_in_datapoints));
  while (datapoints_.size() > keep) datapoints_.pop_front();

  const auto last_all = [&](int n, auto predicate) {
    if (datapoints_.size() < static_cast<std::size_t>(n)) return false;
    return std::all_of(datapoints_.end() - n, datapoints_.end(), predicate);
  };
  const int proportional = static_cast<int>(std::ceil(measured * metric / target_));
  int want = current;
  if (last_all(spec_.scale_out_datapoints, [&](double v) { return v > target_; })) {
    if (proportional > current) {
      want = proportional;
      last_scale_in_s_ = -1e300;  // a scale-out ends the scale-in cooldown
    }
  } else if (!spec_.disable_scale_in &&
             last_all(spec_.scale_in_datapoints,
                      [&](double v) { return v < spec_.scale_in_threshold * target_; }) &&
             now - last_scale_in_s_ >= spec_.scale_in_cooldown_s && proportional < current) {
    want = proportional;
    last_scale_in_s_ = now;
  }
  return std::clamp(want, min_, max_);
}

}  // namespace cs::serving
