// fleet.autoscaler (and fleet.prefill_autoscaler) into cs::serving::AutoscalerSpec: policy,
// min, max, replicas, metric, target, inner, and each policy's own parameters in a block named
// after it, with the names the system it models uses: hpa (the HorizontalPodAutoscaler's
// behavior block, camelCase as Kubernetes writes it, and the controller's sync period and
// tolerance), kpa (Knative's config-autoscaler keys, underscores for hyphens), target_tracking
// and step (Application Auto Scaling's fields in snake_case), scheduled (scheduled actions),
// predictive (predictive scaling's).
#include <limits>
#include <stdexcept>

#include "sim/scenario/parse_autoscaler.hpp"
#include "sim/serving/autoscaler_spec.hpp"

namespace cs::scenario::detail {
namespace {

using serving::AutoscalerSpec;
using serving::ScalingPolicy;

constexpr int kMaxReplicas = 1'000'000;
constexpr double kMaxPeriod_s = 7 * 86400.0;
constexpr double kMaxSeasonBuckets = 1e6;

double period(const json& o, const char* key, const std::string& at, double def) {
  const double t = get_quantity(o, key, at, QuantityKind::time, Sign::positive, def);
  if (t > kMaxPeriod_s) throw InputError(join_path(at, key), "expected at most a week");
  return t;
}

// behavior.scaleUp / scaleDown of an HPA (autoscaling/v2 HPAScalingRules).
void parse_hpa_rules(const json& b, const char* key, const std::string& at, serving::HpaScalingRules& rules) {
  const json* r = member(b, key);
  if (!r) return;
  const std::string path = join_path(at, key);
  if (!r->is_object()) throw InputError(path, "expected {stabilizationWindowSeconds, selectPolicy, policies}");
  // Kubernetes caps the window at 3600 s.
  rules.stabilization_window_s = static_cast<double>(get_int(*r, "stabilizationWindowSeconds", path,
                                                             static_cast<int64_t>(rules.stabilization_window_s), 0, 3600));
  rules.select = get_choice(*r, "selectPolicy", path, serving::kHpaSelectNames, rules.select);
  if (const json* list = member(*r, "policies")) {
    const std::string lp = join_path(path, "policies");
    if (!list->is_array() || list->size() > 100) throw InputError(lp, "expected a list of {type, value, periodSeconds}");
    rules.policies.clear();
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string item = join_path(lp, i);
      const json& p = (*list)[i];
      if (!p.is_object()) throw InputError(item, "expected {type, value, periodSeconds}");
      for (const char* k : {"type", "value", "periodSeconds"})
        if (!member(p, k)) throw InputError(join_path(item, k), "required (Kubernetes HPAScalingPolicy)");
      using Type = serving::HpaScalingPolicy::Type;
      serving::HpaScalingPolicy policy;
      policy.type = get_choice(p, "type", item, serving::kHpaPolicyTypeNames, Type::pods);
      policy.value = static_cast<int>(get_int(p, "value", item, 1, 1, kMaxReplicas));
      policy.period_s = static_cast<double>(get_int(p, "periodSeconds", item, 15, 1, 1800));  // Kubernetes: (0, 1800]
      rules.policies.push_back(policy);
    }
  }
}

void parse_hpa(const json& o, const std::string& at, serving::HpaSpec& h) {
  h.sync_period_s = period(o, "sync_period", at, h.sync_period_s);
  h.tolerance = get_number(o, "tolerance", at, h.tolerance, 0.0, 1.0);
  if (const json* b = member(o, "behavior")) {
    const std::string bp = join_path(at, "behavior");
    if (!b->is_object()) throw InputError(bp, "expected {scaleUp, scaleDown}");
    parse_hpa_rules(*b, "scaleUp", bp, h.scale_up);
    parse_hpa_rules(*b, "scaleDown", bp, h.scale_down);
  }
}

void parse_kpa(const json& o, const std::string& at, serving::KpaSpec& k) {
  k.tick_s = period(o, "tick_interval", at, k.tick_s);
  k.stable_window_s = period(o, "stable_window", at, k.stable_window_s);
  // Knative's bounds: panic window 1-100% of the stable window, panic threshold 110-1000%.
  k.panic_window_percentage = get_number(o, "panic_window_percentage", at, k.panic_window_percentage, 1.0, 100.0);
  k.panic_threshold_percentage = get_number(o, "panic_threshold_percentage", at, k.panic_threshold_percentage, 110.0, 1000.0);
  k.max_scale_up_rate = get_number(o, "max_scale_up_rate", at, k.max_scale_up_rate, 1.0 + 1e-9, 1e9);
  k.max_scale_down_rate = get_number(o, "max_scale_down_rate", at, k.max_scale_down_rate, 1.0 + 1e-9, 1e9);
  k.target_utilization_percentage = get_number(o, "container_concurrency_target_percentage", at,
                                               k.target_utilization_percentage, 1.0, 100.0);
  k.scale_to_zero_grace_period_s =
      get_quantity(o, "scale_to_zero_grace_period", at, QuantityKind::time, Sign::non_negative, k.scale_to_zero_grace_period_s);
  k.scale_down_delay_s = get_quantity(o, "scale_down_delay", at, QuantityKind::time, Sign::non_negative, k.scale_down_delay_s);
  if (k.scale_down_delay_s > 3600) throw InputError(join_path(at, "scale_down_delay"), "expected at most 1 h (Knative's bound)");
}

void parse_target_tracking(const json& o, const std::string& at, serving::TargetTrackingSpec& t) {
  t.period_s = period(o, "period", at, t.period_s);
  t.scale_out_datapoints = static_cast<int>(get_int(o, "scale_out_datapoints", at, t.scale_out_datapoints, 1, 1000));
  t.scale_in_datapoints = static_cast<int>(get_int(o, "scale_in_datapoints", at, t.scale_in_datapoints, 1, 1000));
  t.scale_in_threshold = get_number(o, "scale_in_threshold", at, t.scale_in_threshold, 1e-6, 1.0);
  t.scale_in_cooldown_s = get_quantity(o, "scale_in_cooldown", at, QuantityKind::time, Sign::non_negative, t.scale_in_cooldown_s);
  t.instance_warmup_s =
      get_quantity(o, "estimated_instance_warmup", at, QuantityKind::time, Sign::non_negative, t.instance_warmup_s);
  t.disable_scale_in = get_bool(o, "disable_scale_in", at, t.disable_scale_in);
}

void parse_step_policy(const json& o, const char* key, const std::string& at, serving::StepPolicy& p) {
  const json* v = member(o, key);
  if (!v) return;
  const std::string path = join_path(at, key);
  if (!v->is_object()) throw InputError(path, "expected {threshold, evaluation_periods, step_adjustments}");
  if (!member(*v, "threshold")) throw InputError(join_path(path, "threshold"), "required: the alarm's threshold, in the metric's unit");
  p.threshold = get_number(*v, "threshold", path, 0.0, -1e12, 1e12);
  p.evaluation_periods = static_cast<int>(get_int(*v, "evaluation_periods", path, 1, 1, 1000));
  const json* list = member(*v, "step_adjustments");
  const std::string lp = join_path(path, "step_adjustments");
  if (!list || !list->is_array() || list->empty() || list->size() > 100)
    throw InputError(lp, "required: a list of {metric_interval_lower_bound, metric_interval_upper_bound, scaling_adjustment}");
  const double inf = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string item = join_path(lp, i);
    const json& s = (*list)[i];
    if (!s.is_object() || !member(s, "scaling_adjustment"))
      throw InputError(item, "expected {metric_interval_lower_bound, metric_interval_upper_bound, scaling_adjustment}");
    serving::StepAdjustment a;
    a.lower_bound = get_number(s, "metric_interval_lower_bound", item, -inf, -1e12, 1e12);
    a.upper_bound = get_number(s, "metric_interval_upper_bound", item, inf, -1e12, 1e12);
    if (!(a.lower_bound < a.upper_bound))
      throw InputError(join_path(item, "metric_interval_upper_bound"), "expected above metric_interval_lower_bound");
    a.adjustment = get_number(s, "scaling_adjustment", item, 0.0, -1e6, 1e6);
    p.steps.push_back(a);
  }
}

