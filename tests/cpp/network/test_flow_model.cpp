// Closed forms and hand-worked max-min cases for the flow model, on bare links (no topology).
#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/engine/simulator.hpp"
#include "sim/network/flow_model.hpp"

using cs::engine::Simulator;
using cs::net::FlowId;
using cs::net::FlowModel;
using cs::net::FlowObserver;
using cs::net::LinkIndex;

namespace {

// Records when each flow (by tag) completes.
struct Recorder final : FlowObserver {
  explicit Recorder(Simulator& s) : sim(s) {}
  void on_flow_done(FlowId, uint64_t tag) override { done[tag] = sim.now(); }
  Simulator& sim;
  std::map<uint64_t, double> done;
};

// Starts a flow at time t.
void start_at(Simulator& sim, FlowModel& m, double t, std::vector<LinkIndex> route, double bytes,
              Recorder& rec, uint64_t tag, double latency = 0) {
  const auto r = m.add_route(route, latency);
  sim.schedule_at(t, [&m, r, bytes, &rec, tag] { m.start(r, bytes, &rec, tag); });
}

// Starts a flow now.
FlowId start_now(FlowModel& m, std::vector<LinkIndex> route, double latency, double bytes,
                 Recorder& rec, uint64_t tag) {
  return m.start(m.add_route(route, latency), bytes, &rec, tag);
}

}  // namespace

TEST_CASE("an uncontended flow takes latency + bytes / bottleneck bandwidth", "[flow]") {
  Simulator sim(1);
  FlowModel m(sim, {50e9, 25e9, 50e9});
  Recorder rec(sim);
  start_now(m, {0, 1, 2}, 2e-6, 1e9, rec, 7);
  sim.run();
  REQUIRE(rec.done.at(7) == Approx(2e-6 + 1e9 / 25e9).epsilon(1e-12));
  REQUIRE(m.active_flows() == 0);
}

TEST_CASE("k flows into one link get B/k each", "[flow]") {
  for (int k : {1, 2, 3, 8, 100}) {
    Simulator sim(1);
    // k sources each with a private 100 B/s link, all into one shared 100 B/s link.
    std::vector<double> caps(k + 1, 100.0);
    FlowModel m(sim, caps);
    Recorder rec(sim);
    std::vector<FlowId> ids;
    for (int i = 0; i < k; ++i) ids.push_back(start_now(m, {LinkIndex(i + 1), 0}, 0, 50.0, rec, i));
    sim.run(1e-9);  // admitted, not finished
    for (FlowId id : ids) REQUIRE(m.rate_Bps(id) == Approx(100.0 / k));
    sim.run();
    // All share equally to the end: each finishes at k * 50 / 100.
    for (int i = 0; i < k; ++i) REQUIRE(rec.done.at(i) == Approx(k * 0.5));
  }
}

TEST_CASE("max-min with two bottlenecks", "[flow]") {
  // Links L0 and L1, 10 B/s each. f1: L0. f2: L0+L1. f3, f4: L1.
  // L1 carries 3 flows (share 10/3), L0 carries 2 (share 5): L1 saturates first and fixes
  // f2 = f3 = f4 = 10/3; L0 then has 10 - 10/3 = 20/3 left for f1 alone.
  Simulator sim(1);
  FlowModel m(sim, {10.0, 10.0});
  Recorder rec(sim);
  const FlowId f1 = start_now(m, {0}, 0, 1e6, rec, 1);
  const FlowId f2 = start_now(m, {0, 1}, 0, 1e6, rec, 2);
  const FlowId f3 = start_now(m, {1}, 0, 1e6, rec, 3);
  const FlowId f4 = start_now(m, {1}, 0, 1e6, rec, 4);
  sim.run(1.0);
  CHECK(m.rate_Bps(f1) == Approx(20.0 / 3));
  CHECK(m.rate_Bps(f2) == Approx(10.0 / 3));
  CHECK(m.rate_Bps(f3) == Approx(10.0 / 3));
  CHECK(m.rate_Bps(f4) == Approx(10.0 / 3));
  // Flows that start together are one recomputation.
  CHECK(m.stats().recomputations == 1);
}

