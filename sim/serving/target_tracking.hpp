#pragma once
// AWS target tracking scaling (Application Auto Scaling and EC2 Auto Scaling), as its
// documentation describes it: "scales out proportionally to the metric as fast as it can, but
// scales in more gradually", through two CloudWatch alarms it creates and manages.
//
// Every metric period (1 min), the datapoint is the metric averaged over the replicas that
// count (ready for the whole period and past their instance warm-up: "the time until a newly
// launched instance can contribute to the CloudWatch metrics").
//   AlarmHigh: the last `scale_out_datapoints` (3) datapoints above the target. Then the
//     capacity becomes ceil(replicas measured * metric / target) when that is more than now.
//     Capacity still warming up thereby counts as already added, which is what AWS's
//     scale-out cooldown achieves ("the capacity added by the initiating scale-out activity
//     is calculated as part of the desired capacity for the next scale-out"): a scale-out is
//     never compounded, so no separate scale-out cooldown is modelled.
//   AlarmLow: the last `scale_in_datapoints` (15) datapoints below scale_in_threshold (0.9) of
//     the target. Then, outside the scale-in cooldown (300 s, which any scale-out ends) and
//     unless scale-in is disabled, the capacity becomes ceil(replicas measured * metric /
//     target) when that is less than now.
// The 3 / 15 datapoints and the 90% threshold are those of the alarms AWS creates (seen in
// the CloudWatch console; AWS documents the alarms but not their parameters: an estimate).
// min/max clamp the result.
#include <deque>

#include "sim/serving/autoscaler.hpp"

namespace cs::serving {

struct TargetTrackingSpec {
  double period_s = 60;                // CloudWatch metric period
  int scale_out_datapoints = 3;        // AlarmHigh evaluation periods
  int scale_in_datapoints = 15;        // AlarmLow evaluation periods
  double scale_in_threshold = 0.9;     // AlarmLow threshold, share of the target value
  double scale_in_cooldown_s = 300;    // ScaleInCooldown
  double instance_warmup_s = 300;      // EstimatedInstanceWarmup / DefaultInstanceWarmup
  bool disable_scale_in = false;       // DisableScaleIn
};

class TargetTracking final : public Autoscaler {
 public:
  // `target`: TargetValue, in the metric's unit. Throws std::invalid_argument.
  TargetTracking(const TargetTrackingSpec& spec, int min_replicas, int max_replicas, double target);

  double period_s() const override { return spec_.period_s; }
  int desired(const ScalingInput& input) override;

 private:
  TargetTrackingSpec spec_;
  int min_, max_;
  double target_;
  std::deque<double> datapoints_;
  double last_scale_in_s_ = -1e300;
};

}  // namespace cs::serving
