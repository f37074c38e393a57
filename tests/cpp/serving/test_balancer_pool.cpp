// Load balancers' defining properties, and the replica pool: cold starts, cost = replica-hours
// x price per market (the fleet's cost ledger), scale-in draining, and spot reclaims from the
// fleet's instance pools (notice, warning, capacity back, fallback to on-demand).
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "serving_test_support.hpp"
#include "sim/serving/load_balancer.hpp"
#include "sim/serving/replica_pool.hpp"

using namespace cs::serving;
using cs::engine::Simulator;

namespace {

// A replica whose load the test sets by hand.
class FakeReplica final : public Replica {
 public:
  FakeReplica(Simulator& sim, ReplicaListener& listener, uint32_t id, int capacity = 4)
      : Replica(sim, listener, id, capacity) {}
  void submit(const Request&) override {}
  void take_queued(std::vector<Request>&) override {}
  void abort(std::vector<Request>&) override {}
  void on_event(uint64_t) override {}
  void load(int in_service, int queued) { set_load(in_service, queued); }
};

class NullListener final : public ReplicaListener {
 public:
  void on_complete(Replica&, const Request&) override {}
  void on_slot_free(Replica&) override {}
  void on_drained(Replica&) override {}
};

struct Bench {
  Simulator sim{3};
  NullListener listener;
  std::vector<std::unique_ptr<FakeReplica>> owned;
  std::vector<Replica*> view;
  explicit Bench(const std::vector<std::array<int, 2>>& loads) {
    for (std::size_t i = 0; i < loads.size(); ++i) {
      owned.push_back(std::make_unique<FakeReplica>(sim, listener, static_cast<uint32_t>(i)));
      owned.back()->load(loads[i][0], loads[i][1]);
      view.push_back(owned.back().get());
    }
  }
};

class Sink final : public RequestSink {
 public:
  explicit Sink(Simulator& sim) : sim_(sim) {}
  void on_complete(const Request& r, uint32_t) override { done.push_back({r, sim_.now()}); }
  void on_dropped(const Request& r, DropReason reason) override { dropped.push_back({r, reason}); }
  std::vector<std::pair<Request, double>> done;
  std::vector<std::pair<Request, DropReason>> dropped;

 private:
  Simulator& sim_;
};

ReplicaFactory servers(Simulator& sim, int concurrency) {
  return [&sim, concurrency](ReplicaListener& l, uint32_t id) -> std::unique_ptr<Replica> {
    return std::make_unique<ServerReplica>(sim, l, id, ServerSpec{concurrency});
  };
}

Request job(uint64_t id, double arrival, double service) {
  Request r;
  r.id = id;
  r.arrival_s = arrival;
  r.service_s = service;
  return r;
}

}  // namespace

TEST_CASE("Round robin takes each replica in turn", "[serving][balancer]") {
  Bench b({{3, 0}, {0, 0}, {9, 9}});
  LoadBalancer lb(BalancePolicy::round_robin, b.sim.random("lb"));
  std::vector<int> picks;
  for (int i = 0; i < 7; ++i) picks.push_back(lb.pick(b.view));
  CHECK(picks == std::vector<int>{0, 1, 2, 0, 1, 2, 0});
}

TEST_CASE("Least outstanding picks the fewest in flight; JSQ the shortest queue",
          "[serving][balancer]") {
  // {in service, queued}: outstanding 5, 4, 6, 4; queued 3, 4, 0, 2.
  Bench b({{2, 3}, {0, 4}, {6, 0}, {2, 2}});
  LoadBalancer lor(BalancePolicy::least_outstanding, b.sim.random("lb"));
  CHECK(lor.pick(b.view) == 1);  // first of the two with 4
  LoadBalancer jsq(BalancePolicy::join_shortest_queue, b.sim.random("lb"));
  CHECK(jsq.pick(b.view) == 2);  // no queue, though the most in flight
  Bench tie({{3, 1}, {1, 1}});
  CHECK(LoadBalancer(BalancePolicy::join_shortest_queue, tie.sim.random("lb")).pick(tie.view) == 1);
}

TEST_CASE("Power of two choices takes the less loaded of two random replicas",
          "[serving][balancer]") {
  Bench b({{0, 0}, {1, 0}, {2, 0}, {3, 0}});
  LoadBalancer lb(BalancePolicy::power_of_two, b.sim.random("lb"));
  std::array<int, 4> counts{};
  const int n = 60000;
  for (int i = 0; i < n; ++i) ++counts[static_cast<std::size_t>(lb.pick(b.view))];
  // Of the 6 equally likely pairs, replica i wins those with a busier partner: 3, 2, 1, 0.
  CHECK(counts[0] / double(n) == Approx(3 / 6.0).margin(0.01));
  CHECK(counts[1] / double(n) == Approx(2 / 6.0).margin(0.01));
  CHECK(counts[2] / double(n) == Approx(1 / 6.0).margin(0.01));
  CHECK(counts[3] == 0);  // the busiest is never taken
}

