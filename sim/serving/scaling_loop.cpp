#include "sim/serving/scaling_loop.hpp"

namespace cs::serving {

ScalingLoop::ScalingLoop(engine::Simulator& sim, ReplicaPool& pool,
                         std::unique_ptr<Autoscaler> autoscaler, MetricKind metric)
    : sim_(sim), pool_(pool), autoscaler_(std::move(autoscaler)), metric_(metric),
      last_time_s_(sim.now()) {}

ScalingLoop::~ScalingLoop() {
  if (next_.valid()) sim_.cancel(next_);
}

void ScalingLoop::start() {
  last_time_s_ = sim_.now();
  last_routed_ = pool_.routed();
  last_queue_integral_ = pool_.queue_over_time().integral(last_time_s_);
  // Baselines for the replicas already ready.
  for (const uint32_t id : pool_.live()) {
    const ReplicaInfo& info = pool_.info(id);
    if (info.replica) {
      if (baseline_.size() <= id) {
        baseline_.resize(id + 1);
        has_baseline_.resize(id + 1, false);
      }
      baseline_[id] = info.replica->integrals();
      has_baseline_[id] = true;
    }
  }
  autoscaler_->prime(last_time_s_, pool_.desired());
  next_ = sim_.schedule_in(autoscaler_->period_s(), *this, 0);
}

namespace {
double metric_value(MetricKind metric, const LoadIntegrals& now, const LoadIntegrals& then,
                    double window) {
  switch (metric) {
    case MetricKind::utilization: return (now.busy - then.busy) / window;
    case MetricKind::concurrency:
      return (now.in_service - then.in_service + now.queued - then.queued) / window;
    case MetricKind::queue_length: return (now.queued - then.queued) / window;
    case MetricKind::request_rate: return static_cast<double>(now.arrivals - then.arrivals) / window;
    case MetricKind::kv_cache_usage: return (now.kv_usage - then.kv_usage) / window;
  }
  return 0;
}
}  // namespace

void ScalingLoop::measure() {
  const double now = sim_.now();
  const double window = now - last_time_s_;
  pods_.clear();
  double total = 0;
  for (const uint32_t id : pool_.live()) {
    const ReplicaInfo& info = pool_.info(id);
    if (info.state == ReplicaState::draining) continue;
    PodMetric pod;
    pod.id = id;
    pod.ready = info.state == ReplicaState::ready;
    pod.launched_s = info.launched_s;
    pod.ready_s = info.ready_s;
    if (pod.ready) {
      if (baseline_.size() <= id) {
        baseline_.resize(id + 1);
        has_baseline_.resize(id + 1, false);
      }
      const LoadIntegrals current = info.replica->integrals();
      // Without a baseline the replica was created inside the window: its integrals start at 0.
      const LoadIntegrals since = has_baseline_[id] ? baseline_[id] : LoadIntegrals{};
      if (window > 0) {
        const double value = metric_value(metric_, current, since, window);
        total += value;
        if (has_baseline_[id] && info.ready_s <= last_time_s_) {
          pod.has_metric = true;
          pod.value = value;
        }
      }
      baseline_[id] = current;
      has_baseline_[id] = true;
    }
    pods_.push_back(pod);
  }
  const uint64_t routed = pool_.routed();
  const double rate = window > 0 ? static_cast<double>(routed - last_routed_) / window : 0.0;
  if (metric_ == MetricKind::request_rate) total = rate;
  const double queue_integral = pool_.queue_over_time().integral(now);
  if ((metric_ == MetricKind::concurrency || metric_ == MetricKind::queue_length) && window > 0) {
    total += (queue_integral - last_queue_integral_) / window;
  }
  last_queue_integral_ = queue_integral;
  input_ = ScalingInput{};
  input_.now_s = now;
  input_.window_s = window;
  input_.current_replicas = pool_.desired();
  input_.ready_replicas = pool_.ready_count();
  input_.starting_replicas = pool_.starting_count() + pool_.waiting_count();  // pending pods
  input_.pods = pods_;
  input_.fleet_total = total;
  input_.arrival_rate_per_s = rate;
  last_time_s_ = now;
  last_routed_ = routed;
}

void ScalingLoop::on_event(uint64_t) {
  measure();
  last_desired_ = autoscaler_->desired(input_);
  ++decisions_;
  pool_.set_desired(last_desired_);
  next_ = sim_.schedule_in(autoscaler_->period_s(), *this, 0);
}

}  // namespace cs::serving
