#pragma once
// The interface every autoscaling policy implements, and what it observes.
//
// A policy is called every period_s() seconds of simulated time (the scaling loop,
// scaling_loop.hpp, drives it) with a ScalingInput and returns the replica count it wants.
// The loop clamps nothing: each policy applies its own min/max rules as the system it models
// does (HPA returns max when the current count is above it, KPA clamps after deciding, ...).
//
// Metrics (the `metric` a policy scales on), per replica, averaged over the window since the
// previous call (the policy's period):
//   utilization     busy share of the replica's slots (plain server: requests in service /
//                   concurrency; LLM: running sequences / max_num_seqs)
//   concurrency     requests in flight there (in service + queued): Knative's concurrency
//   queue_length    requests waiting there, not yet in service (vLLM num_requests_waiting)
//   request_rate    requests routed to it per second (Knative rps, ALBRequestCountPerTarget)
//   kv_cache_usage  share of its KV-cache blocks in use (vLLM gpu_cache_usage_perc; LLM only)
//
// A replica that is still starting (provisioning, cold start) is `ready = false` and has no
// metric (Kubernetes: a Pending pod). A ready replica has a metric only once it has been
// ready for a whole window (before that it is "missing", as a pod the metrics API has no
// sample for yet).
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/enum_table.hpp"

namespace cs::serving {

enum class MetricKind : uint8_t { utilization, concurrency, queue_length, request_rate, kv_cache_usage };
// fleet.autoscaler.metric.
inline constexpr auto kMetricKindNames = std::to_array<EnumName<MetricKind>>({
    {"utilization", MetricKind::utilization, "busy share of the replica's slots or sequences"},
    {"concurrency", MetricKind::concurrency, "requests in flight, in service and queued (Knative's)"},
    {"queue_length", MetricKind::queue_length, "requests waiting, not yet in service"},
    {"request_rate", MetricKind::request_rate, "requests routed to the replica per second"},
    {"kv_cache_usage", MetricKind::kv_cache_usage, "share of the KV-cache blocks in use (LLM)"},
});
static_assert(names_every_value<kMetricKindNames>());

std::string_view to_string(MetricKind metric);

struct PodMetric {
  uint32_t id = 0;
  bool ready = false;       // serving requests
  bool has_metric = false;  // ready for the whole window
  double value = 0;         // the metric over the window (when has_metric)
  double launched_s = 0;    // when its provisioning began
  double ready_s = -1;      // when it became ready (-1: not yet)
};

struct ScalingInput {
  double now_s = 0;
  double window_s = 0;         // length of the window the metrics average over
  int current_replicas = 0;    // the count last set (Kubernetes spec.replicas): ready + starting
  int ready_replicas = 0;
  int starting_replicas = 0;
  std::span<const PodMetric> pods;  // every replica that is ready or starting, by id
  // Fleet-wide value of the metric over the window: the sum over ready replicas, plus the
  // requests held at the balancer for concurrency and queue_length (Knative's activator),
  // and the pool's routed requests per second for request_rate.
  double fleet_total = 0;
  double arrival_rate_per_s = 0;  // requests reaching the pool per second over the window
};

// Mean of the metric over the pods that have one and that `counts` accepts (AWS policies
// average over the instances reporting; warm-up excludes some); `pods` 0 when none.
struct MetricMean {
  double value = 0;
  int pods = 0;
};
template <class Counts>
MetricMean mean_metric(std::span<const PodMetric> pods, Counts counts) {
  MetricMean m;
  double sum = 0;
  for (const PodMetric& p : pods) {
    if (p.has_metric && counts(p)) {
      sum += p.value;
      ++m.pods;
    }
  }
  if (m.pods > 0) m.value = sum / m.pods;
  return m;
}

class Autoscaler {
 public:
  virtual ~Autoscaler() = default;
  // Seconds between two calls of desired(); > 0.
  virtual double period_s() const = 0;
  // The replica count the policy wants now. Policies keep state between calls.
  virtual int desired(const ScalingInput& input) = 0;
  // Called once, when scaling starts with `replicas` running: a policy that keeps a history
  // of recommendations may take this count as its recent past, as if it had been running
  // with it (a simulation starts from an empty system; a real autoscaler is rarely created
  // at the instant traffic starts).
  virtual void prime(double /*now_s*/, int /*replicas*/) {}
};

}  // namespace cs::serving
