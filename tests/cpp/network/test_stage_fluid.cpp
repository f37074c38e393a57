// The analytical model over time (stage_fluid.hpp): a run alone is the closed-form estimate;
// runs at once share links by max-min fair slowdown, which equals the flow model when
// identical stages share their bottleneck, and is checked against hand-worked timelines.
#include <algorithm>
#include <iterator>
#include <numeric>
#include <vector>

#include <catch2/catch.hpp>

#include "network_test_support.hpp"

#include "sim/network/analytical_model.hpp"
#include "sim/network/stage_fluid.hpp"

using namespace cs;
using namespace cs::test;

namespace {

// n single-GPU nodes on leaves of 3 with one up-port each (radix 4, 3:1): every
// leaf-to-leaf path crosses its leaves' single up-links. NIC and fabric links 50 GB/s.
topo::TopologyParams one_uplink_leaves(int nodes) {
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::fat_tree;
  p.nodes = nodes;
  p.node.gpus = 1;
  p.node.nics = 1;
  p.node.nic_bandwidth_Bps = 50e9;
  p.node.pcie_bandwidth_Bps = 64e9;
  p.link_bandwidth_Bps = 50e9;
  p.switch_radix = 4;
  p.oversubscription = 3;
  return p;
}

// Starts every plan at time 0 on the stage fluid and returns each one's finish time.
std::vector<double> fluid_times(Fabric& f, const std::vector<const work::CollectivePlan*>& plans,
                                const std::vector<double>& bytes, const net::CollectiveCosts& costs,
                                net::StageFluid& fluid) {
  std::vector<std::unique_ptr<net::RoutedPlan>> routed;
  std::vector<double> done(plans.size(), -1);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    routed.push_back(std::make_unique<net::RoutedPlan>(f.network, *plans[i]));
    fluid.start(*routed.back(), bytes[i], costs, [&done, &f, i] { done[i] = f.sim.now(); });
  }
  f.sim.run();
  REQUIRE(fluid.active_runs() == 0);
  return done;
}

// The same plans at once in the flow model (by hand, FlowRun).
std::vector<double> flow_times(const topo::TopologyParams& p, const std::vector<const work::CollectivePlan*>& plans,
                               const std::vector<double>& bytes, const net::CollectiveCosts& costs) {
  Fabric g(p);
  std::vector<std::unique_ptr<FlowRun>> runs;
  for (std::size_t i = 0; i < plans.size(); ++i) runs.push_back(std::make_unique<FlowRun>(g.network, *plans[i], bytes[i], costs));
  for (auto& r : runs) r->start();
  g.sim.run();
  std::vector<double> out;
  for (auto& r : runs) out.push_back(r->done_at());
  return out;
}

work::CollectivePlan halving_doubling(const std::vector<int>& ranks) {
  work::GroupLayout layout{ranks, {}, 1, {}, 1};
  return work::make_plan(work::CollectiveOp::all_reduce, work::CollectiveAlgorithm::halving_doubling, layout);
}

}  // namespace

TEST_CASE("stage fluid: a run alone takes the closed-form estimate", "[fluid]") {
  const net::CollectiveCosts c = some_costs(0.5);
  SECTION("ring in an NVSwitch node") {
    Fabric f(nvswitch_node());
    const work::CollectivePlan plan = ring_plan(first_ranks(8));
    net::StageFluid fluid(f.network);
    const double t = fluid_times(f, {&plan}, {1e8}, c, fluid)[0];
    const net::RoutedPlan routed(f.network, plan);
    CHECK(t == Approx(net::AnalyticalModel::time_s(routed, 1e8, c)).epsilon(1e-12));
    CHECK(t == Approx(flow_time(nvswitch_node(), plan, 1e8, c)).epsilon(1e-9));
  }
  SECTION("halving-doubling (several stages) on a rail fat-tree") {
    Fabric f(rail_fat_tree());
    const work::CollectivePlan plan = halving_doubling(first_ranks(8));
    REQUIRE(plan.stages.size() == 6);
    net::StageFluid fluid(f.network);
    const double t = fluid_times(f, {&plan}, {3e8}, c, fluid)[0];
    const net::RoutedPlan routed(f.network, plan);
    CHECK(t == Approx(net::AnalyticalModel::time_s(routed, 3e8, c)).epsilon(1e-12));
    CHECK(t == Approx(flow_time(rail_fat_tree(), plan, 3e8, c)).epsilon(1e-9));
  }
}

