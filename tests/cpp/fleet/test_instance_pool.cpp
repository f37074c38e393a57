// InstancePool: its event streams against their rates (counts within 4 standard deviations of
// rate x exposure; the seeds are fixed, so the checks are deterministic), correlated events,
// replacements, fallback, billing and reproducibility.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "fleet_test_support.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/fleet/instance_pool.hpp"

using namespace cs::fleet;
using cs::sources::Distribution;
using cs::fleet::test::kHour;
using cs::engine::Simulator;
using cs::fleet::test::kInf;

namespace {


// Records what the pool says.
struct Log final : InstancePoolListener {
  std::vector<double> notice_times;
  std::vector<std::size_t> notice_sizes;
  std::vector<std::vector<int>> interrupted;
  std::vector<Interruption> events;
  int ready = 0;
  Simulator* sim = nullptr;
  void on_reclaim_notice(InstancePool&, std::span<const int> ids, double) override {
    notice_times.push_back(sim->now());
    notice_sizes.push_back(ids.size());
  }
  void on_interruption(InstancePool&, std::span<const int> ids, const Interruption& e) override {
    interrupted.emplace_back(ids.begin(), ids.end());
    events.push_back(e);
  }
  void on_ready(InstancePool&, std::span<const int> ids) override {
    ready += static_cast<int>(ids.size());
  }
};

InstancePoolConfig quiet_pool(Market market, std::string name = std::string("pool")) {
  InstancePoolConfig c;
  c.name = std::move(name);
  c.market = market;
  c.usd_per_hour = 2.0;
  cs::fleet::test::quiet(c.failures, c.reclaims);
  return c;
}

// A simulator, a ledger and a listener that logs, for one pool under test.
struct Rig {
  Simulator sim;
  CostLedger ledger;
  Log log;
  explicit Rig(uint64_t seed) : sim(seed) { log.sim = &sim; }
};

// |count - expected| <= 4 sd, sd = sqrt(variance).
void check_count(double count, double expected, double variance) {
  INFO("count " << count << ", expected " << expected << " +- " << 4 * std::sqrt(variance));
  CHECK(std::abs(count - expected) <= 4.0 * std::sqrt(variance));
}

}  // namespace

TEST_CASE("Reclaims match rate x exposed instance-hours", "[fleet][pool]") {
  Rig rig(11);
  auto& [sim, ledger, log] = rig;
  InstancePoolConfig c = quiet_pool(Market::spot);
  c.reclaims.rate.base_per_s = 0.5 / kHour;
  c.reclaims.warning_s = 120.0;
  c.reclaims.capacity_return = Distribution::exponential(600.0);
  InstancePool pool(sim, c, ledger, &log);
  pool.start_held(50);
  sim.run(2000 * kHour);
  // Counting process minus rate x exposure is a martingale: mean 0, variance rate x exposure.
  const double expected = c.reclaims.rate.base_per_s * pool.reclaim_exposure_s();
  check_count(static_cast<double>(pool.stats().reclaim_notices), expected, expected);
  CHECK(expected > 40000);
  // Every notice is followed by a reclaim 120 s later (except those still in their notice).
  CHECK(pool.stats().reclaims >= pool.stats().reclaim_notices - 50);
  // Exposure excludes the notice windows and the waits for capacity.
  CHECK(pool.reclaim_exposure_s() < ledger.instance_seconds(pool.account(), sim.now()));
}

TEST_CASE("An hour-of-day profile shapes when reclaims come", "[fleet][pool]") {
  Rig rig(12);
  auto& [sim, ledger, log] = rig;
  InstancePoolConfig c = quiet_pool(Market::spot);
  c.reclaims.rate.base_per_s = 0.1 / kHour;
  for (int h = 0; h < 24; ++h) c.reclaims.rate.multiplier[static_cast<std::size_t>(h)] = h < 12 ? 0.0 : 3.0;
  c.reclaims.rate.start_hour = 6.0;  // t = 0 is 06:00
  InstancePool pool(sim, c, ledger, &log);
  pool.start_held(100);
  const double days = 200;
  sim.run(days * 24 * kHour);
  std::size_t off_hours = 0;
  for (const double t : log.notice_times)
    if (std::fmod(6.0 + t / kHour, 24.0) < 12.0) ++off_hours;
  CHECK(off_hours == 0);
  // Instant warning and capacity: always 100 exposed; 12 h a day at 3 x 0.1 per hour each.
  const double expected = 100 * 0.3 * 12 * days;
  check_count(static_cast<double>(log.notice_times.size()), expected, expected);
  CHECK(c.reclaims.rate.mean_per_s() == Approx(0.15 / kHour));
}

