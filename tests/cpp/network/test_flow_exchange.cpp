// A bulk exchange (FlowModel::start_exchange, flow_exchange.hpp) against the same pairs
// started one flow each: when it ends, what its links carried, how busy and how full they were,
// at the end and half-way; what it had delivered when cancelled; and when another flow starts
// while it runs (it becomes flows), before or after its flows take bandwidth. Then a direct
// all-to-all run by CollectiveRun as one exchange against the same plan run flow by flow, on
// fat-trees (D-mod-K, ECMP, PXN) and a dragonfly. And the solve with its flows listed at once
// against the same listed in many passes (a small budget), and with the legs' pairs listed by
// the routing's counter, bit for bit.
#include <algorithm>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <tbb/task_arena.h>

#include "network_test_support.hpp"
#include "sim/engine/random.hpp"
#include "sim/network/collective_run.hpp"
#include "sim/network/flow_model.hpp"

using namespace cs;
using namespace cs::test;
using net::FlowId;
using net::FlowModel;
using net::LinkIndex;
using net::RouteId;

namespace {

// Pairs over listed routes (a link may repeat: crossed twice).
struct ListedPairs final : net::PairSource {
  ListedPairs(FlowModel& m, std::vector<std::vector<LinkIndex>> r) : model(m), routes(std::move(r)) {}
  std::size_t pairs() const override { return routes.size(); }
  void links(std::size_t i, std::vector<uint32_t>& out) const override {
    out.insert(out.end(), routes[i].begin(), routes[i].end());
  }
  RouteId route(std::size_t i) override { return model.add_route(routes[i], 0.0); }
  FlowModel& model;
  std::vector<std::vector<LinkIndex>> routes;
};

struct Instance {
  std::vector<double> capacity;
  std::vector<std::vector<LinkIndex>> routes;
};

// Links of capacity 1..10 GB/s and routes of 1-4 hops over them (some crossing a link twice).
Instance random_instance(uint64_t seed, int links, int pairs) {
  engine::RandomStream rng(seed);
  Instance in;
  for (int l = 0; l < links; ++l) in.capacity.push_back(1e9 * static_cast<double>(rng.uniform_int(1, 10)));
  for (int p = 0; p < pairs; ++p) {
    std::vector<LinkIndex> r;
    const int hops = static_cast<int>(rng.uniform_int(1, 4));
    for (int h = 0; h < hops; ++h) r.push_back(static_cast<LinkIndex>(rng.uniform_int(0, links - 1)));
    in.routes.push_back(r);
  }
  return in;
}

// One model running the pairs as an exchange, one as a flow each.
struct Both {
  static constexpr double kBytes = 1e8, kLatency = 2e-6;
  explicit Both(const Instance& in)
      : a_model(a_sim, in.capacity), b_model(b_sim, in.capacity), pairs(a_model, in.routes) {
    a_model.start_exchange(pairs, kBytes, &a_done, 7, kLatency);
    for (std::size_t i = 0; i < in.routes.size(); ++i)
      b_flows.push_back(b_model.start(b_model.add_route(in.routes[i], 0.0), kBytes, &b_done, i, kLatency));
  }
  double b_last() const {
    double last = 0;
    for (const auto& [tag, t] : b_done.at) last = std::max(last, t);
    return last;
  }
  void check_usage() const {
    const auto same = [](const std::vector<double>& x, const std::vector<double>& y) {
      REQUIRE(x.size() == y.size());
      for (std::size_t l = 0; l < x.size(); ++l) CHECK(x[l] == Approx(y[l]).epsilon(1e-9).margin(1e-12));
    };
    same(a_model.link_bytes(), b_model.link_bytes());
    same(a_model.link_busy_s(), b_model.link_busy_s());
    same(a_model.link_peak_utilization(), b_model.link_peak_utilization());
    CHECK(a_model.active_flows() == b_model.active_flows());
  }
  engine::Simulator a_sim{1}, b_sim{1};
  FlowModel a_model, b_model;
  ListedPairs pairs;
  FlowsDone a_done{a_sim}, b_done{b_sim};
  std::vector<FlowId> b_flows;
};

}  // namespace