TEST_CASE("a link whose share grew while others saturated fills at its share now", "[flow]") {
  // A: 1 B/s, B: 4 B/s, C: 3.2 B/s. f1: A+B, f2: B, f3: B+C, f4: C. Shares at the start:
  // A 1, B 4/3, C 1.6. A saturates first (f1 = 1); B is left 3 for 2 flows, 1.5, above the
  // 4/3 it entered the solve's heap with, and below C's 1.6: B saturates next (f2 = f3 =
  // 1.5), and C gives f4 what f3 leaves, 1.7.
  Simulator sim(1);
  FlowModel m(sim, {1.0, 4.0, 3.2});
  Recorder rec(sim);
  const FlowId f1 = start_now(m, {0, 1}, 0, 1e6, rec, 1);
  const FlowId f2 = start_now(m, {1}, 0, 1e6, rec, 2);
  const FlowId f3 = start_now(m, {1, 2}, 0, 1e6, rec, 3);
  const FlowId f4 = start_now(m, {2}, 0, 1e6, rec, 4);
  sim.run(1.0);
  CHECK(m.rate_Bps(f1) == Approx(1.0).epsilon(1e-12));
  CHECK(m.rate_Bps(f2) == Approx(1.5).epsilon(1e-12));
  CHECK(m.rate_Bps(f3) == Approx(1.5).epsilon(1e-12));
  CHECK(m.rate_Bps(f4) == Approx(1.7).epsilon(1e-12));
}

TEST_CASE("staggered start on one link", "[flow]") {
  // One 100 B/s link. f1: 100 B at t=0; f2: 100 B at t=0.5.
  // [0, 0.5): f1 alone at 100 -> 50 B left. Then 50 each: f1 ends at 0.5 + 50/50 = 1.5,
  // when f2 has 50 B left; alone at 100 it ends at 2.0.
  Simulator sim(1);
  FlowModel m(sim, {100.0});
  Recorder rec(sim);
  start_at(sim, m, 0.0, {0}, 100, rec, 1);
  start_at(sim, m, 0.5, {0}, 100, rec, 2);
  sim.run();
  CHECK(rec.done.at(1) == Approx(1.5));
  CHECK(rec.done.at(2) == Approx(2.0));
}

TEST_CASE("staggered starts across several bottlenecks", "[flow]") {
  // Links A (30 B/s) and B (20 B/s). f1: A, 30 B at t=0. f2: A+B, 20 B at t=0. f3: B, 40 B at t=1.
  // [0,1): A has f1, f2 -> share 15; B has f2 -> 20. A first: f1 = f2 = 15.
  //   At t=1: f1 has 15 B left, f2 has 5 B left.
  // [1,1.5): B has f2, f3 -> 10 each; A has 30 - 10 = 20 left for f1.
  //   f2 ends at 1 + 5/10 = 1.5; then f1 has 15 - 20*0.5 = 5 B left, f3 has 40 - 5 = 35 B.
  // [1.5, ..): f1 alone on A at 30 -> ends 1.5 + 5/30 = 1.6667; f3 alone on B at 20 ->
  //   ends 1.5 + 35/20 = 3.25.
  Simulator sim(1);
  FlowModel m(sim, {30.0, 20.0});
  Recorder rec(sim);
  start_at(sim, m, 0.0, {0}, 30, rec, 1);
  start_at(sim, m, 0.0, {0, 1}, 20, rec, 2);
  start_at(sim, m, 1.0, {1}, 40, rec, 3);
  sim.run();
  CHECK(rec.done.at(2) == Approx(1.5));
  CHECK(rec.done.at(1) == Approx(1.5 + 5.0 / 30));
  CHECK(rec.done.at(3) == Approx(3.25));
}

