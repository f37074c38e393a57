// Kubernetes HPA against its documentation's worked examples (kubernetes.io, "Horizontal Pod
// Autoscaling": algorithm details; configurable scaling behavior) and its controller's rules
// for unready pods and missing metrics (replica_calculator.go).
#include <catch2/catch.hpp>

#include <vector>

#include "sim/serving/hpa.hpp"

using namespace cs::serving;

namespace {

std::vector<PodMetric> pods_at(int n, double value) {
  std::vector<PodMetric> pods(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    pods[static_cast<std::size_t>(i)] = {static_cast<uint32_t>(i), true, true, value, 0, 0};
  }
  return pods;
}

PodMetric pending(uint32_t id) { return {id, false, false, 0, 0, -1}; }
PodMetric missing(uint32_t id) { return {id, true, false, 0, 0, 0}; }

ScalingInput input_at(double now, int current, const std::vector<PodMetric>& pods) {
  ScalingInput in;
  in.now_s = now;
  in.current_replicas = current;
  in.pods = pods;
  return in;
}

}  // namespace

TEST_CASE("HPA: desired = ceil(current x metric / target), the documentation's examples",
          "[serving][hpa]") {
  const Hpa hpa(HpaSpec{}, 1, 100, 0.100);  // target 100m
  // "if the current metric value is 200m, and the desired value is 100m, the number of
  // replicas will be doubled"
  CHECK(hpa.metric_proposal(3, pods_at(3, 0.200)) == 6);
  // "If the current value is instead 50m, you'll halve the number of replicas"
  CHECK(hpa.metric_proposal(4, pods_at(4, 0.050)) == 2);
  // Within the 0.1 tolerance of the target: no change.
  CHECK(hpa.metric_proposal(10, pods_at(10, 0.105)) == 10);
  CHECK(hpa.metric_proposal(10, pods_at(10, 0.091)) == 10);
  // Just outside it: ceil(1.11 * 10) = 12.
  CHECK(hpa.metric_proposal(10, pods_at(10, 0.111)) == 12);
}

TEST_CASE("HPA: unready pods and missing metrics", "[serving][hpa]") {
  const Hpa hpa(HpaSpec{}, 1, 100, 1.0);
  SECTION("pending pods count as 0 on a scale-up; a flip of direction keeps the count") {
    std::vector<PodMetric> pods = pods_at(2, 1.3);
    for (uint32_t i = 2; i < 5; ++i) pods.push_back(pending(i));
    // Without them ceil(1.3 * 2) = 3 < 5; with them 2.6 / 5 = 0.52 < 1: scale-down, so keep 5.
    CHECK(hpa.metric_proposal(5, pods) == 5);
  }
  SECTION("pending pods dampen a scale-up into the tolerance") {
    std::vector<PodMetric> pods = pods_at(3, 1.5);
    pods.push_back(pending(3));
    pods.push_back(pending(4));
    // 4.5 / 5 = 0.9: within tolerance of 1, keep 5 (instead of ceil(1.5 * 3) = 5 ... or more).
    CHECK(hpa.metric_proposal(5, pods) == 5);
    std::vector<PodMetric> busy = pods_at(3, 3.0);
    busy.push_back(pending(3));
    // 9 / 4 = 2.25 -> ceil(2.25 * 4) = 9.
    CHECK(hpa.metric_proposal(4, busy) == 9);
  }
  SECTION("missing metrics count as the target on a scale-down") {
    std::vector<PodMetric> pods = pods_at(3, 0.5);
    pods.push_back(missing(3));
    // (1.5 + 1) / 4 = 0.625 -> ceil(0.625 * 4) = 3 (not ceil(0.5 * 3) = 2).
    CHECK(hpa.metric_proposal(4, pods) == 3);
  }
  SECTION("missing metrics count as 0 on a scale-up") {
    std::vector<PodMetric> pods = pods_at(2, 1.5);
    pods.push_back(missing(2));
    pods.push_back(missing(3));
    // 3 / 4 = 0.75 < 1: the direction would flip, keep 4.
    CHECK(hpa.metric_proposal(4, pods) == 4);
  }
  SECTION("no pod with a metric: no change") {
    std::vector<PodMetric> pods{pending(0), missing(1)};
    CHECK(hpa.metric_proposal(2, pods) == 2);
  }
}