TEST_CASE("an exchange alone equals its pairs run as flows, at the end and on the way", "[flow][exchange]") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Both both(random_instance(seed, 12, 40));
    both.check_usage();  // in flight: nothing moved
    // Half-way through the flows' run (every flow takes bandwidth by then).
    const double mid = Both::kLatency + 0.5 * Both::kBytes / 1e9;
    both.a_sim.run(mid);
    both.b_sim.run(mid);
    both.check_usage();
    both.a_sim.run();
    both.b_sim.run();
    REQUIRE(both.a_done.at.size() == 1);
    CHECK(both.a_done.at.at(7) == Approx(both.b_last()).epsilon(1e-12));
    both.check_usage();
    CHECK(both.a_model.stats().flows_started == 40);
    CHECK(both.a_model.stats().flows_completed == 40);
  }
}

TEST_CASE("a flow started while an exchange runs turns it into flows, exactly", "[flow][exchange]") {
  // Before its flows take bandwidth (in flight), and while they share.
  for (const double at : {1e-6, 0.03, 0.07}) {
    for (uint64_t seed = 1; seed <= 10; ++seed) {
      const Instance in = random_instance(seed, 10, 30);
      Both both(in);
      FlowsDone a_extra(both.a_sim), b_extra(both.b_sim);
      const std::vector<LinkIndex> extra{0, 3, 5};
      both.a_sim.schedule_at(at, [&] { both.a_model.start(both.a_model.add_route(extra, 0.0), 5e7, &a_extra, 1); });
      both.b_sim.schedule_at(at, [&] { both.b_model.start(both.b_model.add_route(extra, 0.0), 5e7, &b_extra, 1); });
      both.a_sim.run();
      both.b_sim.run();
      REQUIRE(both.a_done.at.size() == 1);
      CHECK(both.a_done.at.at(7) == Approx(both.b_last()).epsilon(1e-9));
      CHECK(a_extra.at.at(1) == Approx(b_extra.at.at(1)).epsilon(1e-9));
      both.check_usage();
      CHECK(both.a_model.stats().flows_started == 31);
      CHECK(both.a_model.stats().flows_completed == 31);
    }
  }
}

TEST_CASE("an exchange started beside active flows runs as flows", "[flow][exchange]") {
  const Instance in = random_instance(3, 10, 30);
  engine::Simulator a_sim(1), b_sim(1);
  FlowModel a(a_sim, in.capacity), b(b_sim, in.capacity);
  FlowsDone a_done(a_sim), b_done(b_sim);
  a.start(a.add_route(std::vector<LinkIndex>{1, 2}, 0.0), 3e8, &a_done, 100);
  b.start(b.add_route(std::vector<LinkIndex>{1, 2}, 0.0), 3e8, &b_done, 100);
  ListedPairs pairs(a, in.routes);
  a.start_exchange(pairs, 1e8, &a_done, 7, 0.0);
  for (std::size_t i = 0; i < in.routes.size(); ++i) b.start(b.add_route(in.routes[i], 0.0), 1e8, &b_done, i);
  a_sim.run();
  b_sim.run();
  double last = 0;
  for (std::size_t i = 0; i < in.routes.size(); ++i) last = std::max(last, b_done.at.at(i));
  CHECK(a_done.at.at(7) == Approx(last).epsilon(1e-12));
  CHECK(a_done.at.at(100) == Approx(b_done.at.at(100)).epsilon(1e-12));
  CHECK(a.link_bytes() == b.link_bytes());
}

