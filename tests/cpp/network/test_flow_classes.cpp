// Flows on one route as one processor-sharing class (flow_model.hpp): hand-worked cases, the
// cost of staggered flows, and random mixes against an independent per-flow max-min
// reference written here from the definition (progressive filling recomputed from scratch at
// every start and finish).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include <catch2/catch.hpp>

#include "network_test_support.hpp"
#include "sim/engine/random.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/network/flow_model.hpp"

using cs::engine::Simulator;
using cs::test::FlowsDone;
using cs::net::FlowId;
using cs::net::FlowModel;
using cs::net::FlowObserver;
using cs::net::LinkIndex;
using cs::net::RouteId;

namespace {

struct Spec {
  std::vector<LinkIndex> links;
  double bytes, start;
};

// Max-min by progressive filling over individual flows, from scratch: rates of the flows in
// `active` (indices into specs) on links of `capacity`. A flow crossing a link m times takes
// m shares there.
std::vector<double> max_min(const std::vector<Spec>& specs, const std::vector<int>& active,
                            const std::vector<double>& capacity) {
  std::vector<double> rate(active.size(), 0), left = capacity;
  std::vector<bool> fixed(active.size(), false);
  for (std::size_t done = 0; done < active.size();) {
    std::vector<double> weight(capacity.size(), 0);
    for (std::size_t i = 0; i < active.size(); ++i)
      if (!fixed[i])
        for (LinkIndex l : specs[active[i]].links) weight[l] += 1;
    double level = std::numeric_limits<double>::infinity();
    for (std::size_t l = 0; l < capacity.size(); ++l)
      if (weight[l] > 0) level = std::min(level, left[l] / weight[l]);
    // Every link full at this level, before any flow is fixed.
    std::vector<std::size_t> full;
    for (std::size_t l = 0; l < capacity.size(); ++l)
      if (weight[l] > 0 && left[l] / weight[l] <= level * (1 + 1e-12)) full.push_back(l);
    for (std::size_t l : full) {
      for (std::size_t i = 0; i < active.size(); ++i) {
        if (fixed[i]) continue;
        const auto& ls = specs[active[i]].links;
        if (std::find(ls.begin(), ls.end(), LinkIndex(l)) == ls.end()) continue;
        fixed[i] = true;
        rate[i] = level;
        ++done;
        for (LinkIndex o : ls) left[o] -= level;
      }
    }
  }
  return rate;
}

// Finish times of every flow under max-min, event by event.
std::vector<double> reference(const std::vector<Spec>& specs, const std::vector<double>& capacity) {
  std::vector<double> remaining(specs.size()), finish(specs.size(), -1);
  for (std::size_t i = 0; i < specs.size(); ++i) remaining[i] = specs[i].bytes;
  std::vector<int> pending(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) pending[i] = static_cast<int>(i);
  std::sort(pending.begin(), pending.end(), [&](int a, int b) { return specs[a].start < specs[b].start; });
  std::size_t next = 0;
  std::vector<int> active;
  double now = 0;
  while (next < pending.size() || !active.empty()) {
    while (next < pending.size() && specs[pending[next]].start <= now) active.push_back(pending[next++]);
    const std::vector<double> rate = max_min(specs, active, capacity);
    double dt = next < pending.size() ? specs[pending[next]].start - now : std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < active.size(); ++i) dt = std::min(dt, remaining[active[i]] / rate[i]);
    now += dt;
    std::vector<int> still;
    for (std::size_t i = 0; i < active.size(); ++i) {
      const int f = active[i];
      remaining[f] -= rate[i] * dt;
      if (remaining[f] <= specs[f].bytes * 1e-9) finish[f] = now;
      else still.push_back(f);
    }
    active = std::move(still);
  }
  return finish;
}