TEST_CASE("Failures match n / MTBF over held instance-hours", "[fleet][pool]") {
  SECTION("exponential lifetimes, one superposed process") {
    Simulator sim(13);
    CostLedger ledger;
    InstancePoolConfig c = quiet_pool(Market::on_demand);
    c.failures.node_mtbf_s = 1000 * kHour;
    c.failures.replacement = Distribution::exponential(kHour);
    InstancePool pool(sim, c, ledger);
    pool.start_held(100);
    sim.run(5000 * kHour);
    const double expected = ledger.instance_seconds(pool.account(), sim.now()) / c.failures.node_mtbf_s;
    check_count(static_cast<double>(pool.stats().failures), expected, expected);
  }
  SECTION("Weibull lifetimes, one process per node (a renewal process)") {
    Simulator sim(14);
    CostLedger ledger;
    InstancePoolConfig c = quiet_pool(Market::on_demand);
    const double shape = 0.7;
    c.failures.node_mtbf_s = 100 * kHour;
    c.failures.weibull_shape = shape;
    InstancePool pool(sim, c, ledger);
    pool.start_held(20);
    const double t = 1e5 * kHour;
    sim.run(t);
    // Renewal theory: N(t) ~ n t / mu with variance n t cv^2 / mu, cv^2 of the lifetime.
    const double cv2 = std::tgamma(1 + 2 / shape) / std::pow(std::tgamma(1 + 1 / shape), 2) - 1;
    const double expected = 20 * t / c.failures.node_mtbf_s;
    check_count(static_cast<double>(pool.stats().failures), expected, expected * cv2);
  }
}

TEST_CASE("Correlated reclaims take a share of the pool at once", "[fleet][pool]") {
  Rig rig(15);
  auto& [sim, ledger, log] = rig;
  InstancePoolConfig c = quiet_pool(Market::spot);
  c.reclaims.correlated = CorrelatedReclaims{1.0 / kHour, 0.25};
  InstancePool pool(sim, c, ledger, &log);
  pool.start_held(40);
  sim.run(100 * kHour);
  REQUIRE(!log.notice_sizes.empty());
  for (const std::size_t n : log.notice_sizes) CHECK(n == 10);  // ceil(0.25 x 40)
  for (const Interruption& e : log.events) CHECK(e.correlated);
  check_count(static_cast<double>(log.notice_sizes.size()), 100, 100);
}

TEST_CASE("A failure domain takes all of its held instances", "[fleet][pool]") {
  Rig rig(16);
  auto& [sim, ledger, log] = rig;
  InstancePoolConfig c = quiet_pool(Market::on_demand);
  c.failures.correlated = CorrelatedFailures{8, 50 * kHour};
  InstancePool pool(sim, c, ledger, &log);
  pool.start_held(32);
  sim.run(1000 * kHour);
  REQUIRE(!log.interrupted.empty());
  for (const auto& ids : log.interrupted) {
    REQUIRE(ids.size() == 8);
    const int domain = ids.front() / 8;
    for (const int id : ids) CHECK(id / 8 == domain);
  }
  // 4 domains at 1 / 50 h each over 1000 h.
  check_count(static_cast<double>(pool.stats().correlated_failure_events), 80, 80);
}

TEST_CASE("A fault that only restarts the work leaves the instance held", "[fleet][pool]") {
  Rig rig(17);
  auto& [sim, ledger, log] = rig;
  InstancePoolConfig c = quiet_pool(Market::on_demand);
  c.failures.node_mtbf_s = 10 * kHour;
  c.failures.causes = {{"software_bug", 1.0, false}};
  InstancePool pool(sim, c, ledger, &log);
  pool.start_held(4);
  sim.run(100 * kHour);
  REQUIRE(!log.events.empty());
  for (const Interruption& e : log.events) {
    CHECK_FALSE(e.instances_lost);
    CHECK(e.cause == 0);
  }
  CHECK(pool.held() == 4);
  CHECK(pool.stats().restart_only_failures == pool.stats().failures);
  CHECK(ledger.instance_seconds(pool.account(), sim.now()) == Approx(4 * 100 * kHour));
}

TEST_CASE("Requests, fallback and release", "[fleet][pool]") {
  Simulator sim(18);
  CostLedger ledger;
  Log spot_log;
  Log od_log;
  spot_log.sim = od_log.sim = &sim;
  InstancePoolConfig sc = quiet_pool(Market::spot, "spot");
  sc.provisioning = Distribution::constant(1e9);  // spot capacity never comes
  InstancePoolConfig oc = quiet_pool(Market::on_demand, "od");
  oc.provisioning = Distribution::constant(50.0);
  InstancePool spot(sim, sc, ledger, &spot_log);
  InstancePool od(sim, oc, ledger, &od_log);
  spot.set_fallback({&od, 100.0});
  spot.request(3);
  CHECK(spot.pending() == 3);
  sim.run(149.0);
  CHECK(od.pending() == 3);  // moved at t = 100
  CHECK(od.held() == 0);
  sim.run(150.0);
  CHECK(od.held() == 3);     // ready at 100 + 50
  CHECK(od_log.ready == 3);
  CHECK(spot.pending() == 0);
  CHECK(spot.stats().fallbacks == 3);
  sim.run(250.0);
  od.release_all();
  sim.run(1000.0);
  // Held 150..250: 3 x 100 instance-seconds at $2/h; nothing after the release.
  CHECK(ledger.usd(1000.0) == Approx(300.0 / kHour * 2.0));
  CHECK(ledger.instance_hours_by_market(1000.0)[Market::on_demand] == Approx(300.0 / kHour));
}

