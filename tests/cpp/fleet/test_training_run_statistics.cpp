// Training runs against closed forms in expectation: Daly's expected completion time, the
// Young/Daly interval at the optimum of a sweep, reclaims = rate x node-hours, cost = node-hours
// x price, and replications identical for any thread count. Seeds are fixed; tolerances are
// 4 standard errors of the replications.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "fleet_test_support.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/fleet/replications.hpp"
#include "sim/fleet/training_run.hpp"

using namespace cs::fleet;
using cs::sources::Distribution;
using cs::fleet::test::kHour;
using cs::fleet::test::quiet_config;

namespace {


std::vector<double> walls(const std::vector<TrainingRunResult>& results) {
  std::vector<double> w;
  for (const TrainingRunResult& r : results) w.push_back(r.wall_time_s);
  return w;
}

// Daly's setting: exponential failures of the whole job (mean M), checkpoint C, no restart
// cost, work W = 20 tau.
TrainingRunConfig daly_config(double tau, double work) {
  TrainingRunConfig c = quiet_config(8, work, tau, 60.0);
  c.failures.node_mtbf_s = 8 * kHour;  // 8 nodes: the job fails every M = 1 h on average
  c.restore.time_s = 0.0;
  c.record_timeseries = false;
  return c;
}

}  // namespace

// The three Daly cases are [heavy] (thousands of replications: their sample is the point); the
// sanitized ctest leaves them out and runs the cases below, and test_training_run_timeline.cpp's
// failures, checkpoints and emergency checkpoints step by step.
TEST_CASE("With exponential failures and no restart cost, the mean wall time is Daly's",
          "[fleet][training_run][daly][heavy]") {
  const double M = kHour;
  const double C = 60.0;
  const double tau = 600.0;
  const double W = 20 * tau;
  const auto results = run_training_replications(daly_config(tau, W), 4000, 1000);
  const auto w = walls(results);
  const cs::engine::MeanCi s = cs::engine::mean_ci95(w);
  // Each of the W / tau segments (tau of work + C of checkpoint, a failure anywhere in it
  // restarts it) takes M (e^((tau + C)/M) - 1) on average: 14,489 s in all.
  const double expected = daly_expected_wall_time_s(W, tau, C, M);
  CHECK(expected == Approx(20 * M * std::expm1((tau + C) / M)));
  INFO("mean " << s.mean << " +- " << s.ci95 << ", Daly " << expected);
  CHECK(std::abs(s.mean - expected) <= 4 * s.sd / std::sqrt(static_cast<double>(s.n)));
  // Goodput of the means against tau / (M (e^((tau + C)/M) - 1)).
  CHECK(W / s.mean == Approx(tau / (M * std::expm1((tau + C) / M))).epsilon(0.01));
  // The lost work and the failures are consistent with the wall time: wall = W + lost + C x
  // (checkpoints and writes cut short).
  for (const TrainingRunResult& r : results) {
    const double ckpt = r.time_in_state_s[static_cast<std::size_t>(JobState::checkpointing)];
    REQUIRE(r.wall_time_s == Approx(W + r.lost_work_s + ckpt).epsilon(1e-9));
  }
}

TEST_CASE("The auto (Young/Daly) interval is at the optimum of a sweep",
          "[fleet][training_run][daly][heavy]") {
  const double W = 12000.0;
  TrainingRunConfig c = daly_config(1.0, W);
  c.checkpoint.interval_s.reset();
  const double tau_auto = c.checkpoint_interval_s();
  // Daly's higher-order optimum for C = 60 s, M = 1 h, rounded to whole 1 s steps.
  CHECK(tau_auto == std::round(young_daly_interval_s(60.0, kHour)));
  CHECK(tau_auto == Approx(618).margin(1));
  // The closed form's minimum over a fine grid is there too.
  double best_tau = 0.0;
  double best = 1e300;
  for (double tau = 100; tau <= 3000; tau += 1) {
    const double t = daly_expected_wall_time_s(W, tau, 60.0, kHour);
    if (t < best) {
      best = t;
      best_tau = tau;
    }
  }
  CHECK(best_tau == Approx(tau_auto).epsilon(0.02));
  // Simulated: the auto interval's mean wall time beats a sweep of 1/4 .. 4 times it (the same
  // seeds for every interval: common random numbers).
  const std::size_t reps = 1500;
  const double at_auto = cs::engine::mean(walls(run_training_replications(c, reps, 2000)));
  for (const double factor : {0.25, 0.5, 2.0, 4.0}) {
    TrainingRunConfig swept = c;
    swept.checkpoint.interval_s = factor * tau_auto;
    const double mean = cs::engine::mean(walls(run_training_replications(swept, reps, 2000)));
    INFO("interval x" << factor << ": " << mean << " s; auto: " << at_auto << " s");
    CHECK(at_auto < mean);
  }
}