TEST_CASE("a cancelled exchange delivered what its flows had", "[flow][exchange]") {
  for (const bool materialized : {false, true}) {
    const Instance in = random_instance(5, 10, 30);
    Both both(in);
    FlowsDone a_extra(both.a_sim), b_extra(both.b_sim);
    if (materialized) {
      both.a_sim.schedule_at(0.01, [&] { both.a_model.start(both.a_model.add_route(in.routes[0], 0.0), 1e7, &a_extra, 1); });
      both.b_sim.schedule_at(0.01, [&] { both.b_model.start(both.b_model.add_route(in.routes[0], 0.0), 1e7, &b_extra, 1); });
    }
    const double at = 0.05;
    double a_delivered = -2, b_delivered = 0;
    both.a_sim.schedule_at(at, [&] { a_delivered = both.a_model.cancel_exchange(&both.a_done, 7); });
    both.b_sim.schedule_at(at, [&] {
      for (std::size_t i = 0; i < both.b_flows.size(); ++i) {
        const double d = both.b_model.cancel(both.b_flows[i], &both.b_done, i);
        b_delivered += d >= 0 ? d : Both::kBytes;  // done before
      }
    });
    both.a_sim.run();
    both.b_sim.run();
    CHECK(a_delivered == Approx(b_delivered).epsilon(1e-9));
    CHECK(both.a_done.at.empty());  // a cancelled exchange is not told
    CHECK(both.a_model.cancel_exchange(&both.a_done, 7) == -1);
    both.check_usage();
  }
}

TEST_CASE("an exchange started at the instant a solved one ends runs after it, each told once", "[flow][exchange]") {
  // A ends at 0.2; B starts then (before A's end event, and a hair earlier, within rounding).
  const std::vector<double> capacity{1e9, 1e9, 2e9};
  for (const double at : {0.2, 0.2 * (1 - 3e-13)}) {
    engine::Simulator sim(1);
    FlowModel model(sim, capacity);
    ListedPairs a(model, {{0}, {1}, {0, 2}}), b(model, {{0}, {2}});
    FlowsDone done(sim);
    model.start_exchange(a, 1e8, &done, 1, 0.0);
    sim.schedule_at(at, [&] { model.start_exchange(b, 1e8, &done, 2, 0.0); });
    sim.run();
    REQUIRE(done.at.size() == 2);
    CHECK(done.at.at(1) == Approx(0.2).epsilon(1e-12));
    CHECK(done.at.at(2) == Approx(at + 0.1).epsilon(1e-12));  // link 0 alone at 1 GB/s
    CHECK(model.stats().flows_completed == 5);
    CHECK(model.active_flows() == 0);
    CHECK(model.link_bytes() == std::vector<double>{3e8, 1e8, 2e8});
  }
}

TEST_CASE("an exchange's solve stops at the simulator's interrupt check, starting nothing", "[flow][exchange]") {
  const Instance in = random_instance(9, 10, 100);
  engine::Simulator sim(1);
  FlowModel model(sim, in.capacity);
  ListedPairs pairs(model, in.routes);
  FlowsDone done(sim);
  sim.set_interrupt_check([] { return true; });
  CHECK_THROWS_AS(model.start_exchange(pairs, 1e8, &done, 7, 0.0), engine::Interrupted);
  sim.set_interrupt_check({});
  CHECK(model.active_flows() == 0);
  CHECK(model.stats().flows_started == 0);
  sim.run();
  CHECK(done.at.empty());
}