TEST_CASE("stage fluid: rings sharing a fabric link each get half of it, as in the flow model", "[fluid]") {
  // Rings {0, 3} and {1, 4} are disjoint but share both leaves' up-links, which each ring
  // alone would fill: together each gets half, for the whole run.
  const topo::TopologyParams p = one_uplink_leaves(6);
  const work::CollectivePlan a = ring_plan({0, 3}), b = ring_plan({1, 4});
  const double S = 1.0 * (1 << 28);
  const net::CollectiveCosts c = some_costs();
  Fabric f(p);
  const net::RoutedPlan ra(f.network, a);
  const double latency = c.base_latency_s + ra.latency_s(0, c);
  const double alone_bw = ra.per_byte_s(0) * S;
  REQUIRE(f.topology.link(ra.bottleneck(0)).kind == topo::LinkKind::fabric);
  net::StageFluid fluid(f.network);
  const std::vector<double> both = fluid_times(f, {&a, &b}, {S, S}, c, fluid);
  CHECK(both[0] == Approx(latency + 2 * alone_bw).epsilon(1e-12));
  CHECK(both[1] == Approx(both[0]).epsilon(1e-12));
  const std::vector<double> flow = flow_times(p, {&a, &b}, {S, S}, c);
  CHECK(both[0] == Approx(flow[0]).epsilon(1e-9));
  CHECK(both[1] == Approx(flow[1]).epsilon(1e-9));
}

TEST_CASE("stage fluid: identical multi-stage groups sharing up-links stay in step", "[fluid]") {
  // 12 nodes on 4 leaves of 3, one up-link each. Groups {0, 3, 6, 9} and {1, 4, 7, 10} have
  // one member per leaf: in every halving and doubling round each leaf's up-link carries one
  // transfer of each group, so every stage takes twice its time alone, in both models.
  const topo::TopologyParams p = one_uplink_leaves(12);
  const work::CollectivePlan a = halving_doubling({0, 3, 6, 9}), b = halving_doubling({1, 4, 7, 10});
  const double S = 1e9;
  const net::CollectiveCosts c = some_costs();
  Fabric f(p);
  const net::RoutedPlan ra(f.network, a);
  double expected = c.base_latency_s;
  for (std::size_t s = 0; s < ra.stages(); ++s) expected += ra.latency_s(s, c) + 2 * ra.per_byte_s(s) * S;
  net::StageFluid fluid(f.network);
  const std::vector<double> both = fluid_times(f, {&a, &b}, {S, S}, c, fluid);
  CHECK(both[0] == Approx(expected).epsilon(1e-12));
  CHECK(both[1] == Approx(expected).epsilon(1e-12));
  const std::vector<double> flow = flow_times(p, {&a, &b}, {S, S}, c);
  CHECK(both[0] == Approx(flow[0]).epsilon(1e-9));
  CHECK(both[1] == Approx(flow[1]).epsilon(1e-9));
}

TEST_CASE("stage fluid: a smaller collective finishes first, then the larger takes the link", "[fluid]") {
  // Wire only. Alone, ring a moves its bytes in T_a and ring b in T_b = 4 T_a over the same
  // bottleneck. Together each gets half until a is done at 2 T_a (b has done T_a's worth);
  // then b alone finishes its remaining 3 T_a: at 5 T_a = T_a + T_b. Max-min over the two
  // pipelines (one flow each) in the flow model gives the same.
  const topo::TopologyParams p = one_uplink_leaves(6);
  const work::CollectivePlan a = ring_plan({0, 3}), b = ring_plan({1, 4});
  const net::CollectiveCosts wire{};
  const double S = 1e9;
  Fabric f(p);
  const net::RoutedPlan ra(f.network, a);
  const double lat = ra.latency_s(0, wire), t_a = ra.per_byte_s(0) * S;
  net::StageFluid fluid(f.network);
  const std::vector<double> t = fluid_times(f, {&a, &b}, {S, 4 * S}, wire, fluid);
  CHECK(t[0] == Approx(lat + 2 * t_a).epsilon(1e-12));
  CHECK(t[1] == Approx(lat + 5 * t_a).epsilon(1e-12));
  const std::vector<double> flow = flow_times(p, {&a, &b}, {S, 4 * S}, wire);
  CHECK(t[0] == Approx(flow[0]).epsilon(1e-9));
  CHECK(t[1] == Approx(flow[1]).epsilon(1e-9));

  // Link usage over the run. A leaf up-link both rings cross (each ring's every edge carries
  // S, its 2(n-1)/n share with n = 2) carried 5 S, busy all along; ring a's first NIC link
  // carried S over 2 T_a.
  const net::RoutedPlan rb(f.network, b);
  std::vector<topo::LinkId> shared;
  std::set_intersection(ra.links(0).begin(), ra.links(0).end(), rb.links(0).begin(), rb.links(0).end(),
                        std::back_inserter(shared));
  REQUIRE(!shared.empty());
  for (topo::LinkId l : shared) {
    CHECK(fluid.link_bytes()[l] == Approx(5 * S).epsilon(1e-12));
    CHECK(fluid.link_busy_s()[l] == Approx(5 * t_a).epsilon(1e-12));
  }
  const topo::LinkId own = ra.links(0).front();
  REQUIRE(!std::binary_search(rb.links(0).begin(), rb.links(0).end(), own));
  CHECK(fluid.link_bytes()[own] == Approx(S).epsilon(1e-12));
  CHECK(fluid.link_busy_s()[own] == Approx(2 * t_a).epsilon(1e-12));
}