TEST_CASE("On spot with emergency checkpoints, auto checkpoints for the failures only, and wins",
          "[fleet][training_run][daly][heavy]") {
  // 8 spot nodes reclaimed once an hour (a 2 min notice) and failing once in 4 hours; 60 s
  // writes fit the notice, so a reclaim costs an emergency checkpoint and loses nothing.
  TrainingRunConfig c = quiet_config(8, 30000.0, 1.0, 60.0);
  c.checkpoint.interval_s.reset();
  c.checkpoint.emergency_on_notice = true;
  c.spot_share = 1.0;
  c.reclaims.rate.base_per_s = 1.0 / (8 * kHour);
  c.reclaims.warning_s = 120.0;
  c.failures.node_mtbf_s = 32 * kHour;
  c.restore.time_s = 0.0;
  c.record_timeseries = false;
  const double tau_auto = c.checkpoint_interval_s();
  CHECK(tau_auto == std::round(young_daly_interval_s(60.0, 4 * kHour)));
  // Against the interval for every interruption (M = 48 min), on the same seeds.
  TrainingRunConfig every = c;
  every.checkpoint.interval_s = std::round(young_daly_interval_s(60.0, 0.8 * kHour));
  const std::size_t reps = 1000;
  const auto at_auto = walls(run_training_replications(c, reps, 3000));
  const auto at_every = walls(run_training_replications(every, reps, 3000));
  std::vector<double> diff;
  for (std::size_t i = 0; i < reps; ++i) diff.push_back(at_every[i] - at_auto[i]);
  const cs::engine::MeanCi d = cs::engine::mean_ci95(diff);
  INFO("wall(every interruption) - wall(auto) = " << d.mean << " +- " << d.ci95 << " s");
  CHECK(d.mean - d.ci95 > 0);
}

TEST_CASE("Reclaims counted match rate x spot node-hours", "[fleet][training_run]") {
  TrainingRunConfig c = quiet_config(64, 200 * kHour, 2 * kHour, 30.0);
  c.spot_share = 1.0;
  c.reclaims.rate.base_per_s = 0.01 / kHour;
  c.reclaims.capacity_return = Distribution::exponential(900.0);
  c.record_timeseries = false;
  double count = 0.0;
  double expected = 0.0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const TrainingRunResult r = run_training(c, seed);
    REQUIRE(r.completed);
    count += static_cast<double>(r.reclaims);
    // Warning 0: every held spot node is exposed, so exposure = spot node-hours.
    expected += c.reclaims.rate.base_per_s * kHour * r.node_hours_by_market[Market::spot];
    CHECK(r.interruptions <= r.reclaims);  // reclaims while waiting hit no work
  }
  INFO("reclaims " << count << ", rate x node-hours " << expected);
  CHECK(std::abs(count - expected) <= 4 * std::sqrt(expected));
}