TEST_CASE("Failure traces replay at their times", "[fleet][pool]") {
  Rig rig(19);
  auto& [sim, ledger, log] = rig;
  InstancePoolConfig c = quiet_pool(Market::on_demand);
  c.failures.trace = {{10.0, 1}, {20.0, 3}};
  c.failures.replacement = Distribution::constant(5.0);
  InstancePool pool(sim, c, ledger, &log);
  pool.start_held(4);
  sim.run(12.0);
  CHECK(pool.held() == 3);
  sim.run(16.0);
  CHECK(pool.held() == 4);
  sim.run(21.0);
  CHECK(pool.held() == 1);
  REQUIRE(log.interrupted.size() == 2);
  CHECK(log.interrupted[1].size() == 3);
  CHECK(log.events[1].correlated);
}

TEST_CASE("Same seed, same history; another seed, another one", "[fleet][pool]") {
  auto history = [](uint64_t seed) {
    Simulator sim(seed);
    CostLedger ledger;
    Log log;
    log.sim = &sim;
    InstancePoolConfig c = quiet_pool(Market::spot);
    c.reclaims.rate.base_per_s = 1.0 / kHour;
    c.reclaims.capacity_return = Distribution::lognormal(600.0, 1.0);
    c.failures.node_mtbf_s = 50 * kHour;
    c.failures.causes = llama3_failure_causes();
    InstancePool pool(sim, c, ledger, &log);
    pool.start_held(16);
    sim.run(500 * kHour);
    return log.notice_times;
  };
  const auto a = history(5);
  CHECK(a == history(5));
  CHECK(a != history(6));
}

TEST_CASE("A replaced instance noticed again is taken by its own notice, not the old one",
          "[fleet][pool]") {
  Rig rig(20);
  auto& [sim, ledger, log] = rig;
  InstancePoolConfig c = quiet_pool(Market::spot);
  c.reclaims.warning_s = 100.0;
  c.reclaims.trace = {{10.0, 1}, {50.0, 1}};  // one instance: noticed at 10 and again at 50
  c.failures.trace = {{20.0, 1}};             // it fails during its first notice
  c.failures.replacement = Distribution::constant(5.0);
  c.reclaims.capacity_return = Distribution::constant(1e9);  // no spot capacity after the take
  InstancePool pool(sim, c, ledger, &log);
  pool.start_held(1);
  sim.run(120.0);
  // The first notice's take (t = 110) finds its instance replaced and noticed by the second
  // notice: it must take nothing; the second takes it at 150.
  CHECK(pool.held() == 1);
  CHECK(pool.stats().reclaims == 0);
  sim.run(151.0);
  CHECK(pool.stats().reclaims == 1);
  CHECK(pool.held() == 0);
}

TEST_CASE("A pool destroyed before its simulator leaves no events behind", "[fleet][pool]") {
  Simulator sim(21);
  CostLedger ledger;
  {
    InstancePoolConfig c = quiet_pool(Market::spot);
    c.reclaims.rate.base_per_s = 1.0;
    c.failures.node_mtbf_s = 10.0;
    InstancePool pool(sim, c, ledger);
    pool.start_held(8);
    pool.request(2);
    CHECK(sim.pending() > 0);
  }
  CHECK(sim.pending() == 0);
}

TEST_CASE("Scale-down: released instances stop being billed and are not replaced",
          "[fleet][pool]") {
  Rig rig(22);
  auto& [sim, ledger, log] = rig;
  InstancePoolConfig c = quiet_pool(Market::spot);
  c.provisioning = Distribution::constant(10.0);
  c.reclaims.warning_s = 30.0;
  c.reclaims.trace = {{100.0, 1}};
  InstancePool pool(sim, c, ledger, &log);
  pool.start_held(4);
  const std::vector<int> asked = pool.request(2);
  CHECK(pool.state(asked[0]) == InstancePool::InstanceState::requested);
  // Release one request before it is ready, and one held instance at t = 50.
  pool.release(std::span<const int>(asked.data(), 1));
  sim.run(50.0);
  CHECK(pool.held() == 5);
  CHECK(pool.pending() == 0);
  const int gone = pool.held_ids().front();
  pool.release(std::span<const int>(&gone, 1));
  CHECK(pool.state(gone) == InstancePool::InstanceState::empty);
  sim.run(110.0);
  // The instance noticed at 100 is released before its take at 130: no reclaim follows.
  REQUIRE(log.notice_sizes.size() == 1);
  for (const int id : std::vector<int>(pool.held_ids()))
    if (pool.state(id) == InstancePool::InstanceState::noticed) pool.release(std::span<const int>(&id, 1));
  sim.run(1000.0);
  CHECK(pool.stats().reclaims == 0);
  CHECK(pool.held() == 3);
  // Billed: 4 x 50 + 1 x 40 (ready at 10) ... up to 50; then 4 x 60 to 110; then 3 x 890.
  CHECK(ledger.instance_seconds(pool.account(), 1000.0) == Approx(4 * 50 + 40 + 4 * 60 + 3 * 890));
}