void parse_step(const json& o, const std::string& at, serving::StepScalingSpec& s) {
  s.period_s = period(o, "period", at, s.period_s);
  s.adjustment_type = get_choice(o, "adjustment_type", at, serving::kAdjustmentTypeNames, s.adjustment_type);
  s.min_adjustment_magnitude = static_cast<int>(get_int(o, "min_adjustment_magnitude", at, 0, 0, kMaxReplicas));
  s.cooldown_s = get_quantity(o, "cooldown", at, QuantityKind::time, Sign::non_negative, s.cooldown_s);
  parse_step_policy(o, "scale_out", at, s.scale_out);
  parse_step_policy(o, "scale_in", at, s.scale_in);
  if (s.scale_out.steps.empty() && s.scale_in.steps.empty())
    throw InputError(at, "required: scale_out and/or scale_in, each {threshold, step_adjustments}");
}

void parse_scheduled(const json& o, const std::string& at, serving::ScheduledSpec& s) {
  s.period_s = period(o, "period", at, s.period_s);
  const json* list = member(o, "actions");
  const std::string lp = join_path(at, "actions");
  if (!list || !list->is_array() || list->empty() || list->size() > 10000)
    throw InputError(lp, "required: a list of {at, recurrence, min, max}", "e.g. [{\"at\": \"8h\", \"recurrence\": \"24h\", \"min\": 10, \"max\": 40}]");
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string item = join_path(lp, i);
    const json& a = (*list)[i];
    if (!a.is_object()) throw InputError(item, "expected {at, recurrence, min, max}");
    for (const char* k : {"at", "min", "max"})
      if (!member(a, k)) throw InputError(join_path(item, k), "required");
    serving::ScheduledAction action;
    action.at_s = get_quantity(a, "at", item, QuantityKind::time, Sign::non_negative, 0.0);
    action.recurrence_s = get_quantity(a, "recurrence", item, QuantityKind::time, Sign::non_negative, 0.0);
    action.min_replicas = static_cast<int>(get_int(a, "min", item, 0, 0, kMaxReplicas));
    action.max_replicas = static_cast<int>(get_int(a, "max", item, 1, 0, kMaxReplicas));
    if (action.max_replicas < action.min_replicas) throw InputError(join_path(item, "max"), "expected max >= min");
    s.actions.push_back(action);
  }
}