TEST_CASE("latency is spent before the flow takes bandwidth", "[flow]") {
  // One 100 B/s link. f1: 100 B, no latency, t=0. f2: 100 B, latency 0.5, t=0.
  // f2 joins the link at 0.5: same schedule as the staggered case: 1.5 and 2.0.
  Simulator sim(1);
  FlowModel m(sim, {100.0});
  Recorder rec(sim);
  start_now(m, {0}, 0.0, 100, rec, 1);
  start_now(m, {0}, 0.5, 100, rec, 2);
  sim.run();
  CHECK(rec.done.at(1) == Approx(1.5));
  CHECK(rec.done.at(2) == Approx(2.0));
}

TEST_CASE("many flows with awkward sizes all finish and conserve bytes", "[flow]") {
  // Sizes and capacities chosen so remainders never divide evenly: no zero-progress loops.
  Simulator sim(3);
  std::vector<double> caps;
  for (int l = 0; l < 13; ++l) caps.push_back(1.0 / 3.0 + l * 0.1);
  FlowModel m(sim, caps);
  Recorder rec(sim);
  double total = 0;
  for (int i = 0; i < 400; ++i) {
    std::vector<LinkIndex> route{LinkIndex(i % 13), LinkIndex((i * 7 + 3) % 13)};
    if (route[0] == route[1]) route.pop_back();
    const double bytes = 0.1 + (i % 17) * 1.0 / 7.0;
    total += bytes * route.size();
    start_at(sim, m, (i % 11) * 0.37, route, bytes, rec, i);
  }
  sim.run();
  REQUIRE(rec.done.size() == 400);
  REQUIRE(m.active_flows() == 0);
  double carried = 0;
  for (double b : m.link_bytes()) carried += b;
  REQUIRE(carried == Approx(total));
  REQUIRE(sim.events_processed() < 100000);
}

TEST_CASE("a flow that crosses a link twice counts twice there", "[flow]") {
  SECTION("alone: half the link") {
    Simulator sim(1);
    FlowModel m(sim, {100.0, 1000.0});
    Recorder rec(sim);
    const FlowId a = start_now(m, {1, 0, 1, 0}, 0, 50.0, rec, 1);
    sim.run(1e-9);
    REQUIRE(m.rate_Bps(a) == Approx(50.0));
    sim.run();
    REQUIRE(rec.done.at(1) == Approx(1.0));
    REQUIRE(m.link_bytes()[0] == Approx(100.0));  // 50 bytes, twice
  }
  SECTION("beside others: weighted max-min, then the survivors speed up") {
    // Link 0 (90 B/s): A crosses it twice, B and C once. Level r with 2r + r + r = 90: 22.5.
    // B (45 B) ends at 2 s; then 2r + r = 90: r = 30; A and C have 45 left at t=2,
    // so C (90 B) ends at 3.5 s, A (90 B) too; every list position must stay consistent.
    Simulator sim(1);
    FlowModel m(sim, {90.0, 1000.0, 1000.0, 1000.0});
    Recorder rec(sim);
    const FlowId a = start_now(m, {0, 1, 0}, 0, 90.0, rec, 1);
    const FlowId b = start_now(m, {2, 0}, 0, 45.0, rec, 2);
    const FlowId c = start_now(m, {0, 3}, 0, 90.0, rec, 3);
    sim.run(1e-9);
    REQUIRE(m.rate_Bps(a) == Approx(22.5));
    REQUIRE(m.rate_Bps(b) == Approx(22.5));
    REQUIRE(m.rate_Bps(c) == Approx(22.5));
    sim.run();
    REQUIRE(rec.done.at(2) == Approx(2.0));
    REQUIRE(rec.done.at(1) == Approx(3.5));
    REQUIRE(rec.done.at(3) == Approx(3.5));
    REQUIRE(m.active_flows() == 0);
  }
  SECTION("the flow crossing twice ends first, others keep consistent lists") {
    Simulator sim(1);
    FlowModel m(sim, {90.0, 1000.0, 1000.0, 1000.0});
    Recorder rec(sim);
    start_now(m, {2, 0}, 0, 90.0, rec, 2);
    start_now(m, {0, 1, 0}, 0, 10.0, rec, 1);  // weight 5 in all: 18 B/s, ends at 10/18 s
    start_now(m, {0, 3}, 0, 90.0, rec, 3);
    start_now(m, {3, 0}, 0, 90.0, rec, 4);
    sim.run();
    REQUIRE(rec.done.at(1) == Approx(10.0 / 18.0));
    // Then three flows at 30 B/s: each had 10 B sent, 80 left: 10/18 + 80/30.
    for (int t : {2, 3, 4}) REQUIRE(rec.done.at(t) == Approx(10.0 / 18.0 + 80.0 / 30.0));
  }
}

