// Knative KPA, AWS target tracking and step scaling, scheduled and predictive scaling, each
// against the rules its system documents; and every policy keeps a running fleet within
// [min, max].
#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>
#include <vector>

#include "serving_test_support.hpp"
#include "sim/serving/autoscaler_spec.hpp"
#include "sim/serving/holt_winters.hpp"

using namespace cs::serving;
using namespace cs::serving::test;

namespace {

std::vector<PodMetric> ready_pods(int n, double value, double launched_s = 0) {
  std::vector<PodMetric> pods;
  for (int i = 0; i < n; ++i) pods.push_back({static_cast<uint32_t>(i), true, true, value, launched_s, launched_s});
  return pods;
}

// One KPA tick: the fleet's concurrency over the last 2 s.
ScalingInput tick(double now, int ready, double total, int current) {
  ScalingInput in;
  in.now_s = now;
  in.window_s = 2;
  in.ready_replicas = ready;
  in.current_replicas = current;
  in.fleet_total = total;
  return in;
}

ScalingInput period(double now, int current, const std::vector<PodMetric>& pods, double window = 60) {
  ScalingInput in;
  in.now_s = now;
  in.window_s = window;
  in.current_replicas = current;
  in.ready_replicas = current;
  in.pods = pods;
  return in;
}

}  // namespace

TEST_CASE("KPA: stable mode sizes for the 60 s average at 70% of the target", "[serving][kpa]") {
  Kpa kpa(KpaSpec{}, 1, 100, 100);  // target 100 concurrent, 70% utilization: 70 per pod
  int desired = 0;
  for (double t = 2; t <= 120; t += 2) desired = kpa.desired(tick(t, 5, 350, 5));
  CHECK(kpa.stable_value() == Approx(350));
  CHECK(desired == 5);  // ceil(350 / 70)
  for (double t = 122; t <= 240; t += 2) desired = kpa.desired(tick(t, 5, 420, 5));
  CHECK(desired == 6);  // ceil(420 / 70)
}

TEST_CASE("KPA: panics at 200% over the 6 s window and never scales down while panicking",
          "[serving][kpa]") {
  Kpa kpa(KpaSpec{}, 1, 100, 100);
  double t = 2;
  for (; t <= 120; t += 2) kpa.desired(tick(t, 2, 100, 2));  // settles at ceil(100 / 70) = 2
  REQUIRE_FALSE(kpa.panicking());
  // A burst to 700 concurrent: the 6 s average climbs within a tick or two.
  int desired = kpa.desired(tick(t, 2, 700, 2));
  CHECK(kpa.panicking());  // ceil(300 / 70) = 5 >= 2 x 2 ready
  CHECK(desired == 5);
  t += 2;
  desired = kpa.desired(tick(t, 2, 700, 5));
  CHECK(desired == 8);  // ceil(500 / 70)
  t += 2;
  desired = kpa.desired(tick(t, 2, 700, 8));
  CHECK(desired == 10);  // ceil(700 / 70)
  // Load back to 100 with 10 pods ready: still panicking, the count holds.
  const double last_crossing = t;
  for (t += 2; t <= last_crossing + 60; t += 2) {
    desired = kpa.desired(tick(t, 10, 100, desired));
    CHECK(desired == 10);
  }
  // 60 s without crossing the threshold: panic ends, the stable average decides, at most
  // halving the ready count per decision (max-scale-down-rate 2).
  desired = kpa.desired(tick(t, 10, 100, desired));
  CHECK_FALSE(kpa.panicking());
  CHECK(desired == 5);
}

TEST_CASE("KPA: scale to zero only after the grace period", "[serving][kpa]") {
  Kpa kpa(KpaSpec{}, 0, 10, 100);
  int desired = 1;
  double t = 2;
  for (; t < 30; t += 2) {
    desired = kpa.desired(tick(t, 1, 0, desired));
    CHECK(desired == 1);
  }
  for (; t <= 34; t += 2) desired = kpa.desired(tick(t, 1, 0, desired));
  CHECK(desired == 0);
}

TEST_CASE("Target tracking: out after 3 datapoints above, proportionally", "[serving][target_tracking]") {
  TargetTrackingSpec spec;
  spec.instance_warmup_s = 0;
  TargetTracking tt(spec, 1, 100, 0.5);
  const auto pods = ready_pods(4, 0.75);
  CHECK(tt.desired(period(60, 4, pods)) == 4);
  CHECK(tt.desired(period(120, 4, pods)) == 4);
  CHECK(tt.desired(period(180, 4, pods)) == 6);  // ceil(4 x 0.75 / 0.5)
}

