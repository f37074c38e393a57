#include "sim/serving/scheduled_scaling.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cs::serving {

ScheduledScaling::ScheduledScaling(const ScheduledSpec& spec, int min_replicas, int max_replicas,
                                   std::unique_ptr<Autoscaler> inner)
    : spec_(spec), min_(min_replicas), max_(max_replicas), inner_(std::move(inner)) {
  if (!(spec_.period_s > 0)) throw std::invalid_argument("scheduled.period: must be > 0");
  for (const ScheduledAction& a : spec_.actions) {
    if (a.min_replicas < 0 || a.max_replicas < a.min_replicas || a.recurrence_s < 0 ||
        !std::isfinite(a.at_s)) {
      throw std::invalid_argument("scheduled.actions: needs 0 <= min <= max, recurrence >= 0");
    }
  }
}

std::pair<int, int> ScheduledScaling::bounds_at(double t) const {
  double latest = -1e300;
  std::pair<int, int> bounds{min_, max_};
  for (const ScheduledAction& a : spec_.actions) {
    if (a.at_s > t) continue;
    // Its last firing at or before t.
    const double fired = a.recurrence_s > 0
                             ? a.at_s + std::floor((t - a.at_s) / a.recurrence_s) * a.recurrence_s
                             : a.at_s;
    if (fired >= latest) {  // ties: the later-listed action wins
      latest = fired;
      bounds = {a.min_replicas, a.max_replicas};
    }
  }
  return bounds;
}

int ScheduledScaling::desired(const ScalingInput& input) {
  const auto [lo, hi] = bounds_at(input.now_s);
  const int base = inner_ ? inner_->desired(input) : input.current_replicas;
  return std::clamp(base, lo, hi);
}

}  // namespace cs::serving