// Runs `specs` (each on one of `routes`) through the flow model and checks every finish time
// against the from-scratch reference; returns the model's stats.
cs::net::FlowModelStats check_against_reference(const std::vector<Spec>& specs,
                                                const std::vector<std::vector<LinkIndex>>& routes,
                                                const std::vector<double>& capacity, uint64_t seed) {
    const std::vector<double> expected = reference(specs, capacity);
    Simulator sim(seed);
    FlowModel m(sim, capacity);
    FlowsDone done(sim);
    std::vector<RouteId> ids;
    for (const auto& route : routes) ids.push_back(m.add_route(route, 0));
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const auto r = ids[static_cast<std::size_t>(std::find(routes.begin(), routes.end(), specs[i].links) - routes.begin())];
      sim.schedule_at(specs[i].start, [&m, &done, r, i, &specs] { m.start(r, specs[i].bytes, &done, i); });
    }
    sim.run();
    REQUIRE(done.at.size() == specs.size());
    for (std::size_t i = 0; i < specs.size(); ++i) CHECK(done.at.at(i) == Approx(expected[i]).epsilon(1e-9));
  return m.stats();
}

}  // namespace
TEST_CASE("flows on one route share it as a processor-sharing queue", "[flow][class]") {
  // One 100 B/s link, one route. f1: 100 B at 0; f2: 50 B and f3: 100 B at 0.5.
  // [0, 0.5): f1 alone at 100 -> 50 left. Then three at 100/3: f1 and f2 (50 each) end at
  // 0.5 + 1.5 = 2.0, when f3 has 50 left; alone at 100 it ends at 2.5.
  Simulator sim(1);
  FlowModel m(sim, {100.0});
  FlowsDone done(sim);
  const LinkIndex link[] = {0};
  const RouteId r = m.add_route(link, 0);
  m.start(r, 100, &done, 1);
  sim.schedule_at(0.5, [&] {
    m.start(r, 50, &done, 2);
    m.start(r, 100, &done, 3);
  });
  sim.run(1.0);
  CHECK(m.link_bytes()[0] == Approx(50 + 3 * 0.5 * 100 / 3.0));
  sim.run();
  CHECK(done.at.at(1) == Approx(2.0));
  CHECK(done.at.at(2) == Approx(2.0));
  CHECK(done.at.at(3) == Approx(2.5));
  CHECK(m.link_bytes()[0] == Approx(250));
  CHECK(m.link_busy_s()[0] == Approx(2.5));
}

TEST_CASE("cancelling a flow of a class speeds up the others at once", "[flow][class]") {
  // One 100 B/s link: three 100 B flows on one route at 0 (33.3 B/s each). At 0.3 the one
  // that would finish first is cancelled (10 B delivered): the two left have 90 B each at
  // 50 B/s and end at 0.3 + 1.8 = 2.1.
  Simulator sim(1);
  FlowModel m(sim, {100.0});
  FlowsDone done(sim);
  const LinkIndex link[] = {0};
  const RouteId r = m.add_route(link, 0);
  const FlowId a = m.start(r, 100, &done, 1);
  m.start(r, 100, &done, 2);
  m.start(r, 100, &done, 3);
  sim.run(0.3);
  CHECK(m.cancel(a, &done, 1) == Approx(10.0));
  sim.run();
  CHECK(done.at.count(1) == 0);
  CHECK(done.at.at(2) == Approx(2.1));
  CHECK(done.at.at(3) == Approx(2.1));
  CHECK(m.link_bytes()[0] == Approx(210));
}

TEST_CASE("staggered flows on one bottleneck cost events in proportion to the flows", "[flow][class]") {
  // n flows 0 -> 1 through one link, one every 1 ms, each needing 10 ms alone: up to ten at
  // once. Per flow: an admission and a completion; never a reschedule of the others.
  for (int n : {100, 1000, 10000}) {
    Simulator sim(1);
    FlowModel m(sim, {1e9, 2e9});
    FlowsDone done(sim);
    const LinkIndex route[] = {1, 0};
    const RouteId r = m.add_route(route, 1e-6);
    for (int i = 0; i < n; ++i) sim.schedule_at(i * 1e-3, [&m, &done, r, i] { m.start(r, 1e7, &done, i); });
    sim.run();
    REQUIRE(done.at.size() == static_cast<std::size_t>(n));
    CHECK(sim.events_processed() <= static_cast<uint64_t>(4 * n));
    CHECK(m.link_bytes()[0] == Approx(1e7 * n));
  }
}

TEST_CASE("classes give the per-flow max-min finish times", "[flow][class]") {
  // Random staggered flows over few routes (so classes hold many flows), some crossing a link
  // twice, on links of different capacities; every finish time against the reference.
  for (uint64_t seed : {1, 2, 3, 4}) {
    cs::engine::RandomStream rng(seed, "class test");
    const std::vector<double> capacity = {100, 70, 130, 55, 90};
    const std::vector<std::vector<LinkIndex>> routes = {{0}, {0, 1}, {1, 2}, {2, 3, 4}, {4, 0}, {3, 1, 3}, {0, 2, 4}};
    std::vector<Spec> specs;
    for (int i = 0; i < 120; ++i) {
      const auto& route = routes[static_cast<std::size_t>(rng.uniform_int(int64_t{0}, static_cast<int64_t>(routes.size()) - 1))];
      specs.push_back({route, 10 + 90 * rng.uniform(), 5 * rng.uniform()});
    }
    check_against_reference(specs, routes, capacity, seed);
  }
}

