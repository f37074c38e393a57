// An all-pairs stage (a direct exchange) streamed by the analytical model: the same links,
// loads, bottleneck and latency as the stage routed transfer by transfer, on any number of
// threads, and the flow model's time where nothing contends.
#include <atomic>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <tbb/task_arena.h>

#include "network_test_support.hpp"
#include "sim/network/analytical_model.hpp"
#include "topology/routing.hpp"
#include "workloads/collective_plan.hpp"

using namespace cs;
using namespace cs::test;

namespace {

struct Routed {
  topo::Topology topology;
  engine::Simulator sim{1};
  net::Network network;
  Routed(const topo::TopologyParams& p, topo::RoutingKind kind, bool pxn)
      : topology(topo::build_topology(p)), network(sim, topology, kind) {
    network.set_pxn(pxn);
  }
};

// rail_fat_tree() resized: `nodes` nodes of `gpus` GPUs and `nics` NICs, switches of `radix`.
topo::TopologyParams rail_tree(int nodes, int gpus, int nics, int radix) {
  topo::TopologyParams p = rail_fat_tree();
  p.nodes = nodes;
  p.node.gpus = gpus;
  p.node.nics = nics;
  p.switch_radix = radix;
  return p;
}

// A dragonfly of g groups of a routers, p nodes each, h global cables each, 2-GPU nodes.
topo::TopologyParams small_dragonfly(int a, int p, int h, int g) {
  topo::TopologyParams fly;
  fly.kind = topo::TopologyKind::dragonfly;
  fly.routers_per_group = a;
  fly.nodes_per_router = p;
  fly.global_links_per_router = h;
  fly.groups = g;
  fly.nodes = a * p * g;
  fly.node.gpus = 2;
  return fly;
}

work::CollectivePlan direct(work::CollectiveOp op, const std::vector<int>& ranks) {
  work::GroupLayout g;
  g.ranks = ranks;
  return work::make_plan(op, work::CollectiveAlgorithm::direct, g);
}

// Stage by stage, streamed against listed (a flow key of 0 for every transfer routes each
// transfer as the stream does, one by one).
void check_streamed_equals_listed(net::Network& network, const work::CollectivePlan& plan, bool expect_streamed) {
  const net::RoutedPlan streamed(network, plan);
  const net::RoutedPlan listed(network, plan, [](std::size_t, std::size_t) { return uint64_t{0}; });
  REQUIRE(streamed.stages() == listed.stages());
  for (std::size_t s = 0; s < streamed.stages(); ++s) {
    CAPTURE(s);
    CHECK(streamed.streamed(s) == expect_streamed);
    CHECK_FALSE(listed.streamed(s));
    CHECK(std::vector(streamed.links(s).begin(), streamed.links(s).end()) ==
          std::vector(listed.links(s).begin(), listed.links(s).end()));
    CHECK(std::vector(streamed.crossings(s).begin(), streamed.crossings(s).end()) ==
          std::vector(listed.crossings(s).begin(), listed.crossings(s).end()));
    for (std::size_t i = 0; i < streamed.unit_loads(s).size(); ++i)
      CHECK(streamed.unit_loads(s)[i] == Approx(listed.unit_loads(s)[i]).epsilon(1e-12));
    CHECK(streamed.per_byte_s(s) == Approx(listed.per_byte_s(s)).epsilon(1e-12));
    CHECK(streamed.bottleneck(s) == listed.bottleneck(s));
    CHECK(streamed.flow_weight(s) == Approx(listed.flow_weight(s)).epsilon(1e-12));
    CHECK(streamed.payload_share(s) == Approx(listed.payload_share(s)).epsilon(1e-12));
    for (double nvlink_step : {0.0, 1e-6, 1e-3}) {
      net::CollectiveCosts c = some_costs();
      c.step_latency_s[kNvlink] = nvlink_step;
      CHECK(streamed.latency_s(s, c) == listed.latency_s(s, c));
    }
  }
}

}  // namespace