TEST_CASE("Central queue hands requests only to a replica that can start one",
          "[serving][balancer]") {
  Bench b({{4, 0}, {3, 0}, {4, 0}});  // capacity 4 each
  LoadBalancer lb(BalancePolicy::central_queue, b.sim.random("lb"));
  CHECK(lb.pick(b.view) == 1);
  b.owned[1]->load(4, 0);
  CHECK(lb.pick(b.view) == -1);
}

TEST_CASE("Cost is replica-hours x price, per market", "[serving][pool]") {
  Simulator sim;
  Sink sink(sim);
  PoolSpec spec;
  spec.cold_start = ColdStartSpec::none();
  spec.market.usd_per_hour[Market::on_demand] = 3.0;
  spec.market.usd_per_hour[Market::spot] = 1.0;
  spec.market.spot_share = 0.5;
  spec.market.reclaims.rate.base_per_s = 0;
  ReplicaPool pool(sim, spec, servers(sim, 1), sink);
  pool.start(4);
  CHECK(pool.replicas_in(Market::spot).size() == 2);
  CHECK(pool.replicas_in(Market::on_demand).size() == 2);
  sim.run(7200);
  CHECK(pool.replica_seconds(Market::spot) == Approx(2 * 7200));
  CHECK(pool.cost_usd() == Approx(2 * 2 * 3.0 + 2 * 2 * 1.0));
  // Scaling to 1 at 2 h: the three removed stop billing (idle: they drain at once).
  pool.set_desired(1);
  CHECK(pool.billed_count() == 1);
  sim.run(3 * 3600.0);
  const double hours = pool.replica_seconds(Market::spot) / 3600 + pool.replica_seconds(Market::on_demand) / 3600;
  CHECK(hours == Approx(4 * 2 + 1));
  CHECK(pool.billed_over_time().mean(sim.now()) == Approx(9.0 / 3));
}

TEST_CASE("A launched replica serves after its cold start; requests wait at the balancer",
          "[serving][pool]") {
  Simulator sim;
  Sink sink(sim);
  PoolSpec spec;
  spec.cold_start = ColdStartSpec::none();
  spec.cold_start.node_boot = cs::work::Distribution::constant(40);
  spec.cold_start.model_bytes = 20e9;
  spec.cold_start.storage_bandwidth = cs::work::Distribution::constant(1e9);
  REQUIRE(mean_cold_start(spec.cold_start) == Approx(60));
  ReplicaPool pool(sim, spec, servers(sim, 1), sink);
  pool.start(0);
  pool.set_desired(1);
  pool.route(job(1, 0, 5));
  CHECK(pool.balancer_queue() == 1);
  sim.run();
  REQUIRE(sink.done.size() == 1);
  CHECK(sink.done[0].first.start_s == Approx(60));
  CHECK(sink.done[0].second == Approx(65));
  CHECK(pool.cost_usd() == Approx(65 / 3600.0 * spec.market.usd_per_hour[Market::on_demand]));
}

TEST_CASE("Scale-in drains: in-flight work finishes, queued work moves, billing stops after",
          "[serving][pool]") {
  Simulator sim;
  Sink sink(sim);
  PoolSpec spec;
  spec.cold_start = ColdStartSpec::none();
  spec.balance = BalancePolicy::round_robin;
  ReplicaPool pool(sim, spec, servers(sim, 1), sink);
  pool.start(2);
  for (uint64_t i = 0; i < 4; ++i) pool.route(job(i, 0, 10));  // 2 each: 1 running, 1 queued
  pool.set_desired(1);
  CHECK(pool.draining_count() == 1);
  sim.run();
  REQUIRE(sink.done.size() == 4);
  CHECK(pool.billed_count() == 1);
  // The drained replica billed until its running request ended at 10 s.
  CHECK(pool.replica_seconds(Market::on_demand) == Approx(10 + sim.now()));
  CHECK(sink.done.back().second == Approx(30));  // its queued request went to the other
}

TEST_CASE("A reclaimed replica drains for its warning, then its work is lost and retried",
          "[serving][pool]") {
  Simulator sim;
  Sink sink(sim);
  PoolSpec spec;
  spec.cold_start = ColdStartSpec::none();
  spec.cold_start.node_boot = cs::work::Distribution::constant(30);
  spec.market.spot_share = 1.0;
  spec.market.reclaims.rate.base_per_s = 0;  // only the scripted reclaims below
  spec.market.reclaims.warning_s = 120;
  spec.market.reclaims.capacity_return = cs::work::Distribution::constant(0);
  spec.balance = BalancePolicy::round_robin;
  ReplicaPool pool(sim, spec, servers(sim, 1), sink);
  pool.start(2);
  pool.route(job(1, 0, 100));  // replica 0: ends within a 120 s warning
  pool.route(job(2, 0, 500));  // replica 1: outlasts the warning
  sim.run(10);
  REQUIRE(pool.reclaim(0));
  REQUIRE(pool.reclaim(1));
  CHECK_FALSE(pool.reclaim(0));  // already under notice
  CHECK(pool.waiting_count() == 2);  // successors wait for spot capacity (back at once here)
  CHECK(pool.draining_count() == 2);
  sim.run(11);
  CHECK(pool.starting_count() == 2);
  sim.run();
  REQUIRE(sink.done.size() == 2);
  const auto& [first, t1] = sink.done[0];
  const auto& [second, t2] = sink.done[1];
  CHECK(first.id == 1);
  CHECK(t1 == Approx(100));  // finished within its warning
  CHECK(first.attempts == 0);
  CHECK(second.id == 2);
  CHECK(second.attempts == 1);  // lost at 130 s, sent again to a successor (ready at 40 s)
  CHECK(t2 == Approx(130 + 500));
  CHECK(pool.reclaims() == 2);
  // Replica 0 was given back when it drained at 100 s, replica 1 was taken at 130 s.
  CHECK(pool.replica_seconds(Market::spot) == Approx(100 + 130 + 2 * (sim.now() - 10)));
}

