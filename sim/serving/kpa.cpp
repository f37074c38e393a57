#include "sim/serving/kpa.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cs::serving {

Kpa::Kpa(const KpaSpec& spec, int min_replicas, int max_replicas, double target)
    : spec_(spec), min_(min_replicas), max_(max_replicas), target_(target) {
  const auto require = [](bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(what);
  };
  require(spec_.tick_s > 0, "kpa.tick: must be > 0");
  require(spec_.stable_window_s >= spec_.tick_s, "kpa.stable_window: must be >= the tick");
  require(spec_.panic_window_percentage > 0 && spec_.panic_window_percentage <= 100,
          "kpa.panic_window_percentage: must be in (0, 100]");
  require(spec_.panic_threshold_percentage > 100, "kpa.panic_threshold_percentage: must be > 100");
  require(spec_.max_scale_up_rate > 1, "kpa.max_scale_up_rate: must be > 1");
  require(spec_.max_scale_down_rate > 1, "kpa.max_scale_down_rate: must be > 1");
  require(spec_.target_utilization_percentage > 0 && spec_.target_utilization_percentage <= 100,
          "kpa.target_utilization_percentage: must be in (0, 100]");
  require(spec_.scale_to_zero_grace_period_s > 0, "kpa.scale_to_zero_grace_period: must be > 0");
  require(spec_.scale_down_delay_s >= 0, "kpa.scale_down_delay: must be >= 0");
  require(target_ > 0, "autoscaler.target: must be > 0");
}

// Average of the fleet total over the last `window` seconds (over less when less is known).
double Kpa::window_average(double now, double window) const {
  double weighted = 0, covered = 0;
  for (auto it = samples_.rbegin(); it != samples_.rend(); ++it) {
    const double start = it->end_s - it->duration_s;
    const double from = std::max(start, now - window);
    if (from >= it->end_s) break;
    weighted += it->value * (it->end_s - from);
    covered += it->end_s - from;
  }
  return covered > 0 ? weighted / covered : 0.0;
}

int Kpa::desired(const ScalingInput& input) {
  const double now = input.now_s;
  if (input.window_s > 0) samples_.push_back({now, input.window_s, input.fleet_total});
  while (!samples_.empty() && samples_.front().end_s <= now - spec_.stable_window_s) {
    samples_.pop_front();
  }
  const double ready = std::max(1, input.ready_replicas);
  if (!started_) {
    started_ = true;
    if (input.ready_replicas > 1) {  // "We always start in the panic mode, if ... over 1 pod"
      panic_since_s_ = now;
      max_panic_pods_ = input.ready_replicas;
    }
  }
  const double panic_window = spec_.stable_window_s * spec_.panic_window_percentage / 100.0;
  stable_ = window_average(now, spec_.stable_window_s);
  panic_ = window_average(now, panic_window);
  const double target = target_ * spec_.target_utilization_percentage / 100.0;

  const double max_up = std::ceil(spec_.max_scale_up_rate * ready);
  const double max_down = std::floor(ready / spec_.max_scale_down_rate);
  const double stable_pods = std::ceil(stable_ / target);
  const double panic_pods = std::ceil(panic_ / target);
  const int desired_stable = static_cast<int>(std::min(std::max(stable_pods, max_down), max_up));
  const int desired_panic = static_cast<int>(std::min(std::max(panic_pods, max_down), max_up));

  const bool over_threshold = panic_pods / ready >= spec_.panic_threshold_percentage / 100.0;
  if (over_threshold) {
    panic_since_s_ = now;  // start, or extend, panic mode
  } else if (panic_since_s_ >= 0 && panic_since_s_ + spec_.stable_window_s < now) {
    panic_since_s_ = -1;  // the surge has made its way into the stable window
    max_panic_pods_ = 0;
  }
  int want = desired_stable;
  if (panic_since_s_ >= 0) {
    want = std::max(want, desired_panic);
    max_panic_pods_ = std::max(max_panic_pods_, want);  // no scale-down while panicking
    want = max_panic_pods_;
  }
  if (spec_.scale_down_delay_s > 0) {
    delay_window_.emplace_back(now, want);
    while (delay_window_.front().first <= now - spec_.scale_down_delay_s) delay_window_.pop_front();
    for (const auto& [t, pods] : delay_window_) want = std::max(want, pods);
  }
  // Scale to zero only after the grace period at zero.
  if (want == 0) {
    if (zero_since_s_ < 0) zero_since_s_ = now;
    if (min_ > 0 || now - zero_since_s_ < spec_.scale_to_zero_grace_period_s) want = 1;
  } else {
    zero_since_s_ = -1;
  }
  return std::clamp(want, min_, max_);
}

}  // namespace cs::serving
