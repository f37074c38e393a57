#pragma once
// Kubernetes' HorizontalPodAutoscaler (autoscaling/v2), as its controller computes it
// (pkg/controller/podautoscaler: replica_calculator.go, horizontal.go) and its documentation
// describes it (kubernetes.io: "Horizontal Pod Autoscaling", algorithm details and
// configurable scaling behavior).
//
// Every sync period (--horizontal-pod-autoscaler-sync-period, 15 s):
// 1. If the current count is above maxReplicas (below minReplicas) the answer is max (min).
// 2. Otherwise the metric proposal (metric_proposal()): usage ratio = average metric over
//    the pods with a metric / target (in milli-units with integer averaging, as Kubernetes
//    quantities are); with no unready or missing pods, ratio within the
//    tolerance (0.1) of 1 keeps the count, else ceil(ratio * ready pods). Pending pods are
//    ignored, and on a scale-up counted as using 0 of the metric; ready pods without a
//    metric count as using the target on a scale-down and 0 on a scale-up; if that changes
//    the direction or brings the ratio within tolerance, the count is kept; else
//    ceil(new ratio * pods counted). No pod with a metric: no change.
// 3. Stabilization: the proposal is remembered; the answer is moved up to the lowest
//    proposal of the scale-up window (default 0 s) and down to the highest of the
//    scale-down window (default 300 s).
// 4. Rate policies per direction: the replicas the period's policies allow from the count at
//    the start of each policy's period (Pods: +/- value; Percent: * (1 +/- value/100),
//    rounded up for scale-up, down for scale-down), the most permissive (selectPolicy Max,
//    default) or least (Min), or none (Disabled); then min/max.
//    Defaults: scale-up Percent 100 and Pods 4 per 15 s (Max); scale-down Percent 100 per
//    15 s.
#include <array>
#include <deque>
#include <vector>

#include "common/enum_table.hpp"
#include "sim/serving/autoscaler.hpp"

namespace cs::serving {

struct HpaScalingPolicy {
  enum class Type : uint8_t { pods, percent };
  Type type = Type::percent;
  int value = 100;        // pods, or percent
  double period_s = 15;   // periodSeconds
};
// A behavior policy's type, as Kubernetes spells it.
inline constexpr auto kHpaPolicyTypeNames = std::to_array<EnumName<HpaScalingPolicy::Type>>({
    {"Pods", HpaScalingPolicy::Type::pods, "at most `value` replicas per period"},
    {"Percent", HpaScalingPolicy::Type::percent, "at most `value` percent of the replicas per period"},
});
static_assert(names_every_value<kHpaPolicyTypeNames>());

struct HpaScalingRules {
  enum class Select : uint8_t { max, min, disabled };
  double stabilization_window_s = 0;  // stabilizationWindowSeconds
  Select select = Select::max;        // selectPolicy
  std::vector<HpaScalingPolicy> policies;
};
// selectPolicy, as Kubernetes spells it.
inline constexpr auto kHpaSelectNames = std::to_array<EnumName<HpaScalingRules::Select>>({
    {"Max", HpaScalingRules::Select::max, "the most permissive of the policies"},
    {"Min", HpaScalingRules::Select::min, "the least permissive of the policies"},
    {"Disabled", HpaScalingRules::Select::disabled, "no scaling in this direction"},
});
static_assert(names_every_value<kHpaSelectNames>());

// Kubernetes' defaults (behavior left unset).
HpaScalingRules default_scale_up();    // 0 s window; Percent 100 and Pods 4 per 15 s; Max
HpaScalingRules default_scale_down();  // 300 s window; Percent 100 per 15 s

struct HpaSpec {
  double sync_period_s = 15;  // --horizontal-pod-autoscaler-sync-period
  double tolerance = 0.1;     // --horizontal-pod-autoscaler-tolerance
  HpaScalingRules scale_up = default_scale_up();      // behavior.scaleUp
  HpaScalingRules scale_down = default_scale_down();  // behavior.scaleDown
};

class Hpa final : public Autoscaler {
 public:
  // `target`: the metric's target average value per pod (target.averageValue, or
  // averageUtilization as a share for `utilization`). Throws std::invalid_argument.
  Hpa(const HpaSpec& spec, int min_replicas, int max_replicas, double target);

  double period_s() const override { return spec_.sync_period_s; }
  int desired(const ScalingInput& input) override;
  // Records `replicas` as a recommendation made now: the scale-down stabilization window
  // then holds at least that count for its length.
  void prime(double now_s, int replicas) override { recommendations_.push_back({now_s, replicas}); }

  // Step 2 alone (replica_calculator.go), for a given current count: exposed for tests.
  int metric_proposal(int current_replicas, std::span<const PodMetric> pods) const;

 private:
  struct Recommendation {
    double time_s;
    int replicas;
  };
  struct ScaleEvent {
    double time_s;
    int change;  // > 0
  };
  int stabilize(double now, int current, int proposal);
  int allowed(const HpaScalingRules& rules, double now, int current, bool up) const;
  int limit_rate(double now, int current, int desired) const;
  int change_in_period(const std::deque<ScaleEvent>& events, double now, double period) const;

  HpaSpec spec_;
  int min_, max_;
  double target_;
  std::deque<Recommendation> recommendations_;
  std::deque<ScaleEvent> up_events_, down_events_;
};

}  // namespace cs::serving