namespace {

// 3 groups of 2 routers, 2 nodes of 2 GPUs each.
topo::TopologyParams exchange_dragonfly() {
  topo::TopologyParams fly;
  fly.kind = topo::TopologyKind::dragonfly;
  fly.routers_per_group = 2;
  fly.nodes_per_router = 2;
  fly.global_links_per_router = 1;
  fly.groups = 3;
  fly.nodes = 12;
  fly.node.gpus = 2;
  return fly;
}

// A direct all-to-all run by CollectiveRun, as one exchange (threshold 0) or flow by flow:
// when it ends and what its links carried.
struct A2aResult {
  double done_at = -1;
  std::vector<double> bytes, busy, peak;
  uint64_t flows = 0;
  std::size_t routes = 0;  // registered with the flow model
  double cancelled = -1;   // what group 0's cancel returned
};

struct A2aCase {
  work::CollectiveOp op = work::CollectiveOp::all_to_all;
  int groups = 1;           // groups of the ranks split evenly, run at once
  double cancel_at = -1;    // cancel group 0 then (< 0: never)
};

A2aResult run_a2a(const topo::TopologyParams& p, topo::RoutingKind kind, bool pxn, std::size_t exchange_pairs,
                  const A2aCase& c = {}) {
  const topo::Topology topology = topo::build_topology(p);
  engine::Simulator sim(1);
  net::Network network(sim, topology, kind);
  network.set_pxn(pxn);
  const int per_group = topology.ranks() / c.groups;
  std::vector<work::CollectivePlan> plans;
  for (int k = 0; k < c.groups; ++k) {
    work::GroupLayout g;
    for (int r = 0; r < per_group; ++r) g.ranks.push_back(k * per_group + r);
    plans.push_back(work::make_plan(c.op, work::CollectiveAlgorithm::direct, g));
  }
  std::vector<std::unique_ptr<net::CollectiveRun>> runs;
  A2aResult r;
  std::vector<net::RunHandle> handles;
  for (const auto& plan : plans) {
    runs.push_back(std::make_unique<net::CollectiveRun>(network, plan, exchange_pairs));
    handles.push_back(runs.back()->start(1 << 24, some_costs(0.9), [&] { r.done_at = std::max(r.done_at, sim.now()); }));
  }
  if (c.cancel_at >= 0) sim.schedule_at(c.cancel_at, [&] { r.cancelled = runs[0]->cancel(handles[0]); });
  sim.run();
  r.bytes = network.flows().link_bytes();
  r.busy = network.flows().link_busy_s();
  r.peak = network.flows().link_peak_utilization();
  r.flows = network.flows().stats().flows_started;
  r.routes = network.flows().num_routes();
  return r;
}

void check_exchange_equals_flows(const topo::TopologyParams& p, topo::RoutingKind kind, bool pxn,
                                 const A2aCase& c = {}) {
  const A2aResult ex = run_a2a(p, kind, pxn, 0, c), flows = run_a2a(p, kind, pxn, std::size_t(-1), c);
  if (c.cancel_at < 0 || c.groups > 1) REQUIRE(ex.done_at > 0);
  CHECK(ex.done_at == Approx(flows.done_at).epsilon(1e-12));
  CHECK(ex.cancelled == Approx(flows.cancelled).epsilon(1e-9));
  CHECK(ex.flows == flows.flows);
  // No pair held, where one group runs alone (else the exchange became flows).
  if (c.groups == 1) CHECK(ex.routes == 0);
  CHECK(flows.routes > 0);
  REQUIRE(ex.bytes.size() == flows.bytes.size());
  for (std::size_t l = 0; l < ex.bytes.size(); ++l) {
    CHECK(ex.bytes[l] == Approx(flows.bytes[l]).epsilon(1e-9));
    CHECK(ex.busy[l] == Approx(flows.busy[l]).epsilon(1e-9).margin(1e-15));
    CHECK(ex.peak[l] == Approx(flows.peak[l]).epsilon(1e-9));
  }
}

}  // namespace

TEST_CASE("a direct all-to-all as one exchange equals it flow by flow", "[flow][exchange]") {
  SECTION("fat-tree, 2:1 tapered, D-mod-K and ECMP, with and without PXN") {
    topo::TopologyParams p = rail_fat_tree();
    p.nodes = 8;
    p.oversubscription = 2;
    for (auto kind : {topo::RoutingKind::dmodk, topo::RoutingKind::ecmp})
      for (bool pxn : {false, true}) check_exchange_equals_flows(p, kind, pxn);
  }
  SECTION("dragonfly, minimal and Valiant") {
    const topo::TopologyParams fly = exchange_dragonfly();
    for (auto kind : {topo::RoutingKind::minimal, topo::RoutingKind::valiant}) check_exchange_equals_flows(fly, kind, false);
  }
  SECTION("fat-tree spray (bundles) and a torus (dimension order)") {
    topo::TopologyParams p = rail_fat_tree();
    p.nodes = 8;
    p.oversubscription = 2;
    check_exchange_equals_flows(p, topo::RoutingKind::spray, false);
    topo::TopologyParams torus;
    torus.kind = topo::TopologyKind::torus;
    torus.dims = {3, 4};
    torus.nodes = 12;
    torus.node.gpus = 2;
    check_exchange_equals_flows(torus, topo::RoutingKind::dor, false);
  }
}

