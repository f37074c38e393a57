#pragma once
// Shared set-up for the fleet tests: a training run with every overhead switched off, so that
// hand-worked timelines are exact, and helpers to integrate recorded step functions.
#include <cmath>
#include <limits>
#include <string>

#include "sim/engine/recorder.hpp"
#include "sim/fleet/training_run_config.hpp"

namespace cs::fleet::test {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kHour = 3600.0;

// No failures, no reclaims, no warning, instant replacements: a test adds what it exercises.
inline void quiet(FailureConfig& failures, SpotReclaimConfig& reclaims) {
  failures.node_mtbf_s = kInf;
  failures.causes.clear();
  failures.replacement = cs::sources::Distribution::constant(0.0);
  reclaims.rate.base_per_s = 0.0;
  reclaims.warning_s = 0.0;
  reclaims.capacity_return = cs::sources::Distribution::constant(0.0);
}

// nodes on demand, no failures, no reclaims, steps x 1 s of work, checkpoints written in
// write_s (given), restores and launches free, replacements instant, no fallback.
inline TrainingRunConfig quiet_config(int nodes, double steps, double interval_s,
                                      double write_s) {
  TrainingRunConfig c;
  c.nodes = nodes;
  c.step_time_s = 1.0;
  c.steps = steps;
  c.usd_per_node_hour[Market::on_demand] = 10.0;
  c.usd_per_node_hour[Market::spot] = 3.0;
  c.usd_per_node_hour[Market::reserved] = 6.0;
  quiet(c.failures, c.reclaims);
  for (const Market m : kAllMarkets) c.provisioning[m] = cs::sources::Distribution::constant(0.0);
  c.checkpoint.interval_s = interval_s;
  c.checkpoint.write_time_s = write_s;
  c.checkpoint.emergency_on_notice = false;
  c.restore.restart = RestartOverhead{0.0, 0.0, 0.0};
  c.restore.warmup_s = 0.0;
  c.restore.detection_s = 0.0;
  c.restore.launch_overhead_at_start = false;
  return c;
}

// Integral of a recorded step function (value held from each sample to the next) up to `end`.
inline double integrate_steps(const engine::Recorder& rec, const std::string& series, double end) {
  const auto* samples = rec.series(series);
  if (!samples) return 0.0;
  double total = 0.0;
  for (std::size_t i = 0; i < samples->size(); ++i) {
    const double t0 = (*samples)[i].time;
    const double t1 = i + 1 < samples->size() ? (*samples)[i + 1].time : end;
    total += (*samples)[i].value * (std::min(t1, end) - t0);
  }
  return total;
}

}  // namespace cs::fleet::test