TEST_CASE("a streamed all-pairs stage equals the stage routed transfer by transfer", "[analytical][all_pairs]") {
  using K = topo::RoutingKind;
  const topo::TopologyParams tree = rail_tree(8, 4, 2, 8);
  // Any order, not the whole fabric; enough pairs to be streamed (kHopsPerPair x pairs >= links).
  const std::vector<int> some{9, 2, 30, 17, 4, 5, 23, 0, 12, 31, 20, 14, 7, 27, 1, 18, 25, 10, 3, 28};
  for (K kind : {K::dmodk, K::ecmp, K::spray})
    for (bool pxn : {false, true}) {
      CAPTURE(std::string(topo::to_string(kind)), pxn);
      Routed r(tree, kind, pxn);
      for (auto op : {work::CollectiveOp::all_to_all, work::CollectiveOp::all_reduce}) {
        check_streamed_equals_listed(r.network, direct(op, first_ranks(r.topology.ranks())), true);
        check_streamed_equals_listed(r.network, direct(op, some), true);
      }
    }
  const topo::TopologyParams fly = small_dragonfly(2, 2, 1, 3);
  for (K kind : {K::minimal, K::valiant}) {
    Routed r(fly, kind, false);
    check_streamed_equals_listed(r.network, direct(work::CollectiveOp::all_to_all, first_ranks(24)), true);
  }
}

TEST_CASE("load-aware routings place an all-pairs stage pair after pair as the listed stage does", "[analytical][all_pairs]") {
  // Adaptive and UGAL choose each pair's path by the transfers placed before it: streamed on
  // one thread in the listed order, with the same choices, and the placements taken off after
  // (the listed plan built second sees an idle fabric again).
  topo::TopologyParams tree = rail_tree(8, 4, 2, 8);
  tree.oversubscription = 2;
  for (bool pxn : {false, true}) {
    Routed r(tree, topo::RoutingKind::adaptive, pxn);
    for (auto op : {work::CollectiveOp::all_to_all, work::CollectiveOp::all_reduce})
      check_streamed_equals_listed(r.network, direct(op, first_ranks(r.topology.ranks())), true);
  }
  const topo::TopologyParams fly = small_dragonfly(4, 1, 1, 5);
  Routed r(fly, topo::RoutingKind::ugal, false);
  // Inside two of the five groups (8 ranks each): their one cable each way is the minimal
  // routes' bottleneck, so UGAL sends some pairs through the other groups.
  const work::CollectivePlan plan = direct(work::CollectiveOp::all_to_all, first_ranks(16));
  check_streamed_equals_listed(r.network, plan, true);
  // UGAL took some Valiant routes: the placements mattered.
  const net::RoutedPlan minimal_only = [&] {
    Routed m(fly, topo::RoutingKind::minimal, false);
    return net::RoutedPlan(m.network, plan);
  }();
  const net::RoutedPlan ugal(r.network, plan);
  CHECK(std::vector(minimal_only.crossings(0).begin(), minimal_only.crossings(0).end()) !=
        std::vector(ugal.crossings(0).begin(), ugal.crossings(0).end()));
}

TEST_CASE("adaptive counts an all-pairs stage by its own copy of the loads as placed pair by pair", "[analytical][all_pairs]") {
  // Three tiers (a choice of two ports), a 2:1 tree, loads already in flight and uneven: the
  // router's copy of the loads, read from the oracle once and raised by each pair's choice
  // (Network::count_chosen_pairs), gives the choices that route() makes by the oracle with
  // every earlier pair placed (the listed stage); the copy is the streamed stage's path.
  topo::TopologyParams tree = rail_tree(16, 4, 4, 8);
  tree.tiers = 3;
  tree.oversubscription = 2;
  Routed r(tree, topo::RoutingKind::adaptive, false);
  REQUIRE(r.topology.fat_tree()->tiers == 3);
  const std::vector<int> all = first_ranks(r.topology.ranks());
  const std::vector<uint64_t> idle = r.network.count_chosen_pairs(all).value().crossings;
  r.network.set_load_oracle([](topo::LinkId l) { return static_cast<uint32_t>(l * 7 % 5); });
  const std::vector<uint64_t> loaded = r.network.count_chosen_pairs(all).value().crossings;
  CHECK(loaded != idle);  // the loads in flight moved some choices
  for (auto op : {work::CollectiveOp::all_to_all, work::CollectiveOp::all_reduce})
    check_streamed_equals_listed(r.network, direct(op, all), true);
  // With PXN a pair's route is two choices: placed pair by pair.
  r.network.set_pxn(true);
  CHECK_FALSE(r.network.count_chosen_pairs(all).has_value());
}

