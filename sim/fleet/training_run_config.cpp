#include "sim/fleet/training_run_config.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cs::fleet {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

bool finite_nonneg(double v) { return v >= 0.0 && std::isfinite(v); }

}  // namespace

std::string_view to_string(JobState s) {
  switch (s) {
    case JobState::starting: return "starting";
    case JobState::running: return "running";
    case JobState::checkpointing: return "checkpointing";
    case JobState::restoring: return "restoring";
    case JobState::waiting: return "waiting";
    case JobState::reconfiguring: return "reconfiguring";
    case JobState::done: return "done";
  }
  return "?";
}

void RestoreConfig::validate(const char* what) const {
  const std::string w(what);
  if (time_s) require(finite_nonneg(*time_s), w + ".time_s: expected a finite time >= 0");
  require(finite_nonneg(restart.fixed_s), w + ".restart.fixed_s: expected a finite time >= 0");
  require(finite_nonneg(restart.per_node_s), w + ".restart.per_node_s: expected a finite time >= 0");
  require(finite_nonneg(restart.per_log2_node_s),
          w + ".restart.per_log2_node_s: expected a finite time >= 0");
  require(finite_nonneg(warmup_s), w + ".warmup_s: expected a finite time >= 0");
  require(finite_nonneg(detection_s), w + ".detection_s: expected a finite time >= 0");
}

PerMarket<int> TrainingRunConfig::initial_nodes() const {
  PerMarket<int> n;
  n[Market::spot] = static_cast<int>(std::lround(spot_share * nodes));
  n[Market::reserved] = std::min(static_cast<int>(std::lround(reserved_share * nodes)),
                                 nodes - n[Market::spot]);
  n[Market::on_demand] = nodes - n[Market::spot] - n[Market::reserved];
  return n;
}

double TrainingRunConfig::interruption_rate_per_s() const {
  double rate = 0.0;
  if (std::isfinite(failures.node_mtbf_s)) rate += nodes / failures.node_mtbf_s;
  const CorrelatedFailures& cf = failures.correlated;
  if (cf.domain_nodes > 0 && std::isfinite(cf.domain_mtbf_s)) {
    // Domains per market pool (a pool's slots are numbered from 0), each failing at 1 / mtbf.
    for (const Market m : kAllMarkets) {
      const int n = initial_nodes()[m];
      rate += std::ceil(static_cast<double>(n) / cf.domain_nodes) / cf.domain_mtbf_s;
    }
  }
  const int spot = initial_nodes()[Market::spot];
  if (spot > 0 && reclaims.trace.empty()) {
    rate += spot * reclaims.rate.mean_per_s();
    if (reclaims.correlated.pool_share > 0.0) rate += reclaims.correlated.events_per_s;
  }
  return rate;
}

double TrainingRunConfig::checkpoint_interval_s() const {
  double tau;
  if (checkpoint.interval_s) {
    tau = *checkpoint.interval_s;
  } else {
    const double rate = interruption_rate_per_s();
    tau = rate > 0.0 ? young_daly_interval_s(checkpoint.blocking_s(nodes), 1.0 / rate)
                     : std::numeric_limits<double>::infinity();
    if (checkpoint.mode == CheckpointMode::async) tau = std::max(tau, checkpoint.write_s(nodes));
  }
  if (!std::isfinite(tau)) return tau;
  return std::max(1.0, std::round(tau / step_time_s)) * step_time_s;
}

double TrainingRunConfig::restore_s(int n, bool from_checkpoint) const {
  if (restore.time_s) return *restore.time_s;
  double s = restore.restart.seconds(n) + restore.warmup_s;
  if (from_checkpoint) s += checkpoint.read_s(n);
  return s;
}

void TrainingRunConfig::validate() const {
  require(step_time_s > 0.0 && std::isfinite(step_time_s),
          "training_run.step_time_s: expected a finite time > 0");
  require(finite_nonneg(steps), "training_run.steps: expected a finite count >= 0");
  require(nodes >= 1, "fleet.nodes: expected at least 1");
  require(spot_share >= 0.0 && spot_share <= 1.0, "fleet.spot_share: expected a share in [0, 1]");
  require(reserved_share >= 0.0 && reserved_share <= 1.0 - spot_share,
          "fleet.reserved_share: expected a share in [0, 1 - spot_share]");
  for (const Market m : kAllMarkets)
    require(finite_nonneg(usd_per_node_hour[m]),
            "fleet.prices." + std::string(to_string(m)) + ": expected a finite price >= 0");
  failures.validate("fleet.failures");
  reclaims.validate("fleet.interruptions");
  for (const Market m : kAllMarkets)
    provisioning[m].validate("fleet.provisioning." + std::string(to_string(m)));
  require(fallback_after_s >= 0.0, "fleet.fallback_after_s: expected a time >= 0 (inf: never)");
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
  };
  for (std::size_t s = 0; s < kJobStates; ++s)
    v.emplace_back("time_in_state_s." + std::string(to_string(static_cast<JobState>(s))),
                   time_in_state_s[s]);
  for (const Market m : kAllMarkets) {
    v.emplace_back("cost_usd_by_market." + std::string(to_string(m)), cost_usd_by_market[m]);
    v.emplace_back("node_hours_by_market." + std::string(to_string(m)), node_hours_by_market[m]);
  }
  return v;
}

}  // namespace cs::fleet
