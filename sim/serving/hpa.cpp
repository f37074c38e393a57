#include "sim/serving/hpa.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cmath>
#include <stdexcept>

namespace cs::serving {

namespace {

void validate_rules(const HpaScalingRules& rules, const char* field) {
  if (!(rules.stabilization_window_s >= 0)) {
    throw std::invalid_argument(std::string(field) + ".stabilizationWindowSeconds: must be >= 0");
  }
  for (const HpaScalingPolicy& p : rules.policies) {
    if (p.value <= 0 || !(p.period_s > 0)) {
      throw std::invalid_argument(std::string(field) +
                                  ".policies: value and periodSeconds must be > 0");
    }
  }
}

double longest_period(const HpaScalingRules& rules) {
  double longest = 0;
  for (const HpaScalingPolicy& p : rules.policies) longest = std::max(longest, p.period_s);
  return longest;
}

}  // namespace

HpaScalingRules default_scale_up() {
  HpaScalingRules rules;
  rules.stabilization_window_s = 0;
  rules.policies.push_back({HpaScalingPolicy::Type::percent, 100, 15});
  rules.policies.push_back({HpaScalingPolicy::Type::pods, 4, 15});
  return rules;
}

HpaScalingRules default_scale_down() {
  HpaScalingRules rules;
  rules.stabilization_window_s = 300;
  rules.policies.push_back({HpaScalingPolicy::Type::percent, 100, 15});
  return rules;
}

Hpa::Hpa(const HpaSpec& spec, int min_replicas, int max_replicas, double target)
    : spec_(spec), min_(min_replicas), max_(max_replicas), target_(target) {
  if (!(spec_.sync_period_s > 0)) throw std::invalid_argument("hpa.sync_period: must be > 0");
  if (!(spec_.tolerance >= 0)) throw std::invalid_argument("hpa.tolerance: must be >= 0");
  if (!(target_ > 0)) throw std::invalid_argument("autoscaler.target: must be > 0");
  validate_rules(spec_.scale_up, "behavior.scaleUp");
  validate_rules(spec_.scale_down, "behavior.scaleDown");
}

// Quantities in milli-units, averaged with integer division, as the metrics API and
// GetMetricUtilizationRatio do: a ratio of 2 is exactly 2.
namespace {
int64_t to_milli(double value) { return std::llround(value * 1000.0); }
}  // namespace

int Hpa::metric_proposal(int current, std::span<const PodMetric> pods) const {
  int64_t sum = 0;
  int measured = 0, ignored = 0, missing = 0;
  for (const PodMetric& p : pods) {
    if (!p.ready) ++ignored;            // Pending: ignored
    else if (!p.has_metric) ++missing;  // running without a sample yet
    else {
      sum += to_milli(p.value);
      ++measured;
    }
  }
  if (measured == 0) return current;  // "did not receive metrics for any ready pods"
  const auto target = static_cast<double>(std::max<int64_t>(1, to_milli(target_)));
  const double ratio = static_cast<double>(sum / measured) / target;
  const bool rebalance_ignored = ignored > 0 && ratio > 1.0;
  if (!rebalance_ignored && missing == 0) {
    if (std::abs(1.0 - ratio) <= spec_.tolerance) return current;
    return static_cast<int>(std::ceil(ratio * measured));
  }
  // Missing pods: the target on a scale-down, 0 on a scale-up. Pending pods: 0 on a scale-up.
  int64_t new_sum = sum;
  int counted = measured + missing;
  if (ratio < 1.0) new_sum += missing * static_cast<int64_t>(target);
  if (rebalance_ignored) counted += ignored;
  const double new_ratio = static_cast<double>(new_sum / counted) / target;
  if (std::abs(1.0 - new_ratio) <= spec_.tolerance || (ratio < 1.0 && new_ratio > 1.0) ||
      (ratio > 1.0 && new_ratio < 1.0)) {
    return current;
  }
  const int proposal = static_cast<int>(std::ceil(new_ratio * counted));
  if ((new_ratio < 1.0 && proposal > current) || (new_ratio > 1.0 && proposal < current)) {
    return current;
  }
  return proposal;
}

int Hpa::stabilize(double now, int current, int proposal) {
  int up = proposal, down = proposal;
  for (const Recommendation& r : recommendations_) {
    if (r.time_s > now - spec_.scale_up.stabilization_window_s) up = std::min(up, r.replicas);
    if (r.time_s > now - spec_.scale_down.stabilization_window_s) down = std::max(down, r.replicas);
  }
  int stabilized = current;
  if (stabilized < up) stabilized = up;
  if (stabilized > down) stabilized = down;
  recommendations_.push_back({now, proposal});
  const double keep = std::max(spec_.scale_up.stabilization_window_s,
                               spec_.scale_down.stabilization_window_s);
  while (!recommendations_.empty() && recommendations_.front().time_s <= now - keep) {
    recommendations_.pop_front();
  }
  return stabilized;
}

int Hpa::change_in_period(const std::deque<ScaleEvent>& events, double now, double period) const {
  int change = 0;
  for (const ScaleEvent& e : events) {
    if (e.time_s > now - period) change += e.change;
  }
  return change;
}

// The count one direction's policies allow now, from the count at the start of each
// policy's period (Pods: +/- value; Percent: up rounded up, down truncated, as horizontal.go).
// selectPolicy Max takes the largest change (the highest count up, the lowest down), Min the
// smallest; Disabled allows none.
int Hpa::allowed(const HpaScalingRules& rules, double now, int current, bool up) const {
  if (rules.select == HpaScalingRules::Select::disabled) return current;
  const bool highest = (rules.select == HpaScalingRules::Select::max) == up;
  int result = highest ? INT_MIN : INT_MAX;
  for (const HpaScalingPolicy& p : rules.policies) {
    const int start = current - change_in_period(up_events_, now, p.period_s) +
                      change_in_period(down_events_, now, p.period_s);
    int proposed;
    if (p.type == HpaScalingPolicy::Type::pods) {
      proposed = up ? start + p.value : start - p.value;
    } else {
      proposed = up ? static_cast<int>(std::ceil(start * (1.0 + p.value / 100.0)))
                    : static_cast<int>(start * (1.0 - p.value / 100.0));
    }
    result = highest ? std::max(result, proposed) : std::min(result, proposed);
  }
  return result;
}

int Hpa::limit_rate(double now, int current, int desired) const {
  if (desired > current) {
    const int limit = std::max(allowed(spec_.scale_up, now, current, true), current);
    return std::min(desired, std::min(max_, limit));
  }
  if (desired < current) {
    const int limit = std::min(allowed(spec_.scale_down, now, current, false), current);
    return std::max(desired, std::max(min_, limit));
  }
  return desired;
}

int Hpa::desired(const ScalingInput& input) {
  const double now = input.now_s;
  const int current = input.current_replicas;
  int out;
  if (current > max_) {
    out = max_;
  } else if (current < min_) {
    out = min_;
  } else {
    const int proposal = metric_proposal(current, input.pods);
    out = limit_rate(now, current, stabilize(now, current, proposal));
  }
  if (out > current) up_events_.push_back({now, out - current});
  if (out < current) down_events_.push_back({now, current - out});
  // Both directions' events count in either direction's periods: keep them for the longest.
  const double keep = std::max(longest_period(spec_.scale_up), longest_period(spec_.scale_down));
  while (!up_events_.empty() && up_events_.front().time_s <= now - keep) up_events_.pop_front();
  while (!down_events_.empty() && down_events_.front().time_s <= now - keep) down_events_.pop_front();
  return out;
}

}  // namespace cs::serving