TEST_CASE("HPA: the default scale-up policy doubles or adds 4 pods per 15 s",
          "[serving][hpa]") {
  Hpa hpa(HpaSpec{}, 1, 50, 1.0);
  int current = 1;
  std::vector<int> seen;
  for (int step = 0; step < 6; ++step) {
    const std::vector<PodMetric> pods = pods_at(current, 100.0);  // far above the target
    current = hpa.desired(input_at(15.0 * step, current, pods));
    seen.push_back(current);
  }
  // max(2 x, +4) per period: 1 -> 5 -> 10 -> 20 -> 40 -> 50 (maxReplicas).
  CHECK(seen == std::vector<int>{5, 10, 20, 40, 50, 50});
}

TEST_CASE("HPA: the scale-down stabilization window keeps the highest recent recommendation",
          "[serving][hpa]") {
  Hpa hpa(HpaSpec{}, 1, 50, 1.0);
  int current = 10;
  // Load at the target for a while: recommendations of 10.
  double t = 0;
  for (; t < 60; t += 15) current = hpa.desired(input_at(t, current, pods_at(current, 1.0)));
  REQUIRE(current == 10);
  const double last_high = t - 15;
  // Load falls to a tenth: the proposal is 1, but the window's highest (10) holds while it is
  // younger than 300 s.
  for (; t < last_high + 300; t += 15) {
    current = hpa.desired(input_at(t, current, pods_at(current, 0.1)));
    CHECK(current == 10);
  }
  // Once every recommendation of 10 is 300 s old or more: down to 1 at once (Percent 100).
  current = hpa.desired(input_at(t, current, pods_at(current, 0.1)));
  CHECK(current == 1);
}

TEST_CASE("HPA: the documentation's scale-down policies example (4 pods or 10% per minute)",
          "[serving][hpa]") {
  HpaSpec spec;
  spec.scale_down.stabilization_window_s = 0;
  spec.scale_down.policies = {{HpaScalingPolicy::Type::pods, 4, 60},
                              {HpaScalingPolicy::Type::percent, 10, 60}};
  Hpa hpa(spec, 1, 100, 1.0);
  int current = 80;
  std::vector<int> per_minute;
  for (int step = 0; step < 40; ++step) {
    const int before = current;
    current = hpa.desired(input_at(15.0 * step, current, pods_at(current, 0.001)));
    if (step % 4 == 0) {
      per_minute.push_back(current);
    } else {
      CHECK(current == before);  // one change per 60 s period
    }
  }
  // "when the number of replicas is 80 ... 8 replicas will be reduced ... 72, 10% is 7.2
  // rounded up to 8"; below 40 replicas the Pods policy (4) allows more and takes over.
  CHECK(per_minute == std::vector<int>{72, 64, 57, 51, 45, 40, 36, 32, 28, 24});
}

TEST_CASE("HPA: outside [min, max] the answer is the bound, at once", "[serving][hpa]") {
  Hpa hpa(HpaSpec{}, 2, 6, 1.0);
  CHECK(hpa.desired(input_at(0, 9, pods_at(9, 1.0))) == 6);
  CHECK(hpa.desired(input_at(15, 1, pods_at(1, 1.0))) == 2);
  // A proposal above max is capped there.
  CHECK(hpa.desired(input_at(30, 4, pods_at(4, 10.0))) == 6);
}

TEST_CASE("HPA: selectPolicy Min and Disabled", "[serving][hpa]") {
  HpaSpec spec;
  spec.scale_up.select = HpaScalingRules::Select::min;  // the smaller of 100% and +4
  Hpa hpa(spec, 1, 100, 1.0);
  CHECK(hpa.desired(input_at(0, 10, pods_at(10, 10.0))) == 14);
  HpaSpec off;
  off.scale_up.select = HpaScalingRules::Select::disabled;
  Hpa frozen(off, 1, 100, 1.0);
  CHECK(frozen.desired(input_at(0, 10, pods_at(10, 10.0))) == 10);
}
