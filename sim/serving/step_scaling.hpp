#pragma once
// AWS step scaling (Application Auto Scaling StepScalingPolicyConfiguration), as documented:
// a CloudWatch alarm per direction on the metric (averaged over the replicas with a metric,
// one datapoint per period), and step adjustments chosen by how far the metric is past the
// alarm threshold.
//
//   scale_out: alarm when the last `evaluation_periods` datapoints are >= threshold; the step
//     whose [lower_bound, upper_bound) holds (metric - threshold) applies.
//   scale_in: alarm when they are <= threshold; the step whose (lower_bound, upper_bound]
//     holds (metric - threshold) applies (bounds <= 0 there).
//   adjustment_type: ChangeInCapacity (add the adjustment), PercentChangeInCapacity (add that
//     percent of the current count, truncated toward zero but at least 1 in magnitude, then
//     at least min_adjustment_magnitude), ExactCapacity (set it).
//   cooldown: after a scale-out, a further scale-out within the cooldown is computed from the
//     count before the first (the capacity it added counts as part of the next); after a
//     scale-in, further scale-ins wait for the cooldown to end (a scale-out does not wait).
// A policy with no steps never fires. min/max clamp the result.
#include <array>
#include <limits>
#include <vector>

#include "common/enum_table.hpp"
#include "sim/serving/autoscaler.hpp"

namespace cs::serving {

enum class AdjustmentType : uint8_t { change_in_capacity, percent_change_in_capacity, exact_capacity };
// adjustment_type, as Application Auto Scaling spells it.
inline constexpr auto kAdjustmentTypeNames = std::to_array<EnumName<AdjustmentType>>({
    {"ChangeInCapacity", AdjustmentType::change_in_capacity, "add the adjustment to the count"},
    {"PercentChangeInCapacity", AdjustmentType::percent_change_in_capacity, "add that percent of the count"},
    {"ExactCapacity", AdjustmentType::exact_capacity, "set the count to the adjustment"},
});
static_assert(names_every_value<kAdjustmentTypeNames>());

struct StepAdjustment {
  double lower_bound = -std::numeric_limits<double>::infinity();  // MetricIntervalLowerBound
  double upper_bound = std::numeric_limits<double>::infinity();   // MetricIntervalUpperBound
  double adjustment = 1;                                          // ScalingAdjustment
};

struct StepPolicy {
  double threshold = 0;          // alarm threshold, in the metric's unit
  int evaluation_periods = 1;    // datapoints that must breach
  std::vector<StepAdjustment> steps;
};

struct StepScalingSpec {
  double period_s = 60;  // CloudWatch metric period
  AdjustmentType adjustment_type = AdjustmentType::change_in_capacity;
  int min_adjustment_magnitude = 0;
  double cooldown_s = 300;  // Cooldown
  StepPolicy scale_out;
  StepPolicy scale_in;
};

class StepScaling final : public Autoscaler {
 public:
  StepScaling(const StepScalingSpec& spec, int min_replicas, int max_replicas);

  double period_s() const override { return spec_.period_s; }
  int desired(const ScalingInput& input) override;

  // The count after applying `adjustment` to `capacity` (adjustment_type rules).
  int apply(int capacity, double adjustment) const;

 private:
  const StepAdjustment* step_for(const StepPolicy& policy, double diff, bool scale_out) const;

  StepScalingSpec spec_;
  int min_, max_;
  std::vector<double> datapoints_;
  double last_out_s_ = -1e300, last_in_s_ = -1e300;
  int out_base_ = 0;
};

}  // namespace cs::serving
