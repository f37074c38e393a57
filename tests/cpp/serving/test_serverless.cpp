// The serverless market: a pool that scales by requests from zero (a waiting request starts a
// replica, whose cold start the request's latency pays), stops a replica idle for the idle
// timeout, and bills each replica per second from its start to its stop. Closed forms: the
// bill of a request on a cold pool (cold start + service + idle timeout), a warm hit, a constant
// load that keeps one replica warm, a burst that starts one replica per waiting request.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "sim/serving/replica_pool.hpp"
#include "sim/serving/server_replica.hpp"

using namespace cs::serving;
using cs::engine::Simulator;

namespace {

constexpr double kColdStart_s = 2.0;
constexpr double kIdle_s = 60.0;
constexpr double kUsdPerHour = 3.6;  // $0.001 per second

class ServerlessSink final : public RequestSink {
 public:
  explicit ServerlessSink(Simulator& sim) : sim_(sim) {}
  void on_complete(const Request& r, uint32_t) override { done.push_back({r, sim_.now()}); }
  void on_dropped(const Request&, DropReason) override { ++dropped; }
  std::vector<std::pair<Request, double>> done;  // with the completion time
  int dropped = 0;

 private:
  Simulator& sim_;
};

// Routes request i (service service_s) into the pool at times[i].
class Arrivals final : public cs::engine::EventTarget {
 public:
  Arrivals(Simulator& sim, ReplicaPool& pool, const std::vector<double>& times, double service_s)
      : pool_(pool), service_s_(service_s) {
    for (std::size_t i = 0; i < times.size(); ++i) sim.schedule_at(times[i], *this, i);
    times_ = times;
  }
  void on_event(uint64_t i) override {
    Request r;
    r.id = i;
    r.arrival_s = times_[i];
    r.service_s = service_s_;
    pool_.route(r);
  }

 private:
  ReplicaPool& pool_;
  double service_s_;
  std::vector<double> times_;
};

struct ServerlessBench {
  Simulator sim{5};
  ServerlessSink sink{sim};
  std::unique_ptr<ReplicaPool> pool;
  explicit ServerlessBench(ServerlessSpec serverless, int concurrency = 1) {
    PoolSpec spec;
    spec.cold_start = ColdStartSpec::none();
    spec.cold_start.node_boot = cs::work::Distribution::constant(kColdStart_s);
    spec.market.usd_per_hour[Market::serverless] = kUsdPerHour;
    spec.market.serverless = serverless;
    pool = std::make_unique<ReplicaPool>(
        sim, spec,
        [this, concurrency](ReplicaListener& l, uint32_t id) -> std::unique_ptr<Replica> {
          return std::make_unique<ServerReplica>(sim, l, id, ServerSpec{concurrency});
        },
        sink);
    pool->start(serverless.min_replicas);
  }
  double billed_s() const { return pool->replica_seconds(Market::serverless); }
};

ServerlessSpec platform(int min = 0, int max = 100, int per_replica = 1) {
  ServerlessSpec s;
  s.idle_timeout_s = kIdle_s;
  s.min_replicas = min;
  s.max_replicas = max;
  s.requests_per_replica = per_replica;
  return s;
}

}  // namespace

TEST_CASE("Serverless from zero: the first request pays the cold start; the bill is start to idle stop",
          "[serving][serverless]") {
  ServerlessBench b(platform());
  Arrivals arrivals(b.sim, *b.pool, {0.0, 100.0}, 5.0);
  b.sim.run(500);
  REQUIRE(b.sink.done.size() == 2);
  // Latency = cold start + service, for both: the pool was at zero again at 67 s.
  CHECK(b.sink.done[0].first.start_s == Approx(kColdStart_s));
  CHECK(b.sink.done[0].second == Approx(kColdStart_s + 5));
  CHECK(b.sink.done[1].second - 100.0 == Approx(kColdStart_s + 5));
  // Each replica: cold start + service + idle timeout, billed per second.
  CHECK(b.billed_s() == Approx(2 * (kColdStart_s + 5 + kIdle_s)));
  CHECK(b.pool->cost_usd() == Approx(2 * (kColdStart_s + 5 + kIdle_s) * kUsdPerHour / 3600));
  CHECK(b.pool->cost_usd(Market::on_demand) == 0.0);
  CHECK(b.pool->billed_count() == 0);  // scaled to zero
  CHECK(b.pool->serverless()->scale_ups() == 2);
  CHECK(b.pool->serverless()->idle_stops() == 2);
}