void parse_predictive(const json& o, const std::string& at, serving::PredictiveSpec& p) {
  if (!member(o, "target_per_replica"))
    throw InputError(join_path(at, "target_per_replica"), "required: the requests per second one replica should carry");
  p.target_per_replica = get_quantity(o, "target_per_replica", at, QuantityKind::rate, Sign::positive, p.target_per_replica);
  p.bucket_s = period(o, "bucket", at, p.bucket_s);
  p.season_s = get_quantity(o, "season", at, QuantityKind::time, Sign::positive, p.season_s);
  if (p.season_s < 2 * p.bucket_s) throw InputError(join_path(at, "season"), "expected at least two buckets");
  // The forecast holds a level and a trend per bucket of the season.
  if (p.season_s / p.bucket_s > kMaxSeasonBuckets)
    throw InputError(join_path(at, "bucket"), "a season of " + rounded_count(p.season_s / p.bucket_s) +
                                                  " buckets; at most 1e6", "a longer bucket, or a shorter season");
  p.scheduling_buffer_s =
      get_quantity(o, "scheduling_buffer", at, QuantityKind::time, Sign::non_negative, p.scheduling_buffer_s);
  p.alpha = get_number(o, "alpha", at, p.alpha, 0.0, 1.0);
  p.beta = get_number(o, "beta", at, p.beta, 0.0, 1.0);
  p.gamma = get_number(o, "gamma", at, p.gamma, 0.0, 1.0);
}

}  // namespace

