// A 60-day training run on 2,048 nodes (8 x H100 each, aws.p5.48xlarge prices) with realistic
// failure and reclaim rates, 100 replications: the target is under 10 s.
//
// The run: 60 days of useful work (steps x step time), Llama 3's node failure rate and
// root-cause split, 70% of the nodes on spot at the default reclaim rate (the AWS Spot Advisor's
// ">20% per month" bucket) with a 2-minute notice, spot capacity back after 30 min on average
// and a fallback to on-demand after 15 min, a 5.7 TB checkpoint (405B parameters: bf16 weights
// + fp32 master weights and Adam moments, 14 bytes per parameter) sharded to a parallel file
// system, Young/Daly interval, MegaScale-style restart overhead.
//
// Prints the median wall time of the 100 replications over repetitions (TBB, all cores; then
// serial), events per replication, and the replicated outcome (mean and 95% CI) for on-demand,
// spot and the 70/30 mix, each with its interval. Benchmarks never fail: they report.
//
// Usage: bench_fleet [--quick]   (--quick: 20 replications, 1 repetition)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "bench/bench_util.hpp"
#include "sim/fleet/instance_prices.hpp"
#include "sim/fleet/replications.hpp"

namespace {

using namespace cs::fleet;
using clock_type = std::chrono::steady_clock;

constexpr double kDay_s = 86400.0;

TrainingRunConfig llama_scale_run(double spot_share) {
  TrainingRunConfig c;
  c.nodes = 2048;
  c.step_time_s = 10.0;
  c.steps = 60.0 * kDay_s / c.step_time_s;
  c.spot_share = spot_share;
  c.usd_per_node_hour = InstancePriceCatalog::builtin().usd_per_hour("aws.p5.48xlarge");
  c.fallback_after_s = 900.0;
  c.checkpoint.size_bytes = 405e9 * 14.0;
  c.record_timeseries = false;
  return c;
}

using cs::bench::median;

double timed(const TrainingRunConfig& c, std::size_t reps, int threads,
             std::vector<TrainingRunResult>* out) {
  const auto t0 = clock_type::now();
  auto results = run_training_replications(c, reps, 1, threads);
  const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
  if (out) *out = std::move(results);
  return s;
}

const cs::engine::MeanCi& stat(const std::vector<NamedStat>& s, const char* name) {
  for (const NamedStat& n : s)
    if (n.name == name) return n.stat;
  static const cs::engine::MeanCi none;
  return none;
}

void report(const char* label, const TrainingRunConfig& c, const std::vector<TrainingRunResult>& r) {
  const auto s = summarize(r);
  const auto& wall = stat(s, "wall_time_s");
  const auto& cost = stat(s, "cost_usd");
  std::printf("  %-10s interval %6.0f s  days %6.2f +- %.2f  goodput %.3f +- %.3f  "
              "$%.2fM +- %.2fM  interruptions %6.0f  failures %5.0f  checkpoints %6.0f\n",
              label, r.front().checkpoint_interval_s, wall.mean / kDay_s, wall.ci95 / kDay_s,
              stat(s, "goodput").mean, stat(s, "goodput").ci95, cost.mean / 1e6, cost.ci95 / 1e6,
              stat(s, "interruptions").mean, stat(s, "failures").mean,
              stat(s, "checkpoints").mean);
  (void)c;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const std::size_t reps = quick ? 20 : 100;
  const int repeats = quick ? 1 : 5;

  const TrainingRunConfig mix = llama_scale_run(0.7);
  std::vector<TrainingRunResult> results;
  std::vector<double> parallel_s;
  for (int i = 0; i < repeats; ++i) parallel_s.push_back(timed(mix, reps, 0, &results));
  const double serial_s = timed(mix, reps, 1, nullptr);
  double events = 0.0;
  for (const TrainingRunResult& r : results) events += static_cast<double>(r.events);
  events /= static_cast<double>(results.size());

  std::printf("bench_fleet: 2,048 nodes, 60 days of work, 70%% spot, %zu replications\n", reps);
  std::printf("  wall time of %zu replications: median %.3f s over %d repetitions (TBB, all "
              "cores), %.3f s serial; target < 10 s\n",
              reps, median(parallel_s), repeats, serial_s);
  std::printf("  events per replication: %.0f (%.2f M events/s serial)\n", events,
              events * static_cast<double>(reps) / serial_s / 1e6);
  cs::bench::figure("fleet/replications_wall", median(parallel_s), "s", cs::bench::Better::lower);
  cs::bench::figure("fleet/serial", serial_s, "s", cs::bench::Better::lower);

  std::printf("on-demand vs spot vs mix, same job (mean +- 95%% CI over %zu replications):\n", reps);
  report("mix 70/30", mix, results);
  for (const double share : {0.0, 1.0}) {
    const TrainingRunConfig c = llama_scale_run(share);
    std::vector<TrainingRunResult> r;
    timed(c, reps, 0, &r);
    report(share == 0.0 ? "on-demand" : "spot", c, r);
  }
  return 0;
}