TEST_CASE("solves that keep the slower classes' rates give the max-min finish times", "[flow][class][incremental]") {
  // Many distinct routes over a dozen links of unequal capacity, flows of different sizes at
  // once and later: rates sit at many levels and flows end one instant after another, so most
  // solves fill only the classes at or above a change's level and keep the rest (checked in
  // the stats). Every finish time against the from-scratch reference.
  for (uint64_t seed : {11, 12, 13}) {
    cs::engine::RandomStream rng(seed, "incremental test");
    std::vector<double> capacity;
    for (int l = 0; l < 12; ++l) capacity.push_back(20 + 180 * rng.uniform());
    std::vector<std::vector<LinkIndex>> routes;
    for (int r = 0; r < 40; ++r) {
      std::vector<LinkIndex> links;
      const int hops = static_cast<int>(rng.uniform_int(int64_t{1}, int64_t{4}));
      for (int h = 0; h < hops; ++h) links.push_back(static_cast<LinkIndex>(rng.uniform_int(int64_t{0}, int64_t{11})));
      routes.push_back(links);  // a link may repeat: crossed twice
    }
    std::vector<Spec> specs;
    for (int i = 0; i < 200; ++i) {
      const auto r = static_cast<std::size_t>(rng.uniform_int(int64_t{0}, int64_t{39}));
      specs.push_back({routes[r], 5 + 195 * rng.uniform(), i < 100 ? 0.0 : 3 * rng.uniform()});
    }
    const cs::net::FlowModelStats st = check_against_reference(specs, routes, capacity, seed);
    CHECK(st.classes_kept > 0);  // the keeping path ran
  }
}

TEST_CASE("routes crossing a link three times and more keep the links' class lists whole", "[flow][class]") {
  // A pipeline as one flow crosses an uplink many times; its class leaves the link's list hop
  // by hop when it ends, while other classes stay. Few links, long routes with repeats. (Seed
  // 54 lost a class from a list before a detached hop's position was cleared.)
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    INFO("seed " << seed);
    cs::engine::RandomStream rng(seed, "repeat test");
    const std::vector<double> capacity = {100, 60, 150};
    std::vector<std::vector<LinkIndex>> routes;
    for (int r = 0; r < 16; ++r) {
      std::vector<LinkIndex> links;
      const int hops = static_cast<int>(rng.uniform_int(int64_t{1}, int64_t{6}));
      for (int h = 0; h < hops; ++h) links.push_back(static_cast<LinkIndex>(rng.uniform_int(int64_t{0}, int64_t{2})));
      routes.push_back(links);
    }
    std::vector<Spec> specs;
    for (int i = 0; i < 120; ++i) {
      const auto r = static_cast<std::size_t>(rng.uniform_int(int64_t{0}, int64_t{15}));
      specs.push_back({routes[r], 5 + 95 * rng.uniform(), 4 * rng.uniform()});
    }
    check_against_reference(specs, routes, capacity, seed);
  }
}

TEST_CASE("flows ending one instant after another: max-min finish times, a bounded queue", "[flow][class][incremental]") {
  // An all-to-all in miniature: 16 endpoints' up- and down-links and 8 shared links of
  // unequal capacity, one flow per ordered pair on its own route (240 classes), sizes all
  // different, most starting at once. Nearly every flow ends at its own instant and each
  // solve moves many rates, so completions are queued anew many times over: the queue keeps
  // the instants that still hold a live entry, not every one ever queued. Every finish time
  // within 1e-12 (relative) of the from-scratch reference.
  cs::engine::RandomStream rng(21, "tail test");
  constexpr int kEnds = 16, kShared = 8;
  std::vector<double> capacity;
  for (int l = 0; l < 2 * kEnds + kShared; ++l) capacity.push_back(50 + 100 * rng.uniform());
  std::vector<std::vector<LinkIndex>> routes;
  std::vector<Spec> specs;
  for (int s = 0; s < kEnds; ++s)
    for (int d = 0; d < kEnds; ++d) {
      if (s == d) continue;
      const auto shared = static_cast<LinkIndex>(2 * kEnds + (s + 3 * d) % kShared);
      routes.push_back({static_cast<LinkIndex>(s), shared, static_cast<LinkIndex>(kEnds + d)});
      specs.push_back({routes.back(), 20 + 80 * rng.uniform(), routes.size() % 5 == 0 ? 2 * rng.uniform() : 0.0});
    }
  const std::vector<double> expected = reference(specs, capacity);
  Simulator sim(1);
  FlowModel m(sim, capacity);
  FlowsDone done(sim);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const RouteId r = m.add_route(routes[i], 0);
    sim.schedule_at(specs[i].start, [&m, &done, r, i, &specs] { m.start(r, specs[i].bytes, &done, i); });
  }
  sim.run();
  REQUIRE(done.at.size() == specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) CHECK(done.at.at(i) == Approx(expected[i]).epsilon(1e-12));
  const cs::net::FlowModelStats& st = m.stats();
  CHECK(st.recomputations > 150);       // flows end at many instants
  CHECK(st.classes_refilled > 10'000);  // and most solves move many rates
  CHECK(st.max_queued_instants <= 2048);
}