TEST_CASE("A reclaimed replica's successor waits for spot capacity, or falls back to on-demand",
          "[serving][pool]") {
  for (const double fallback_after_s : {60.0, std::numeric_limits<double>::infinity()}) {
    Simulator sim;
    Sink sink(sim);
    PoolSpec spec;
    spec.cold_start = ColdStartSpec::none();
    spec.market.spot_share = 1.0;
    spec.market.reclaims.rate.base_per_s = 0;
    spec.market.reclaims.warning_s = 0;
    spec.market.reclaims.capacity_return = cs::work::Distribution::constant(600);
    spec.market.fallback_after_s = fallback_after_s;
    ReplicaPool pool(sim, spec, servers(sim, 1), sink);
    pool.start(1);
    REQUIRE(pool.reclaim(0));
    sim.run(30);
    CHECK(pool.waiting_count() == 1);
    CHECK(pool.billed_count() == 0);  // nothing is billed while waiting
    sim.run(100);
    const bool fell_back = std::isfinite(fallback_after_s);
    CHECK(pool.replicas_in(Market::on_demand).size() == (fell_back ? 1u : 0u));
    CHECK(pool.ready_count() == (fell_back ? 1 : 0));
    sim.run(700);  // spot capacity is back at 600 s
    CHECK(pool.ready_count() == 1);
    CHECK(pool.replicas_in(Market::spot).size() == (fell_back ? 0u : 1u));
    CHECK(pool.instances(Market::spot).stats().fallbacks == (fell_back ? 1 : 0));
    CHECK(pool.replica_seconds(Market::on_demand) == Approx(fell_back ? 700 - 60 : 0));
  }
}

TEST_CASE("Requests beyond the balancer's queue limit or timeout are dropped", "[serving][pool]") {
  Simulator sim;
  Sink sink(sim);
  PoolSpec spec;
  spec.cold_start = ColdStartSpec::none();
  spec.balance = BalancePolicy::central_queue;
  spec.max_queue = 2;
  spec.queue_timeout_s = 15;
  ReplicaPool pool(sim, spec, servers(sim, 1), sink);
  pool.start(1);
  for (uint64_t i = 0; i < 5; ++i) pool.route(job(i, 0, 10));  // 1 runs, 2 wait, 2 dropped
  sim.run();
  CHECK(sink.dropped.size() == 3);
  CHECK(sink.dropped[0].second == DropReason::queue_full);
  CHECK(sink.dropped[2].second == DropReason::timeout);  // waited 20 s by the time a slot freed
  CHECK(sink.done.size() == 2);
}

TEST_CASE("With a queue limit any balancer holds requests for a free slot, so the limits apply",
          "[serving][pool]") {
  // Two one-slot servers behind round robin: without limits every request goes to a replica's
  // own queue; with max_queue 1 the third waits at the balancer and the fourth and fifth are
  // dropped, as behind the central queue.
  for (const bool limited : {false, true}) {
    Simulator sim;
    Sink sink(sim);
    PoolSpec spec;
    spec.cold_start = ColdStartSpec::none();
    spec.balance = BalancePolicy::round_robin;
    if (limited) spec.max_queue = 1;
    ReplicaPool pool(sim, spec, servers(sim, 1), sink);
    pool.start(2);
    for (uint64_t i = 0; i < 5; ++i) pool.route(job(i, 0, 10));
    CHECK(pool.balancer_queue() == (limited ? 1u : 0u));
    sim.run();
    CHECK(sink.dropped.size() == (limited ? 2u : 0u));
    CHECK(sink.done.size() == (limited ? 3u : 5u));
    if (limited) {
      CHECK(sink.dropped[0].second == DropReason::queue_full);
      CHECK(sink.done.back().second == Approx(20));  // the held one took the first free slot
    }
  }
}

TEST_CASE("A replica's slots count the requests waiting for its next start", "[serving][balancer]") {
  // An LLM engine admits waiting sequences at its next iteration: its batch (capacity) is the
  // central queue's slots, whether they run or wait for the iteration.
  Bench b({{0, 3}, {3, 1}, {2, 1}});
  CHECK(b.owned[0]->can_start_now());   // 3 of 4
  CHECK_FALSE(b.owned[1]->can_start_now());  // 4 of 4
  CHECK(b.owned[2]->can_start_now());   // 3 of 4
}
