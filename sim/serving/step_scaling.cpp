#include "sim/serving/step_scaling.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cs::serving {

StepScaling::StepScaling(const StepScalingSpec& spec, int min_replicas, int max_replicas)
    : spec_(spec), min_(min_replicas), max_(max_replicas) {
  if (!(spec_.period_s > 0)) throw std::invalid_argument("step.period: must be > 0");
  if (spec_.cooldown_s < 0) throw std::invalid_argument("step.cooldown: must be >= 0");
  if (spec_.min_adjustment_magnitude < 0)
    throw std::invalid_argument("step.min_adjustment_magnitude: must be >= 0");
  for (const StepPolicy* p : {&spec_.scale_out, &spec_.scale_in}) {
    if (p->evaluation_periods < 1)
      throw std::invalid_argument("step.evaluation_periods: must be >= 1");
    for (const StepAdjustment& s : p->steps) {
      if (!(s.lower_bound < s.upper_bound))
        throw std::invalid_argument("step.steps: lower_bound must be < upper_bound");
    }
  }
}

int StepScaling::apply(int capacity, double adjustment) const {
  switch (spec_.adjustment_type) {
    case AdjustmentType::exact_capacity: return static_cast<int>(std::lround(adjustment));
    case AdjustmentType::change_in_capacity: return capacity + static_cast<int>(std::lround(adjustment));
    case AdjustmentType::percent_change_in_capacity: {
      const double change = capacity * adjustment / 100.0;
      int whole = static_cast<int>(std::trunc(change));  // 12.7 -> 12, -6.67 -> -6
      if (whole == 0 && change != 0) whole = change > 0 ? 1 : -1;
      if (std::abs(whole) < spec_.min_adjustment_magnitude)
        whole = whole > 0 ? spec_.min_adjustment_magnitude : -spec_.min_adjustment_magnitude;
      return capacity + whole;
    }
  }
  return capacity;
}

const StepAdjustment* StepScaling::step_for(const StepPolicy& policy, double diff, bool scale_out) const {
  for (const StepAdjustment& s : policy.steps) {
    const bool inside = scale_out ? (diff >= s.lower_bound && diff < s.upper_bound)
                                  : (diff > s.lower_bound && diff <= s.upper_bound);
    if (inside) return &s;
  }
  return nullptr;
}

int StepScaling::desired(const ScalingInput& input) {
  const double now = input.now_s;
  const int current = input.current_replicas;
  const MetricMean mean = mean_metric(input.pods, [](const PodMetric&) { return true; });
  if (mean.pods == 0) return std::clamp(current, min_, max_);  // INSUFFICIENT_DATA: no action
  const double metric = mean.value;
  datapoints_.push_back(metric);
  const auto breached = [&](const StepPolicy& policy, bool above) {
    const auto n = static_cast<std::size_t>(policy.evaluation_periods);
    if (policy.steps.empty() || datapoints_.size() < n) return false;
    return std::all_of(datapoints_.end() - static_cast<std::ptrdiff_t>(n), datapoints_.end(),
                       [&](double v) { return above ? v >= policy.threshold : v <= policy.threshold; });
  };
  int want = current;
  if (breached(spec_.scale_out, true)) {
    if (const StepAdjustment* s = step_for(spec_.scale_out, metric - spec_.scale_out.threshold, true)) {
      const bool cooling = now - last_out_s_ < spec_.cooldown_s;
      const int base = cooling ? out_base_ : current;
      const int target = apply(base, s->adjustment);
      if (target > current) {
        if (!cooling) {
          out_base_ = current;
          last_out_s_ = now;
        }
        want = target;
      }
    }
  } else if (breached(spec_.scale_in, false) && now - last_in_s_ >= spec_.cooldown_s) {
    if (const StepAdjustment* s = step_for(spec_.scale_in, metric - spec_.scale_in.threshold, false)) {
      const int target = apply(current, s->adjustment);
      if (target < current) {
        want = target;
        last_in_s_ = now;
      }
    }
  }
  const std::size_t keep = static_cast<std::size_t>(
      std::max(spec_.scale_out.evaluation_periods, spec_.scale_in.evaluation_periods));
  if (datapoints_.size() > keep) datapoints_.erase(datapoints_.begin());
  return std::clamp(want, min_, max_);
}

}  // namespace cs::serving
