#include "sim/fleet/training_run_config.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/fleet/config_checks.hpp"

namespace cs::fleet {
using detail::finite_nonneg;
using detail::require;

std::string_view to_string(JobState s) { return name_of(kJobStateNames, s); }

bool TrainingRunConfig::notice_saves_work() const {
  return checkpoint.emergency_on_notice && !elastic.enabled && checkpoint.durable_s(nodes) <= reclaims.warning_s;
}

double TrainingRunConfig::work_losing_rate_per_s() const {
  return failure_rate_per_s() + (notice_saves_work() ? 0.0 : reclaim_rate_per_s());
}

double TrainingRunConfig::checkpoint_interval_s() const {
  double tau;
  if (checkpoint.interval_s) {
    tau = *checkpoint.interval_s;
  } else {
    const double rate = work_losing_rate_per_s();
    tau = rate > 0.0 ? young_daly_interval_s(checkpoint.blocking_s(nodes), 1.0 / rate)
                     : std::numeric_limits<double>::infinity();
    if (checkpoint.mode == CheckpointMode::async) tau = std::max(tau, checkpoint.write_s(nodes));
  }
  if (!std::isfinite(tau)) return tau;
  return std::max(1.0, std::round(tau / step_time_s)) * step_time_s;
}

double TrainingRunConfig::restore_s(int n, bool from_checkpoint) const {
  return restore_seconds(restore, checkpoint, n, from_checkpoint);
}

void TrainingRunConfig::validate() const {
  require(step_time_s > 0.0 && std::isfinite(step_time_s),
          "training_run.step_time_s: expected a finite time > 0");
  require(finite_nonneg(steps), "training_run.steps: expected a finite count >= 0");
  require(finite_nonneg(tokens_per_step), "training_run.tokens_per_step: expected a finite count >= 0");
  FleetConfig::validate();
  checkpoint.validate("fleet.checkpoint");
  restore.validate("fleet.restore");
  if (elastic.enabled) {
    require(elastic.nodes_per_replica >= 1 && nodes % elastic.nodes_per_replica == 0,
            "fleet.elastic.nodes_per_replica: expected a divisor of fleet.nodes");
    require(elastic.min_replicas >= 1 && elastic.min_replicas <= nodes / elastic.nodes_per_replica,
            "fleet.elastic.min_replicas: expected 1 .. nodes / nodes_per_replica");
    require(finite_nonneg(elastic.throughput_exponent),
            "fleet.elastic.throughput_exponent: expected a finite number >= 0");
    require(finite_nonneg(elastic.reconfigure_s),
            "fleet.elastic.reconfigure_s: expected a finite time >= 0");
  }
  require(max_wall_time_s > 0.0, "run.until: expected a time > 0");
}

std::vector<std::pair<std::string, double>> TrainingRunResult::summary_numbers() const {
  std::vector<std::pair<std::string, double>> v{
      {"wall_time_s", wall_time_s},
      {"goodput", goodput},
      {"interruptions", static_cast<double>(interruptions)},
      {"failures", static_cast<double>(failures)},
      {"checkpoints", static_cast<double>(checkpoints)},
      {"lost_work_s", lost_work_s},
      {"restore_time_s", restore_time_s},
      {"cost_usd", cost_usd},
      {"job.completed", completed ? 1.0 : 0.0},
      {"job.useful_time_s", useful_time_s},
      {"job.restores", static_cast<double>(restores)},
      {"job.reconfigurations", static_cast<double>(reconfigurations)},
      {"checkpoint.interval_s", checkpoint_interval_s},
      {"checkpoint.write_s", checkpoint_write_s},
      {"checkpoint.blocking_s", checkpoint_blocking_s},
      {"checkpoint.emergency", static_cast<double>(emergency_checkpoints)},
      {"checkpoint.async_writes_lost", static_cast<double>(async_writes_lost)},
      {"checkpoint.writes_lost", static_cast<double>(checkpoint_writes_lost)},
      {"fleet.node_failures", static_cast<double>(node_failures)},
      {"fleet.reclaims", static_cast<double>(reclaims)},
      {"fleet.fallbacks", static_cast<double>(fallbacks)},
      {"fleet.job_mtbf_s", mtbf_s},
      {"fleet.work_losing_mtbf_s", work_losing_mtbf_s},
  };
  for (std::size_t s = 0; s < kJobStates; ++s)
    v.emplace_back("time_in_state_s." + std::string(to_string(static_cast<JobState>(s))),
                   time_in_state_s[s]);
  for (auto& number : money.summary_numbers()) v.push_back(std::move(number));
  for (const Market m : kAllMarkets)
    v.emplace_back("node_hours_by_market." + std::string(to_string(m)), node_hours_by_market[m]);
  if (tokens > 0.0) {
    v.emplace_back("tokens_trained", tokens);
    v.emplace_back("cost_per_billion_tokens_usd", cost_usd / tokens * 1e9);
  }
  return v;
}

}  // namespace cs::fleet
