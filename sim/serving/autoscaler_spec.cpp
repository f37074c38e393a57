#include "sim/serving/autoscaler_spec.hpp"

#include <algorithm>
#include <stdexcept>

namespace cs::serving {

std::string_view to_string(MetricKind metric) { return name_of(kMetricKindNames, metric); }

std::string_view to_string(ScalingPolicy policy) { return name_of(kScalingPolicyNames, policy); }

namespace {

// Holds a fixed count; looked at once a minute (the loop still samples metrics for the
// time series).
class FixedReplicas final : public Autoscaler {
 public:
  explicit FixedReplicas(int replicas) : replicas_(replicas) {}
  double period_s() const override { return 60; }
  int desired(const ScalingInput&) override { return replicas_; }

 private:
  int replicas_;
};

std::unique_ptr<Autoscaler> make_policy(const AutoscalerSpec& spec, ScalingPolicy policy) {
  const int lo = spec.min_replicas, hi = spec.max_replicas;
  switch (policy) {
    case ScalingPolicy::fixed: return std::make_unique<FixedReplicas>(spec.replicas);
    case ScalingPolicy::hpa: return std::make_unique<Hpa>(spec.hpa, lo, hi, spec.target);
    case ScalingPolicy::kpa: return std::make_unique<Kpa>(spec.kpa, lo, hi, spec.target);
    case ScalingPolicy::target_tracking:
      return std::make_unique<TargetTracking>(spec.target_tracking, lo, hi, spec.target);
    case ScalingPolicy::step: return std::make_unique<StepScaling>(spec.step, lo, hi);
    case ScalingPolicy::scheduled: {
      if (spec.inner == ScalingPolicy::scheduled || spec.inner == ScalingPolicy::predictive)
        throw std::invalid_argument("autoscaler.inner: scheduled wraps a dynamic policy");
      std::unique_ptr<Autoscaler> inner =
          spec.inner == ScalingPolicy::none ? nullptr : make_policy(spec, spec.inner);
      return std::make_unique<ScheduledScaling>(spec.scheduled, lo, hi, std::move(inner));
    }
    case ScalingPolicy::predictive: {
      const ScalingPolicy inner = spec.inner == ScalingPolicy::none ? ScalingPolicy::target_tracking : spec.inner;
      if (inner == ScalingPolicy::predictive || inner == ScalingPolicy::scheduled)
        throw std::invalid_argument("autoscaler.inner: predictive wraps a dynamic policy");
      return std::make_unique<PredictiveScaling>(spec.predictive, lo, hi, make_policy(spec, inner));
    }
    case ScalingPolicy::none: break;
  }
  throw std::invalid_argument("autoscaler.policy: unknown policy");
}

}  // namespace

int initial_replicas(const AutoscalerSpec& spec) {
  if (spec.policy == ScalingPolicy::fixed) return spec.replicas;
  return std::clamp(spec.replicas, spec.min_replicas, spec.max_replicas);
}

std::unique_ptr<Autoscaler> make_autoscaler(const AutoscalerSpec& spec) {
  if (spec.policy == ScalingPolicy::fixed) {
    if (spec.replicas < 0) throw std::invalid_argument("autoscaler.replicas: must be >= 0");
  } else if (spec.min_replicas < 0 || spec.max_replicas < spec.min_replicas || spec.max_replicas < 1) {
    throw std::invalid_argument("autoscaler: needs 0 <= min <= max and max >= 1");
  }
  return make_policy(spec, spec.policy);
}

}  // namespace cs::serving