TEST_CASE("a direct all-reduce (two all-pairs stages), groups at once and a cancel, as exchanges", "[flow][exchange]") {
  topo::TopologyParams p = rail_fat_tree();
  p.nodes = 8;
  p.oversubscription = 2;
  A2aCase all_reduce;
  all_reduce.op = work::CollectiveOp::all_reduce;
  check_exchange_equals_flows(p, topo::RoutingKind::ecmp, false, all_reduce);
  // Two groups: the second's exchange starts beside the first, which becomes flows.
  A2aCase groups;
  groups.groups = 2;
  check_exchange_equals_flows(p, topo::RoutingKind::ecmp, false, groups);
  // Cancelled half-way: solved, and as flows (beside the other group).
  const double whole = run_a2a(p, topo::RoutingKind::ecmp, false, 0).done_at;
  for (int g : {1, 2}) {
    A2aCase cancel;
    cancel.groups = g;
    cancel.cancel_at = whole / 2;
    check_exchange_equals_flows(p, topo::RoutingKind::ecmp, false, cancel);
    CHECK(run_a2a(p, topo::RoutingKind::ecmp, false, 0, cancel).cancelled > 0);
  }
}

TEST_CASE("an exchange's numbers are the same on one thread and on several", "[flow][exchange]") {
  topo::TopologyParams p = rail_fat_tree();
  p.nodes = 8;
  p.oversubscription = 2;
  const auto on = [&](int threads) {
    tbb::task_arena arena(threads);
    return arena.execute([&] { return run_a2a(p, topo::RoutingKind::ecmp, false, 0); });
  };
  const A2aResult one = on(1), two = on(2);
  CHECK(one.done_at == two.done_at);
  CHECK(one.bytes == two.bytes);
  CHECK(one.busy == two.busy);
  CHECK(one.peak == two.peak);
}

namespace {

// Every ordered pair of a fabric's ranks on its uncached routes, as CollectiveRun's exchange
// stage gives them (never run as flows here).
struct FabricPairs final : net::PairSource {
  explicit FabricPairs(const net::Network& n) : network(n), ranks(n.ranks()) {}
  std::size_t pairs() const override { return static_cast<std::size_t>(ranks) * (ranks - 1); }
  void links(std::size_t i, std::vector<uint32_t>& out) const override {
    const int a = static_cast<int>(i / (ranks - 1));
    int b = static_cast<int>(i % (ranks - 1));
    b += b >= a;
    topo::Route route;
    if (!network.route_into(a, b, 0, route)) throw std::logic_error("FabricPairs: no uncached route");
    network.append_model_links(route, out);
  }
  RouteId route(std::size_t) override { throw std::logic_error("FabricPairs: not run as flows"); }
  const net::Network& network;
  int ranks;
};

// Two solves of one exchange: the same rates and link use, bit for bit.
void check_same_solve(const net::PairExchange& whole, const net::PairExchange& listed, std::span<const double> capacity) {
  std::size_t differ = 0;
  REQUIRE(whole.pairs() == listed.pairs());
  for (std::size_t i = 0; i < whole.pairs(); ++i) differ += whole.rate_Bps(i) != listed.rate_Bps(i);
  CHECK(differ == 0);
  REQUIRE(whole.duration_s() == listed.duration_s());
  for (const double tau : {whole.duration_s() / 3, whole.duration_s()}) {
    std::vector<double> a(capacity.size(), 0.0), b = a, c = a, d = a, e = a, f = a;
    whole.add_link_bytes(tau, a);
    listed.add_link_bytes(tau, b);
    whole.add_link_busy(tau, c);
    listed.add_link_busy(tau, d);
    whole.max_link_utilization(tau, capacity, e);
    listed.max_link_utilization(tau, capacity, f);
    CHECK(a == b);
    CHECK(c == d);
    CHECK(e == f);
    CHECK(whole.unfinished(tau) == listed.unfinished(tau));
    CHECK(whole.delivered(tau) == listed.delivered(tau));
  }
}

// The pairs solved listing every flow at once and within `budget` crossings (many passes).
void check_lists_do_not_matter(const net::PairSource& pairs, std::span<const double> capacity, std::size_t budget) {
  const net::PairExchange whole(pairs, capacity, 1e8, [] {}), listed(pairs, capacity, 1e8, [] {}, budget);
  CHECK(whole.list_passes() == 1);
  CHECK(listed.list_passes() > 1);
  check_same_solve(whole, listed, capacity);
}

// FabricPairs whose ranks' legs list their own pairs, from the routing's all-pairs counter
// (as CollectiveRun's exchange stage does).
struct LegListedPairs final : net::PairSource {
  LegListedPairs(const net::Network& n, const FabricPairs& p) : pairs_of(p), ranks(n.ranks()) {
    for (int r = 0; r < ranks; ++r) members.push_back(r);
    counter = n.all_pairs_counter(members);
  }
  std::size_t pairs() const override { return pairs_of.pairs(); }
  void links(std::size_t i, std::vector<uint32_t>& out) const override { pairs_of.links(i, out); }
  bool pairs_crossing(uint32_t link, std::vector<uint32_t>& out) const override {
    std::vector<std::pair<uint32_t, uint32_t>> legs;
    if (!counter->append_leg_pairs(link, legs)) return false;
    for (const auto& [a, b] : legs) out.push_back(a * static_cast<uint32_t>(ranks - 1) + (b < a ? b : b - 1));
    return true;
  }
  RouteId route(std::size_t) override { throw std::logic_error("LegListedPairs: not run as flows"); }
  const FabricPairs& pairs_of;
  int ranks;
  std::vector<int> members;
  std::unique_ptr<topo::AllPairsCounter> counter;
};

}  // namespace