AutoscalerSpec parse_autoscaler(const json& fleet, const char* key, std::vector<std::string>& warnings) {
  const std::string at = join_path("fleet", key);
  const json& a = object_or_empty(fleet, key, "fleet");
  AutoscalerSpec s;
  s.policy = get_choice(a, "policy", at, serving::kScalingPolicyNames, ScalingPolicy::fixed);
  const bool fixed = s.policy == ScalingPolicy::fixed;
  if (fixed) {
    // Every scaling policy's keys: a sweep or a size search over the policy keeps them in the
    // file, so with "fixed" they are checked and reported as unused, not refused.
    for (const char* k : {"min", "max", "metric", "target"})
      if (member(a, k))
        warnings.push_back("warning: " + join_path(at, k) + ": has no effect with policy \"fixed\" (it holds `replicas`)");
    if (member(a, "inner")) throw InputError(join_path(at, "inner"), "applies to policies \"scheduled\" and \"predictive\"");
    if (member(a, "min")) (void)get_int(a, "min", at, 1, 0, kMaxReplicas);
    if (member(a, "max")) (void)get_int(a, "max", at, 1, 1, kMaxReplicas);
    s.replicas = static_cast<int>(get_int(a, "replicas", at, 1, 0, kMaxReplicas));
    s.min_replicas = s.max_replicas = s.replicas;
  } else {
    if (!member(a, "max"))
      throw InputError(join_path(at, "max"), "required for policy \"" + std::string(serving::to_string(s.policy)) +
                                                 "\": the most replicas it may run");
    s.min_replicas = static_cast<int>(get_int(a, "min", at, 1, 0, kMaxReplicas));
    s.max_replicas = static_cast<int>(get_int(a, "max", at, 1, 1, kMaxReplicas));
    if (s.max_replicas < s.min_replicas) throw InputError(join_path(at, "max"), "expected max >= min (" + std::to_string(s.min_replicas) + ")");
    s.replicas = static_cast<int>(get_int(a, "replicas", at, s.min_replicas, s.min_replicas, s.max_replicas));
  }
  const bool kpa = s.policy == ScalingPolicy::kpa;
  using serving::MetricKind;
  s.metric = get_choice(a, "metric", at, serving::kMetricKindNames, kpa ? MetricKind::concurrency : MetricKind::utilization);
  if (kpa && s.metric != MetricKind::concurrency && s.metric != MetricKind::request_rate)
    throw InputError(join_path(at, "metric"), "Knative's KPA scales on \"concurrency\" or \"request_rate\" (rps)");
  // Knative's default target is 100 concurrent requests per pod; the others have none.
  s.target = get_number(a, "target", at, kpa ? 100.0 : s.target, 1e-9, 1e12);
  if (s.metric == MetricKind::utilization || s.metric == MetricKind::kv_cache_usage)
    if (s.target > 1.0)
      throw InputError(join_path(at, "target"), "a " + std::string(serving::to_string(s.metric)) + " target is a share in (0, 1]",
                       "e.g. 0.7 for 70%");
  // scheduled and predictive run around a dynamic policy.
  if (const json* inner = member(a, "inner")) {
    if (s.policy != ScalingPolicy::scheduled && s.policy != ScalingPolicy::predictive)
      throw InputError(join_path(at, "inner"), "applies to policies \"scheduled\" and \"predictive\"");
    // The dynamic policies, which scale on a metric: what scheduled and predictive run around.
    const auto dynamic = [](ScalingPolicy p) {
      return p == ScalingPolicy::hpa || p == ScalingPolicy::target_tracking || p == ScalingPolicy::step ||
             p == ScalingPolicy::kpa;
    };
    s.inner = choice_value(*inner, join_path(at, "inner"), choices_where(serving::kScalingPolicyNames, dynamic));
  }
  const ScalingPolicy inner = s.policy == ScalingPolicy::predictive && s.inner == ScalingPolicy::none
                                  ? ScalingPolicy::target_tracking
                                  : s.inner;
  const bool needs_target = s.policy == ScalingPolicy::hpa || s.policy == ScalingPolicy::target_tracking ||
                            inner == ScalingPolicy::hpa || inner == ScalingPolicy::target_tracking;
  if (needs_target && !member(a, "target"))
    throw InputError(join_path(at, "target"), "required: the metric's target value per replica",
                     "e.g. \"metric\": \"concurrency\", \"target\": 32");
  // Each policy's own block, under its name; a block of a policy not in use has no effect.
  const auto block = [&](const char* name, ScalingPolicy policy, auto parse, auto& spec) {
    const json* b = member(a, name);
    if (!b) return;
    const std::string path = join_path(at, name);
    if (s.policy != policy && inner != policy)
      throw InputError(path, "applies to policy \"" + std::string(name) + "\"; the policy is \"" +
                                 std::string(serving::to_string(s.policy)) + "\"");
    if (!b->is_object()) throw InputError(path, "expected an object of " + std::string(name) + "'s parameters");
    parse(*b, path, spec);
  };
  block("hpa", ScalingPolicy::hpa, parse_hpa, s.hpa);
  block("kpa", ScalingPolicy::kpa, parse_kpa, s.kpa);
  block("target_tracking", ScalingPolicy::target_tracking, parse_target_tracking, s.target_tracking);
  block("step", ScalingPolicy::step, parse_step, s.step);
  block("scheduled", ScalingPolicy::scheduled, parse_scheduled, s.scheduled);
  block("predictive", ScalingPolicy::predictive, parse_predictive, s.predictive);
  const auto required_block = [&](const char* name, ScalingPolicy policy, const char* what) {
    if ((s.policy == policy || inner == policy) && !member(a, name))
      throw InputError(join_path(at, name), std::string("required for policy \"") + name + "\": " + what);
  };
  required_block("step", ScalingPolicy::step, "its alarms and step adjustments");
  required_block("scheduled", ScalingPolicy::scheduled, "its actions");
  required_block("predictive", ScalingPolicy::predictive, "its target_per_replica");
  // The library's own checks (every value was checked above with its path).
  try {
    serving::make_autoscaler(s);
  } catch (const std::invalid_argument& e) {
    throw InputError(at, e.what());
  }
  return s;
}

void check_autoscaler_period(const AutoscalerSpec& spec, const char* key, double until_s) {
  // The policy whose period the scaling loop runs at: scheduled and predictive run at their
  // inner policy's (predictive's default inner: target tracking).
  ScalingPolicy timed = spec.policy;
  if (spec.policy == ScalingPolicy::predictive) timed = spec.inner == ScalingPolicy::none ? ScalingPolicy::target_tracking : spec.inner;
  if (spec.policy == ScalingPolicy::scheduled && spec.inner != ScalingPolicy::none) timed = spec.inner;
  const char* period_key = "";
  switch (timed) {
    case ScalingPolicy::hpa: period_key = "hpa.sync_period"; break;
    case ScalingPolicy::kpa: period_key = "kpa.tick_interval"; break;
    case ScalingPolicy::target_tracking: period_key = "target_tracking.period"; break;
    case ScalingPolicy::step: period_key = "step.period"; break;
    case ScalingPolicy::scheduled: period_key = "scheduled.period"; break;
    default: return;  // fixed: a fixed period (60 s)
  }
  check_period(serving::make_autoscaler(spec)->period_s(), until_s, join_path(join_path("fleet", key), period_key));
}

}  // namespace cs::scenario::detail
