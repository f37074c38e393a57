// A shared cluster's result: the accumulators of job_cluster.hpp turned into JobsResult, and
// each job's row.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/statistics.hpp"
#include "sim/jobs/job_cluster.hpp"

namespace cs::jobs {

JobRecord JobCluster::record_of(const Job& j) const {
  JobRecord r;
  r.id = j.id;
  r.job_class = j.job_class;
  r.queue = j.queue;
  r.submit_s = j.submit_s;
  r.start_s = j.first_start_s;
  r.end_s = j.end_s;
  r.gpus = j.gpus;
  r.nodes = j.nodes;
  r.spread = j.spread;
  r.slowdown = j.slowdown;
  r.preemptions = j.preemptions;
  r.interruptions = j.interruptions;
  r.wait_s = j.wait_s + (j.phase == JobPhase::pending ? sim_.now() - j.pending_since_s : 0.0);
  r.lost_work_s = j.lost_work_s;
  r.reserved_start_s = j.reserved_start_s;
  r.completed = j.phase == JobPhase::done;
  return r;
}

JobsResult JobCluster::result() const {
  JobsResult r;
  const double now = done_ ? end_s_ : sim_.now();
  r.horizon_s = now;
  double busy_gpu_s = 0.0;
  std::vector<double> all_waits;
  for (std::size_t q = 0; q < config_.scheduler.queues.size(); ++q) {
    QueueResult qr;
    qr.name = config_.scheduler.queues[q].name;
    qr.submitted = submitted_[q];
    qr.completed = completed_[q];
    std::vector<double> waits(waits_[q].begin(), waits_[q].end());
    qr.wait_mean_s = engine::mean(waits);
    all_waits.insert(all_waits.end(), waits.begin(), waits.end());
    qr.wait_p95_s = engine::percentile(std::move(waits), 95);
    qr.busy_gpu_hours = busy_[q].integral(now) / 3600.0;
    qr.preemptions = preempted_[q];
    busy_gpu_s += busy_[q].integral(now);
    r.submitted += qr.submitted;
    r.completed += qr.completed;
    r.preemptions += qr.preemptions;
    r.queues.push_back(std::move(qr));
  }
  const auto waits_of = [](std::string name, const Waits& kept) {
    std::vector<double> waits(kept.begin(), kept.end());
    const double mean = engine::mean(waits);
    return WaitGroup{std::move(name), static_cast<int64_t>(waits.size()), mean, engine::percentile(std::move(waits), 95)};
  };
  for (std::size_t k = 0; k < config_.classes.size(); ++k) r.classes.push_back(waits_of(config_.classes[k].name, class_waits_[k]));
  for (std::size_t b = 0; b < std::size(kSizeBuckets); ++b) r.sizes.push_back(waits_of(kSizeBuckets[b].name, size_waits_[b]));
  r.wait_mean_s = engine::mean(all_waits);
  r.wait_p95_s = engine::percentile(std::move(all_waits), 95);
  r.utilization = now > 0.0 ? busy_gpu_s / (cluster_.total_gpus() * now) : 0.0;
  r.busy_gpu_hours = busy_gpu_s / 3600.0;
  r.gpu_hours_available = available_.integral(now) / 3600.0;
  r.lost_gpu_hours = lost_gpu_s_ / 3600.0;
  r.restore_gpu_hours = restore_gpu_s_ / 3600.0;
  r.checkpoint_gpu_hours = checkpoint_gpu_s_ / 3600.0;
  r.stalled_gpu_hours = stalled_gpu_s_ / 3600.0;
  r.slowdown_gpu_hours = slowdown_gpu_s_ / 3600.0;
  r.rejected = rejected_;
  r.interruptions = interruptions_;
  r.checkpoints = checkpoints_;
  r.emergency_checkpoints = emergency_;
  r.pending_at_end = static_cast<int64_t>(book_.pending_total());
  r.running_at_end = static_cast<int64_t>(book_.size()) - r.pending_at_end;
  r.mean_spread = runs_ > 0 ? spread_sum_ / static_cast<double>(runs_) : 0.0;
  r.mean_slowdown = runs_ > 0 ? slowdown_sum_ / static_cast<double>(runs_) : 1.0;
  r.placement_shapes = step_time_.distinct_shapes();
  r.runtime_mean_s = r.completed > 0 ? runtime_sum_ / static_cast<double>(r.completed) : 0.0;
  r.money = fleet::money(ledger_, now, config_.fleet.owned_billing(), now / 3600.0);  // the run starts at 0
  r.cost_usd_by_market = r.money.usd_by_market;
  r.node_hours_by_market = ledger_.instance_hours_by_market(now);
  r.cost_usd = r.money.cost_usd;
  const double in_service_gpu_s = available_.integral(now);
  for (std::size_t q = 0; q < r.queues.size(); ++q) {
    QueueResult& qr = r.queues[q];
    qr.gpu_share = busy_gpu_s > 0.0 ? qr.busy_gpu_hours * 3600.0 / busy_gpu_s : 0.0;
    qr.cluster_share = in_service_gpu_s > 0.0 ? qr.busy_gpu_hours * 3600.0 / in_service_gpu_s : 0.0;
    qr.quota = config_.scheduler.queues[q].quota.value_or(std::nan(""));
    qr.cost_usd = r.cost_usd * qr.gpu_share;
  }
  for (const auto& p : pools_) {
    r.node_failures += p->stats().failures;
    r.reclaims += p->stats().reclaims;
  }
  r.events = sim_.events_processed();
  if (config_.record_jobs) {
    r.jobs = records_;
    book_.for_each([&](const Job& j) { r.jobs.push_back(record_of(j)); });
    std::sort(r.jobs.begin(), r.jobs.end(), [](const JobRecord& a, const JobRecord& b) { return a.id < b.id; });
  }
  return r;
}

}  // namespace cs::jobs