TEST_CASE("an exchange solves the same whether its flows are listed at once or in many passes", "[flow][exchange]") {
  SECTION("random routes, some crossing a link twice") {
    for (uint64_t seed = 1; seed <= 10; ++seed) {
      const Instance in = random_instance(seed, 12, 60);
      engine::Simulator sim(1);
      FlowModel model(sim, in.capacity);
      const ListedPairs pairs(model, in.routes);
      for (const std::size_t budget : {1, 7, 40}) check_lists_do_not_matter(pairs, in.capacity, budget);
    }
  }
  SECTION("all-to-alls on a tapered fat-tree (D-mod-K, ECMP, spray) and a dragonfly (minimal, Valiant)") {
    topo::TopologyParams tree = rail_fat_tree();
    tree.nodes = 8;
    tree.oversubscription = 2;
    const topo::TopologyParams fly = exchange_dragonfly();
    for (const auto& [p, kind] : {std::pair{tree, topo::RoutingKind::dmodk}, std::pair{tree, topo::RoutingKind::ecmp},
                                  std::pair{tree, topo::RoutingKind::spray}, std::pair{fly, topo::RoutingKind::minimal},
                                  std::pair{fly, topo::RoutingKind::valiant}}) {
      const topo::Topology topology = topo::build_topology(p);
      engine::Simulator sim(1);
      const net::Network network(sim, topology, kind);
      const FabricPairs pairs(network);
      // A link's flows alone (the smallest), a few links' and about half of them per pass.
      for (const std::size_t budget : {1, 50, 600}) check_lists_do_not_matter(pairs, network.capacities_Bps(), budget);
      // With the legs' pairs from the counter: the same solve, in fewer passes (a leg that
      // saturates needs none).
      const LegListedPairs by_legs(network, pairs);
      REQUIRE(by_legs.counter != nullptr);
      const net::PairExchange whole(pairs, network.capacities_Bps(), 1e8, [] {});
      const net::PairExchange listed(pairs, network.capacities_Bps(), 1e8, [] {}, 1);
      const net::PairExchange legs(by_legs, network.capacities_Bps(), 1e8, [] {}, 1);
      CHECK(legs.list_passes() < listed.list_passes());
      check_same_solve(whole, legs, network.capacities_Bps());
    }
  }
}