TEST_CASE("Cost = sum over markets of billed node-hours x price, node-hours from the fleet's series",
          "[fleet][training_run]") {
  TrainingRunConfig c = quiet_config(20, 50 * kHour, kHour, 60.0);
  c.spot_share = 0.6;
  c.reserved_share = 0.2;
  c.reclaims.rate.base_per_s = 0.05 / kHour;
  c.reclaims.capacity_return = Distribution::exponential(3600.0);
  c.fallback_after_s = 1800.0;
  c.provisioning[Market::on_demand] = Distribution::constant(300.0);
  c.failures.node_mtbf_s = 500 * kHour;
  c.failures.replacement = Distribution::constant(600.0);
  cs::engine::Simulator sim(3);
  TrainingRun run(sim, c);
  run.start();
  sim.run(c.max_wall_time_s);
  const TrainingRunResult r = run.result();
  REQUIRE(r.completed);
  CHECK(r.fallbacks > 0);
  double total = 0.0;
  for (const Market m : kAllMarkets) {
    // The recorded nodes-held series integrates to the same node-hours as the ledger.
    const double from_series = cs::fleet::test::integrate_steps(
        sim.recorder(), "training_run.nodes." + std::string(to_string(m)), r.wall_time_s);
    CHECK(from_series / kHour == Approx(r.node_hours_by_market[m]).epsilon(1e-9));
    // Reserved nodes are committed: billed every hour of the run, held or not.
    const double billed_hours = m == Market::reserved ? c.initial_nodes()[m] * r.wall_time_s / kHour
                                                      : r.node_hours_by_market[m];
    CHECK(r.cost_usd_by_market[m] == Approx(billed_hours * c.usd_per_node_hour[m]).epsilon(1e-12));
    total += billed_hours * c.usd_per_node_hour[m];
  }
  // Held at most what is billed (tests/cpp/fleet/test_money.cpp: billed while failed).
  CHECK(r.node_hours_by_market[Market::reserved] <= c.initial_nodes()[Market::reserved] * r.wall_time_s / kHour);
  CHECK(r.cost_usd == Approx(total).epsilon(1e-12));
  // The cumulative cost series ends at the total.
  const auto* cost = sim.recorder().series("training_run.cost_usd");
  REQUIRE(cost != nullptr);
  CHECK(cost->back().value == Approx(r.cost_usd).epsilon(1e-12));
  // The state series starts with the launch and ends done.
  const auto* state = sim.recorder().series("training_run.state");
  REQUIRE(state != nullptr);
  CHECK(state->front().value == static_cast<double>(JobState::starting));
  CHECK(state->back().value == static_cast<double>(JobState::done));
  // Time in states adds up to the wall time.
  double in_states = 0.0;
  for (const double t : r.time_in_state_s) in_states += t;
  CHECK(in_states == Approx(r.wall_time_s).epsilon(1e-12));
}

TEST_CASE("Replications are identical for any thread count", "[fleet][replications]") {
  TrainingRunConfig c;  // the defaults: Llama 3 failures, AWS spot reclaims, auto interval
  c.nodes = 256;
  c.step_time_s = 5.0;
  c.steps = 5 * 86400.0 / c.step_time_s;
  c.spot_share = 0.5;
  c.fallback_after_s = 1200.0;
  c.checkpoint.size_bytes = 1e12;
  c.checkpoint.mode = CheckpointMode::async;
  c.record_timeseries = false;
  const auto serial = run_training_replications(c, 24, 42, 1);
  const auto two = run_training_replications(c, 24, 42, 2);
  const auto any = run_training_replications(c, 24, 42, 0);
  REQUIRE(serial.size() == 24);
  for (std::size_t i = 0; i < serial.size(); ++i) {
    CHECK(serial[i].summary_numbers() == two[i].summary_numbers());
    CHECK(serial[i].summary_numbers() == any[i].summary_numbers());
  }
  // Replication i is seed 42 + i.
  CHECK(run_training(c, 42 + 5).summary_numbers() == serial[5].summary_numbers());
  // The summary has a mean and a 95% CI for every number, in the result's order.
  const auto summary = summarize(serial);
  REQUIRE(summary.size() == serial[0].summary_numbers().size());
  CHECK(summary[0].name == "wall_time_s");
  CHECK(summary[0].stat.n == 24);
  CHECK(summary[0].stat.ci95 > 0.0);
  CHECK(summarize(serial)[1].stat.mean == summarize(two)[1].stat.mean);
}