TEST_CASE("UGAL places a stage larger than its serial leaver search as listed, on any thread count", "[analytical][all_pairs]") {
  // Three of nine groups (96 ranks, 9,216 pairs): past the first 4,096 pairs the search for
  // the next pair that leaves its start route runs on every core
  // (Network::first_leaving_start). The groups' one cable each way is the minimal routes'
  // bottleneck, so pairs leave through the six idle groups.
  const topo::TopologyParams fly = small_dragonfly(8, 2, 1, 9);
  const work::CollectivePlan plan = direct(work::CollectiveOp::all_to_all, first_ranks(96));
  const auto routed_on = [&](int threads) {
    Routed r(fly, topo::RoutingKind::ugal, false);
    tbb::task_arena arena(threads);
    return arena.execute([&] { return net::RoutedPlan(r.network, plan); });
  };
  const net::RoutedPlan one = routed_on(1), two = routed_on(2);
  CHECK(std::vector(one.crossings(0).begin(), one.crossings(0).end()) ==
        std::vector(two.crossings(0).begin(), two.crossings(0).end()));
  CHECK(one.per_byte_s(0) == two.per_byte_s(0));
  Routed r(fly, topo::RoutingKind::ugal, false);
  check_streamed_equals_listed(r.network, plan, true);
  Routed m(fly, topo::RoutingKind::minimal, false);
  const net::RoutedPlan minimal_only(m.network, plan);
  CHECK(std::vector(minimal_only.crossings(0).begin(), minimal_only.crossings(0).end()) !=
        std::vector(one.crossings(0).begin(), one.crossings(0).end()));
}

TEST_CASE("streaming an all-pairs stage stops at the simulator's interrupt check", "[analytical][all_pairs]") {
  // Polled per piece of sources (per source when placed one after another, per 1/64 of them
  // when adaptive counts them with its copy of the loads); a load-aware
  // stage's placements come off the links when it stops.
  for (auto kind : {topo::RoutingKind::ecmp, topo::RoutingKind::adaptive}) {
    Routed r(rail_tree(16, 4, 2, 8), kind, false);
    const work::CollectivePlan plan = direct(work::CollectiveOp::all_to_all, first_ranks(r.topology.ranks()));
    std::atomic<int> polls{0};  // polled from every thread streaming
    r.sim.set_interrupt_check([&] { return ++polls >= 2; });
    CHECK_THROWS_AS(net::RoutedPlan(r.network, plan), engine::Interrupted);
    r.sim.set_interrupt_check({});
    const net::RoutedPlan after(r.network, plan);
    const net::RoutedPlan listed(r.network, plan, [](std::size_t, std::size_t) { return uint64_t{0}; });
    CHECK(after.streamed(0));
    CHECK(std::vector(after.crossings(0).begin(), after.crossings(0).end()) ==
          std::vector(listed.crossings(0).begin(), listed.crossings(0).end()));
  }
}

TEST_CASE("a small all-pairs group on a large fabric is listed, not streamed", "[analytical][all_pairs]") {
  // 8 ranks (56 pairs) on a 512-GPU fabric: an array over every link per thread would cost more
  // than the pairs' hops.
  Routed r(rail_tree(64, 8, 8, 64), topo::RoutingKind::dmodk, false);
  REQUIRE(r.network.model_links() > 56 * 4);
  check_streamed_equals_listed(r.network, direct(work::CollectiveOp::all_to_all, {0, 8, 16, 24, 32, 40, 48, 56}), false);
}

TEST_CASE("a streamed all-pairs stage is the same on one thread and on several", "[analytical][all_pairs]") {
  topo::TopologyParams p = rail_tree(16, 8, 8, 16);
  p.tiers = 3;
  Routed r(p, topo::RoutingKind::ecmp, false);
  const work::CollectivePlan plan = direct(work::CollectiveOp::all_to_all, first_ranks(r.topology.ranks()));
  const auto routed_on = [&](int threads) {
    tbb::task_arena arena(threads);
    return arena.execute([&] { return net::RoutedPlan(r.network, plan); });
  };
  const net::RoutedPlan one = routed_on(1), two = routed_on(2);
  REQUIRE(one.streamed(0));
  CHECK(std::vector(one.crossings(0).begin(), one.crossings(0).end()) ==
        std::vector(two.crossings(0).begin(), two.crossings(0).end()));
  CHECK(one.per_byte_s(0) == two.per_byte_s(0));
  CHECK(one.latency_s(0, some_costs()) == two.latency_s(0, some_costs()));
}

TEST_CASE("a direct all-to-all alone on a non-blocking tree: analytical equals flow", "[analytical][all_pairs]") {
  // Every pair's flow takes an equal share of its NIC links; nothing else is a bottleneck.
  topo::TopologyParams p = rail_fat_tree();
  const work::CollectivePlan plan = direct(work::CollectiveOp::all_to_all, first_ranks(8));
  Fabric f(p);
  const net::RoutedPlan routed(f.network, plan);
  net::AnalyticalModel model(f.network);
  const double S = 1 << 26;
  const net::CollectiveEstimate e = model.estimate(routed, S, some_costs());
  CHECK(e.time_s == Approx(flow_time(p, plan, S, some_costs())).epsilon(1e-9));
}