TEST_CASE("stage fluid: a run still waiting out its latency takes no bandwidth", "[fluid]") {
  // Ring b's base latency (1 s) outlasts ring a's bytes: a runs as if alone.
  const topo::TopologyParams p = one_uplink_leaves(6);
  const work::CollectivePlan a = ring_plan({0, 3}), b = ring_plan({1, 4});
  const double S = 1e9;
  Fabric f(p);
  const net::RoutedPlan ra(f.network, a), rb(f.network, b);
  net::StageFluid fluid(f.network);
  net::CollectiveCosts late{};
  late.base_latency_s = 1.0;
  double done_a = -1, done_b = -1;
  fluid.start(ra, S, net::CollectiveCosts{}, [&] { done_a = f.sim.now(); });
  fluid.start(rb, S, late, [&] { done_b = f.sim.now(); });
  f.sim.run();
  CHECK(done_a == Approx(net::AnalyticalModel::time_s(ra, S, net::CollectiveCosts{})).epsilon(1e-12));
  CHECK(done_b == Approx(1.0 + net::AnalyticalModel::time_s(rb, S, net::CollectiveCosts{})).epsilon(1e-12));
}

TEST_CASE("stage fluid: on_done may start the next run; bad input throws", "[fluid]") {
  Fabric f(nvswitch_node());
  const work::CollectivePlan plan = ring_plan(first_ranks(8));
  const net::RoutedPlan routed(f.network, plan);
  net::StageFluid fluid(f.network);
  const net::CollectiveCosts c = some_costs();
  int runs = 0;
  std::function<void()> again = [&] {
    if (++runs < 3) fluid.start(routed, 1e6, c, again);
  };
  fluid.start(routed, 1e6, c, again);
  f.sim.run();
  CHECK(runs == 3);
  CHECK(f.sim.now() == Approx(3 * net::AnalyticalModel::time_s(routed, 1e6, c)).epsilon(1e-12));
  CHECK_THROWS_AS(fluid.start(routed, 0, c, {}), std::invalid_argument);
  CHECK_THROWS_AS(fluid.start(routed, 1e6, some_costs(0), {}), std::invalid_argument);
}

TEST_CASE("stage fluid: a run on links nobody else uses keeps its rate alone while others re-share",
          "[fluid]") {
  // Rings {0, 3} and {1, 4} share their leaves' up-links; ring {6, 7} stays under one leaf.
  // The two sharing rings end at different times, each end re-solving their component only;
  // the third runs as if alone, the first two as the flow model has them.
  const topo::TopologyParams p = one_uplink_leaves(12);
  const work::CollectivePlan a = ring_plan({0, 3}), b = ring_plan({1, 4}), c = ring_plan({6, 7});
  const net::CollectiveCosts costs = some_costs();
  const std::vector<double> bytes{1e9, 3e9, 2e9};
  Fabric f(p);
  net::StageFluid fluid(f.network);
  const std::vector<double> t = fluid_times(f, {&a, &b, &c}, bytes, costs, fluid);
  const net::RoutedPlan rc(f.network, c);
  CHECK(t[2] == Approx(net::AnalyticalModel::time_s(rc, bytes[2], costs)).epsilon(1e-12));
  const std::vector<double> flow = flow_times(p, {&a, &b, &c}, bytes, costs);
  for (int i = 0; i < 3; ++i) CHECK(t[i] == Approx(flow[i]).epsilon(1e-9));
}