TEST_CASE("Target tracking: in after 15 datapoints below 90% of the target, then a cooldown",
          "[serving][target_tracking]") {
  TargetTrackingSpec spec;
  spec.instance_warmup_s = 0;
  TargetTracking tt(spec, 1, 100, 0.5);
  int current = 10;
  double t = 60;
  for (int i = 1; i < 15; ++i, t += 60) CHECK(tt.desired(period(t, current, ready_pods(current, 0.2))) == 10);
  current = tt.desired(period(t, current, ready_pods(current, 0.2)));
  CHECK(current == 4);  // ceil(10 x 0.2 / 0.5)
  // Still low: the next scale-in waits for the 300 s scale-in cooldown.
  const double scaled_in = t;
  for (t += 60; t < scaled_in + 300; t += 60) CHECK(tt.desired(period(t, current, ready_pods(current, 0.1))) == 4);
  CHECK(tt.desired(period(t, current, ready_pods(current, 0.1))) == 1);
}

TEST_CASE("Target tracking: replicas warming up are left out of the metric", "[serving][target_tracking]") {
  TargetTracking tt(TargetTrackingSpec{}, 1, 100, 0.5);  // 300 s warm-up
  // Two warm replicas below the target, two launched at 1000 s (still warming up) far above.
  std::vector<PodMetric> pods = ready_pods(2, 0.4, 0);
  const std::vector<PodMetric> warming = ready_pods(2, 5.0, 1000);
  pods.insert(pods.end(), warming.begin(), warming.end());
  int desired = 0;
  for (double t = 1060; t <= 1180; t += 60) desired = tt.desired(period(t, 4, pods));
  CHECK(desired == 4);  // the alarm sees 0.4, not 2.7
  // Past the warm-up they count: ceil(4 x 2.7 / 0.5) = 22.
  for (double t = 1300; t <= 1420; t += 60) desired = tt.desired(period(t, 4, pods));
  CHECK(desired == 22);
}

TEST_CASE("Step scaling: the step by breach size, percent rounding, cooldown", "[serving][step]") {
  StepScalingSpec spec;
  spec.period_s = 60;
  spec.cooldown_s = 300;
  spec.scale_out = {0.7, 1, {{0, 0.1, 1}, {0.1, std::numeric_limits<double>::infinity(), 3}}};
  spec.scale_in = {0.3, 2, {{-std::numeric_limits<double>::infinity(), 0, -1}}};
  StepScaling step(spec, 1, 20);
  CHECK(step.desired(period(60, 5, ready_pods(5, 0.75))) == 6);   // 0.05 past: +1
  // Within the cooldown the capacity the first scale-out added counts: 5 + 3, not 6 + 3.
  CHECK(step.desired(period(120, 6, ready_pods(6, 0.95))) == 8);
  CHECK(step.desired(period(400, 8, ready_pods(8, 0.95))) == 11);  // cooldown over: 8 + 3
  CHECK(step.desired(period(460, 11, ready_pods(11, 0.2))) == 11); // one low datapoint of 2
  CHECK(step.desired(period(520, 11, ready_pods(11, 0.2))) == 10);
  CHECK(step.desired(period(580, 10, ready_pods(10, 0.2))) == 10); // scale-in cooldown

  StepScalingSpec pct = spec;
  pct.adjustment_type = AdjustmentType::percent_change_in_capacity;
  StepScaling percent(pct, 0, 1000);
  CHECK(percent.apply(100, 12.7) == 112);  // 12.7 -> 12
  CHECK(percent.apply(100, -6.67) == 94);  // -6.67 -> -6
  CHECK(percent.apply(10, 5) == 11);       // 0.5 -> 1
  pct.min_adjustment_magnitude = 3;
  CHECK(StepScaling(pct, 0, 1000).apply(10, 5) == 13);
}

TEST_CASE("Scheduled scaling: the latest action sets the bounds, daily", "[serving][scheduled]") {
  ScheduledSpec spec;
  spec.actions = {{8 * 3600.0, 86400, 6, 6}, {20 * 3600.0, 86400, 2, 2}};
  ScheduledScaling sched(spec, 1, 10);
  CHECK(sched.bounds_at(7 * 3600.0) == std::pair<int, int>{1, 10});  // nothing fired yet
  CHECK(sched.bounds_at(9 * 3600.0) == std::pair<int, int>{6, 6});
  CHECK(sched.bounds_at(21 * 3600.0) == std::pair<int, int>{2, 2});
  CHECK(sched.bounds_at(86400 + 7 * 3600.0) == std::pair<int, int>{2, 2});  // last night's
  CHECK(sched.bounds_at(86400 + 8 * 3600.0) == std::pair<int, int>{6, 6});
  CHECK(sched.desired(period(9 * 3600.0, 3, ready_pods(3, 0))) == 6);
}

TEST_CASE("Holt-Winters forecasts a trending daily pattern", "[serving][predictive]") {
  const std::size_t m = 24;
  HoltWinters hw(m, 0.3, 0.05, 0.3);
  const auto series = [&](std::size_t t) {
    return 100 + 0.5 * static_cast<double>(t) + 40 * std::sin(2 * std::numbers::pi * static_cast<double>(t) / m);
  };
  for (std::size_t t = 0; t < 5 * m; ++t) hw.add(series(t));
  REQUIRE(hw.ready());
  for (std::size_t h = 1; h <= m; ++h) CHECK(hw.forecast(h) == Approx(series(5 * m - 1 + h)).epsilon(1e-6));
}

