#pragma once
// fleet.autoscaler as a typed config, and the factory that builds the policy it names.
//
// Scenario keys (docs/scenarios.md): policy, min, max, metric, target, and each policy's own
// parameters under its name, named as the system it models names them (hpa: the
// HorizontalPodAutoscaler's behavior block and the controller's flags; kpa: Knative's
// config-autoscaler keys; target_tracking and step: Application Auto Scaling's fields;
// scheduled: scheduled actions; predictive: predictive scaling's).
//   fixed            replicas (min = max = replicas)
//   hpa              HpaSpec          (hpa.hpp)
//   kpa              KpaSpec          (kpa.hpp)
//   target_tracking  TargetTrackingSpec (target_tracking.hpp)
//   step             StepScalingSpec  (step_scaling.hpp)
//   scheduled        ScheduledSpec    (scheduled_scaling.hpp), alone or around `inner`
//   predictive       PredictiveSpec   (predictive_scaling.hpp) around `inner` (default
//                    target_tracking)
#include <array>
#include <memory>
#include <string_view>

#include "common/enum_table.hpp"
#include "sim/serving/autoscaler.hpp"
#include "sim/serving/hpa.hpp"
#include "sim/serving/kpa.hpp"
#include "sim/serving/predictive_scaling.hpp"
#include "sim/serving/scheduled_scaling.hpp"
#include "sim/serving/step_scaling.hpp"
#include "sim/serving/target_tracking.hpp"

namespace cs::serving {

enum class ScalingPolicy : uint8_t { fixed, hpa, target_tracking, step, kpa, scheduled, predictive, none };
// fleet.autoscaler.policy (and .inner, the dynamic ones); none: no inner policy.
inline constexpr auto kScalingPolicyNames = std::to_array<EnumName<ScalingPolicy>>({
    {"fixed", ScalingPolicy::fixed, "a fixed count of replicas"},
    {"hpa", ScalingPolicy::hpa, "Kubernetes' HorizontalPodAutoscaler"},
    {"target_tracking", ScalingPolicy::target_tracking, "AWS target tracking"},
    {"step", ScalingPolicy::step, "AWS step scaling"},
    {"kpa", ScalingPolicy::kpa, "Knative's pod autoscaler"},
    {"scheduled", ScalingPolicy::scheduled, "scheduled actions, alone or around `inner`"},
    {"predictive", ScalingPolicy::predictive, "a Holt-Winters forecast of the daily load, around `inner`"},
    {"none", ScalingPolicy::none, "no inner policy", NameUse::output_only},
});
static_assert(names_every_value<kScalingPolicyNames>());

std::string_view to_string(ScalingPolicy policy);

struct AutoscalerSpec {
  ScalingPolicy policy = ScalingPolicy::fixed;
  int replicas = 1;        // fixed: the count; others: the count at the start (clamped to [min, max])
  int min_replicas = 1;    // min
  int max_replicas = 10;   // max
  MetricKind metric = MetricKind::utilization;
  double target = 0.7;     // per-replica target of `metric`
  // For scheduled and predictive: the policy they wrap (none: scheduled alone).
  ScalingPolicy inner = ScalingPolicy::none;
  HpaSpec hpa;
  KpaSpec kpa;
  TargetTrackingSpec target_tracking;
  StepScalingSpec step;
  ScheduledSpec scheduled;
  PredictiveSpec predictive;
};

// Replicas to start with: `replicas` for fixed, else `replicas` clamped to [min, max].
int initial_replicas(const AutoscalerSpec& spec);

// Throws std::invalid_argument naming the field. `fixed` gives a policy that always answers
// `replicas`.
std::unique_ptr<Autoscaler> make_autoscaler(const AutoscalerSpec& spec);

}  // namespace cs::serving