TEST_CASE("link usage: a flow alone", "[flow][usage]") {
  // 100 B over links of 50, 25 and 100 B/s after 2 s of latency: 25 B/s from t=2 to t=6.
  Simulator sim(1);
  FlowModel m(sim, {50.0, 25.0, 100.0, 10.0});
  Recorder rec(sim);
  start_now(m, {0, 1, 2}, 2.0, 100.0, rec, 1);
  sim.run(3.0);  // one second into the transfer: busy so far and bytes delivered so far
  CHECK(m.link_busy_s()[1] == Approx(1.0));
  CHECK(m.link_bytes()[1] == Approx(25.0));
  sim.run();
  const auto busy = m.link_busy_s();
  const auto peak = m.link_peak_utilization();
  const auto bytes = m.link_bytes();
  for (int l : {0, 1, 2}) {
    CHECK(busy[l] == 100.0 / 25.0);  // latency excluded
    CHECK(bytes[l] == 100.0);
  }
  CHECK(peak[1] == 1.0);
  CHECK(peak[0] == Approx(25.0 / 50.0));
  CHECK(peak[2] == Approx(25.0 / 100.0));
  CHECK(busy[3] == 0.0);  // on no route
  CHECK(peak[3] == 0.0);
}

TEST_CASE("link usage: staggered flows on a shared link", "[flow][usage]") {
  // Shared link 0 (100 B/s), private links 1 and 2 (200 B/s). f1: 1+0, 100 B at t=0;
  // f2: 2+0, 100 B at t=0.5. As in "staggered start on one link": f1 alone at 100 until 0.5,
  // both at 50 until f1 ends at 1.5, f2 alone at 100 until 2.0.
  Simulator sim(1);
  FlowModel m(sim, {100.0, 200.0, 200.0});
  Recorder rec(sim);
  start_at(sim, m, 0.0, {1, 0}, 100, rec, 1);
  start_at(sim, m, 0.5, {2, 0}, 100, rec, 2);
  sim.run();
  const auto busy = m.link_busy_s();
  const auto peak = m.link_peak_utilization();
  CHECK(busy[0] == Approx(2.0));  // [0, 1.5] union [0.5, 2]
  CHECK(busy[1] == Approx(1.5));
  CHECK(busy[2] == Approx(1.5));
  CHECK(peak[0] == Approx(1.0));
  // f1 ran alone (100 of 200) before f2 slowed it; f2 only once f1 had gone.
  CHECK(peak[1] == Approx(0.5));
  CHECK(peak[2] == Approx(0.5));
}

TEST_CASE("link usage: an idle gap is not busy", "[flow][usage]") {
  // One 100 B/s link: 100 B at t=0 (done at 1), 100 B at t=3 (done at 4).
  Simulator sim(1);
  FlowModel m(sim, {100.0});
  Recorder rec(sim);
  start_at(sim, m, 0.0, {0}, 100, rec, 1);
  start_at(sim, m, 3.0, {0}, 100, rec, 2);
  sim.run(2.0);
  CHECK(m.link_busy_s()[0] == Approx(1.0));
  sim.run();
  CHECK(m.link_busy_s()[0] == Approx(2.0));
  CHECK(m.link_peak_utilization()[0] == Approx(1.0));
  CHECK(m.link_bytes()[0] == Approx(200.0));
}

