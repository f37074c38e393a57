#pragma once
// Knative's Pod Autoscaler (KPA), as knative/serving computes it
// (pkg/autoscaler/scaling/autoscaler.go, pkg/autoscaler/config/config.go).
//
// Every tick (2 s) it observes the fleet's concurrency (or requests per second) averaged
// over a stable window (60 s) and a panic window (10% of it: 6 s), partial windows at the
// start as Knative's buckets average over the data they have. With ready = max(1, ready pods)
// and target = target * target utilization (70%):
//   desired stable = ceil(stable / target), desired panic = ceil(panic / target), each kept in
//   [floor(ready / max_scale_down_rate), ceil(max_scale_up_rate * ready)];
//   panic starts when desired panic / ready >= panic threshold (200%) and lasts until the
//   stable window has passed without crossing it; in panic the count never goes down (the
//   larger of the two, and never below the panic maximum so far);
//   with a scale-down delay the answer is the largest of that window's answers.
// Then min-scale / max-scale clamp it; a drop to zero (min 0) happens only after the desired
// count has been 0 for the scale-to-zero grace period (30 s).
// The autoscaler starts in panic mode when it starts with more than one ready pod.
#include <deque>

#include "sim/serving/autoscaler.hpp"

namespace cs::serving {

struct KpaSpec {
  double tick_s = 2;                          // Knative's tickInterval
  double stable_window_s = 60;                // stable-window
  double panic_window_percentage = 10;        // panic-window-percentage
  double panic_threshold_percentage = 200;    // panic-threshold-percentage
  double max_scale_up_rate = 1000;            // max-scale-up-rate
  double max_scale_down_rate = 2;             // max-scale-down-rate
  double target_utilization_percentage = 70;  // container-concurrency-target-percentage
  double scale_to_zero_grace_period_s = 30;   // scale-to-zero-grace-period
  double scale_down_delay_s = 0;              // scale-down-delay
};

class Kpa final : public Autoscaler {
 public:
  // `target`: per-pod concurrency or requests/s (autoscaling.knative.dev/target; Knative's
  // default is 100 concurrent requests). Throws std::invalid_argument.
  Kpa(const KpaSpec& spec, int min_replicas, int max_replicas, double target);

  double period_s() const override { return spec_.tick_s; }
  int desired(const ScalingInput& input) override;

  bool panicking() const { return panic_since_s_ >= 0; }
  double stable_value() const { return stable_; }
  double panic_value() const { return panic_; }

 private:
  struct Sample {
    double end_s;
    double duration_s;
    double value;  // fleet total over the sample
  };
  double window_average(double now, double window) const;

  KpaSpec spec_;
  int min_, max_;
  double target_;
  bool started_ = false;
  double panic_since_s_ = -1;  // last time the panic threshold was crossed (-1: not panicking)
  int max_panic_pods_ = 0;
  double zero_since_s_ = -1;
  std::deque<Sample> samples_;
  std::deque<std::pair<double, int>> delay_window_;
  double stable_ = 0, panic_ = 0;
};

}  // namespace cs::serving
