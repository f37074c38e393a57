#include "sim/jobs/jobs_config.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/fleet/config_checks.hpp"

namespace cs::jobs {
using fleet::detail::require;

std::string_view to_string(Policy p) { return name_of(kPolicyNames, p); }

std::string_view to_string(PlacementPolicy p) { return name_of(kPlacementPolicyNames, p); }

int JobsConfig::domains() const {
  int d = 1;
  for (const int n : node_domain) d = std::max(d, n + 1);
  return d;
}

std::vector<double> JobsConfig::quotas() const {
  double given = 0.0;
  int unset = 0;
  for (const QueueConfig& q : scheduler.queues) {
    if (q.quota) given += *q.quota;
    else ++unset;
  }
  const double rest = unset > 0 ? std::max(0.0, 1.0 - given) / unset : 0.0;
  std::vector<double> out;
  for (const QueueConfig& q : scheduler.queues) out.push_back(q.quota ? *q.quota : rest);
  return out;
}

void JobsConfig::validate() const {
  fleet.validate();
  require(gpus_per_node >= 1, "hardware.node.gpus: expected at least 1");
  require(node_domain.empty() || node_domain.size() == static_cast<std::size_t>(fleet.nodes),
          "jobs.node_domain: expected one domain per node");
  for (const int d : node_domain) require(d >= 0, "jobs.node_domain: expected domains >= 0");
  require(!std::isfinite(fleet.fallback_after_s),
          "fleet.interruptions.fallback_after: not modelled for a job cluster (its nodes keep their place)");
  const auto& queues = scheduler.queues;
  require(!queues.empty(), "fleet.scheduler.queues: expected at least one queue");
  double quota_sum = 0.0;
  for (std::size_t i = 0; i < queues.size(); ++i) {
    const std::string at = "fleet.scheduler.queues[" + std::to_string(i) + "]";
    require(!queues[i].name.empty(), at + ".name: expected a name");
    for (std::size_t k = 0; k < i; ++k) require(queues[k].name != queues[i].name, at + ".name: named twice");
    if (queues[i].quota) {
      require(*queues[i].quota >= 0.0 && *queues[i].quota <= 1.0, at + ".quota: expected a share in [0, 1]");
      quota_sum += *queues[i].quota;
    }
    require(queues[i].max_gpus >= 1, at + ".max_gpus: expected at least 1");
  }
  require(quota_sum <= 1.0 + 1e-9, "fleet.scheduler.queues: the quotas add up to more than 1");
  require(scheduler.bf_max_job_test >= 1, "fleet.scheduler.bf_max_job_test: expected at least 1");
  require(scheduler.max_switch_wait_s >= 0.0 && std::isfinite(scheduler.max_switch_wait_s),
          "fleet.scheduler.max_switch_wait: expected a finite time >= 0");
  require(scheduler.usage_half_life_s >= 0.0 && std::isfinite(scheduler.usage_half_life_s),
          "fleet.scheduler.usage_half_life: expected a finite time >= 0");
  if (trace_path.empty()) {
    require(!classes.empty(), "workload.classes: expected at least one class (or a trace)");
    work::validate_arrivals(arrivals);
    require(arrivals.process != work::ArrivalProcess::trace, "workload.arrivals: a job trace is workload.trace");
  }
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const JobClass& c = classes[i];
    const std::string at = "workload.classes[" + std::to_string(i) + "]";
    require(c.queue >= 0 && static_cast<std::size_t>(c.queue) < queues.size(), at + ".queue: no such queue");
    require(c.share > 0.0 && std::isfinite(c.share), at + ".share: expected a weight > 0");
    c.gpus.validate(at + ".gpus");
    c.duration.validate(at + ".duration");
    require(c.spread_penalty >= 0.0 && std::isfinite(c.spread_penalty), at + ".spread_penalty: expected >= 0");
  }
  if (checkpoint) checkpoint->validate("fleet.checkpoint");
  restore.validate("fleet.restore");
  require(until_s > 0.0, "run.until: expected a time > 0");
  require(std::isfinite(until_s) || max_jobs >= 0 || !trace_path.empty(),
          "run.until: a stream of arrivals never ends: give run.until or workload.jobs");
  require(sample_interval_s >= 0.0 && std::isfinite(sample_interval_s), "run.timeseries_interval: expected >= 0");
  require(draw_ahead_after >= 0, "jobs.draw_ahead_after: expected >= 0");
}

}  // namespace cs::jobs