TEST_CASE("link usage: a route crossing a link twice", "[flow][usage]") {
  // 50 B over 1, 0, 1, 0 (link 0: 100 B/s, link 1: 1000 B/s): 50 B/s, each link carrying
  // twice that for 1 s.
  Simulator sim(1);
  FlowModel m(sim, {100.0, 1000.0});
  Recorder rec(sim);
  start_now(m, {1, 0, 1, 0}, 0, 50.0, rec, 1);
  sim.run();
  const auto peak = m.link_peak_utilization();
  CHECK(peak[0] == Approx(1.0));
  CHECK(peak[1] == Approx(2 * 50.0 / 1000.0));
  CHECK(m.link_busy_s()[0] == Approx(1.0));
  CHECK(m.link_busy_s()[1] == Approx(1.0));
}

TEST_CASE("link usage: a rate held for no time is no peak", "[flow][usage]") {
  // f1 (1+0) and f2 (0) start together on link 0 (100 B/s); f1 is admitted first and would
  // run alone at 100 over its private 1000 B/s link 1, but f2 joins at the same instant:
  // both run at 50, and link 1 never carries more than 5%.
  Simulator sim(1);
  FlowModel m(sim, {100.0, 1000.0});
  Recorder rec(sim);
  start_now(m, {1, 0}, 0, 100.0, rec, 1);
  start_now(m, {0}, 0, 100.0, rec, 2);
  sim.run();
  CHECK(m.link_peak_utilization()[1] == Approx(0.05));
  CHECK(m.link_peak_utilization()[0] == Approx(1.0));
}

TEST_CASE("link usage: busy time is the union of the flows' intervals", "[flow][usage]") {
  // The mix of "many flows with awkward sizes", without latency: a flow shares bandwidth from
  // its start to its completion. Busy time must be the measure of the union of those
  // intervals per link, peaks within capacity and at least the mean rate while busy.
  Simulator sim(3);
  std::vector<double> caps;
  for (int l = 0; l < 13; ++l) caps.push_back(1.0 / 3.0 + l * 0.1);
  FlowModel m(sim, caps);
  Recorder rec(sim);
  std::vector<std::vector<std::pair<double, double>>> intervals(13);
  std::vector<std::vector<LinkIndex>> routes;
  std::vector<double> starts;
  for (int i = 0; i < 400; ++i) {
    std::vector<LinkIndex> route{LinkIndex(i % 13), LinkIndex((i * 7 + 3) % 13)};
    if (route[0] == route[1]) route.pop_back();
    starts.push_back((i % 11) * 0.37 + (i % 3) * 5.0);  // some links idle between waves
    start_at(sim, m, starts.back(), route, 0.1 + (i % 17) * 1.0 / 7.0, rec, i);
    routes.push_back(route);
  }
  sim.run();
  for (int i = 0; i < 400; ++i)
    for (LinkIndex l : routes[i]) intervals[l].push_back({starts[i], rec.done.at(i)});
  const auto busy = m.link_busy_s();
  const auto peak = m.link_peak_utilization();
  const auto bytes = m.link_bytes();
  for (int l = 0; l < 13; ++l) {
    auto& iv = intervals[l];
    std::sort(iv.begin(), iv.end());
    double total = 0, lo = iv[0].first, hi = iv[0].second;
    for (const auto& [a, b] : iv) {
      if (a > hi) {
        total += hi - lo;
        lo = a;
      }
      hi = std::max(hi, b);
    }
    total += hi - lo;
    CHECK(busy[l] == Approx(total).epsilon(1e-9));
    CHECK(peak[l] <= 1.0 + 1e-9);
    CHECK(peak[l] >= bytes[l] / (caps[l] * busy[l]) * (1 - 1e-9));
  }
}