namespace {
// A reactive policy that always answers `n`.
class Constant final : public Autoscaler {
 public:
  explicit Constant(int n) : n_(n) {}
  double period_s() const override { return 60; }
  int desired(const ScalingInput&) override { return n_; }
  int n_;
};
}  // namespace

TEST_CASE("Predictive scaling launches ahead of the daily peak and never scales in alone",
          "[serving][predictive]") {
  PredictiveSpec spec;
  spec.target_per_replica = 10;
  spec.bucket_s = 900;
  spec.scheduling_buffer_s = 1800;
  auto inner = std::make_unique<Constant>(1);
  Constant* reactive = inner.get();
  PredictiveScaling predictive(spec, 1, 100, std::move(inner));
  // A load of 100 + 80 cos(...) requests/s peaking at 14:00 every day.
  const auto rate = [](double t) { return 100 + 80 * std::cos(2 * std::numbers::pi * (t - 14 * 3600.0) / 86400); };
  int desired = 0;
  double t = 60;
  for (; t < 2 * 86400; t += 60) {
    ScalingInput in = period(t, 1, {});
    in.arrival_rate_per_s = rate(t - 30);
    desired = predictive.desired(in);
  }
  CHECK(desired == 1);  // no forecast before two days of history
  CHECK_FALSE(predictive.model().ready());
  // On day 3 (the forecast ready from its first minute), at 13:00 the load is ~169/s; the forecast 30 min ahead (~176/s) asks for 18.
  for (; t <= 2 * 86400 + 13 * 3600.0; t += 60) {
    ScalingInput in = period(t, 1, {});
    in.arrival_rate_per_s = rate(t - 30);
    desired = predictive.desired(in);
  }
  CHECK(desired >= static_cast<int>(std::ceil(rate(t) / 10)));
  CHECK(desired == Approx(std::ceil(rate(t - 60 + 1800) / 10)).margin(1));
  // The reactive policy asking for more wins; the forecast only raises the count.
  reactive->n_ = 40;
  CHECK(predictive.desired(period(t, 18, {})) == 40);
}

TEST_CASE("Every policy keeps a running fleet within [min, max]", "[serving][autoscaler]") {
  const ScalingPolicy policy = GENERATE(ScalingPolicy::hpa, ScalingPolicy::kpa,
                                        ScalingPolicy::target_tracking, ScalingPolicy::step,
                                        ScalingPolicy::predictive);
  // 6 requests/s of 1 s on average: the load (6 in service, utilization 0.5 of the 12 slots)
  // and the scaling are those of 60/s of 100 ms, with a tenth of the requests to simulate.
  ServingConfig c = plain_fleet(3, 4, 6, cs::work::Distribution::exponential(1.0), 6 * 3600.0);
  c.arrivals.process = cs::work::ArrivalProcess::diurnal;
  c.arrivals.diurnal.period_s = 3600;  // an hourly "day" so the run crosses many cycles
  c.arrivals.diurnal.peak_to_mean = 1.9;
  c.fleet.pool.cold_start = ColdStartSpec{};
  c.fleet.pool.cold_start.node_boot = cs::work::Distribution::exponential(30);
  AutoscalerSpec& a = c.fleet.autoscaler;
  a.policy = policy;
  a.min_replicas = 2;
  a.max_replicas = 5;
  a.metric = policy == ScalingPolicy::kpa ? MetricKind::concurrency : MetricKind::utilization;
  a.target = policy == ScalingPolicy::kpa ? 3.0 : 0.6;
  a.target_tracking.instance_warmup_s = 60;
  a.step.scale_out = {0.7, 1, {{0, std::numeric_limits<double>::infinity(), 2}}};
  a.step.scale_in = {0.3, 3, {{-std::numeric_limits<double>::infinity(), 0, -1}}};
  a.predictive.bucket_s = 300;
  a.predictive.season_s = 3600;
  a.predictive.target_per_replica = 1.5;  // requests/s: the same share of the arrivals
  c.timeseries_interval_s = 10;
  cs::engine::Simulator sim(11);
  ServingFleet fleet(sim, c);
  fleet.start();
  sim.run(c.until_s);
  const auto* desired = sim.recorder().series("serving.replicas_desired");
  const auto* ready = sim.recorder().series("serving.replicas_ready");
  const auto* starting = sim.recorder().series("serving.replicas_starting");
  REQUIRE(desired);
  int low = 100, high = 0;
  for (std::size_t i = 0; i < desired->size(); ++i) {
    const int active = static_cast<int>((*ready)[i].value + (*starting)[i].value);
    CHECK((*desired)[i].value >= 2);
    CHECK((*desired)[i].value <= 5);
    CHECK(active >= 2);
    CHECK(active <= 5);
    low = std::min(low, active);
    high = std::max(high, active);
  }
  INFO(to_string(policy));
  CHECK(high > low);  // it did scale
  const ServingResult r = fleet.result();
  CHECK(r.replicas_max <= 5 + 5);  // draining replicas finish their work while new ones start
}