TEST_CASE("Serverless warm hit: a request within the idle window skips the cold start", "[serving][serverless]") {
  ServerlessBench b(platform());
  Arrivals arrivals(b.sim, *b.pool, {0.0, 30.0}, 5.0);
  b.sim.run(500);
  REQUIRE(b.sink.done.size() == 2);
  CHECK(b.sink.done[1].first.start_s == Approx(30.0));
  CHECK(b.sink.done[1].second == Approx(35.0));
  // One replica from 0 to the second completion + the idle timeout.
  CHECK(b.billed_s() == Approx(35.0 + kIdle_s));
  CHECK(b.pool->serverless()->scale_ups() == 1);
}

TEST_CASE("Serverless constant load: one replica stays warm; its bill is the span plus one idle timeout",
          "[serving][serverless]") {
  // A request every 10 s, 5 s each: never idle for 60 s, so one replica serves all N.
  const int n = 50;
  std::vector<double> times;
  for (int i = 0; i < n; ++i) times.push_back(10.0 * i);
  ServerlessBench b(platform());
  Arrivals arrivals(b.sim, *b.pool, times, 5.0);
  b.sim.run(2000);
  REQUIRE(b.sink.done.size() == static_cast<std::size_t>(n));
  CHECK(b.billed_s() == Approx(10.0 * (n - 1) + 5 + kIdle_s));
  CHECK(b.pool->serverless()->scale_ups() == 1);
  // Only the first request waited (the cold start).
  CHECK(b.sink.done[1].first.start_s == Approx(10.0));
}

TEST_CASE("Serverless bursts start one replica per waiting request, up to max; min stays warm",
          "[serving][serverless]") {
  SECTION("three at once, one request per replica: three cold starts in parallel") {
    ServerlessBench b(platform());
    Arrivals arrivals(b.sim, *b.pool, {0.0, 0.0, 0.0}, 5.0);
    b.sim.run(500);
    CHECK(b.pool->serverless()->scale_ups() == 3);
    for (const auto& [r, t] : b.sink.done) CHECK(t == Approx(kColdStart_s + 5));
    CHECK(b.billed_s() == Approx(3 * (kColdStart_s + 5 + kIdle_s)));
  }
  SECTION("two requests per replica: two replicas for three requests") {
    ServerlessBench b(platform(0, 100, 2), 2);
    Arrivals arrivals(b.sim, *b.pool, {0.0, 0.0, 0.0}, 5.0);
    b.sim.run(500);
    CHECK(b.pool->serverless()->scale_ups() == 2);
  }
  SECTION("max 1: the requests queue behind one replica") {
    ServerlessBench b(platform(0, 1), 1);
    Arrivals arrivals(b.sim, *b.pool, {0.0, 0.0, 0.0}, 5.0);
    b.sim.run(500);
    REQUIRE(b.sink.done.size() == 3);
    CHECK(b.sink.done[2].second == Approx(kColdStart_s + 15));
    CHECK(b.billed_s() == Approx(kColdStart_s + 15 + kIdle_s));
  }
  SECTION("min 1: a warm replica serves at once and is billed the whole run") {
    ServerlessBench b(platform(1), 1);
    Arrivals arrivals(b.sim, *b.pool, {0.0}, 5.0);
    b.sim.run(500);
    CHECK(b.sink.done.at(0).second == Approx(5.0));
    CHECK(b.billed_s() == Approx(500.0));
    CHECK(b.pool->serverless()->scale_ups() == 0);
  }
}
