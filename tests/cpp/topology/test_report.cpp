// The topology report: closed forms against max-flow and BFS, counts, and the bill.
#include <catch2/catch.hpp>

#include "direct_helpers.hpp"
#include "helpers.hpp"
#include "report_helpers.hpp"
#include "topology/report.hpp"

using namespace cs::topo;
using namespace cs::topo::test;

namespace {


// Distinct prices so a wrong count shows in the total.
PriceTable distinct_prices() {
  PriceTable t = flat_prices({1000, 10}, {300, 3}, {70, 0.7}, {9, 0}, {11, 0}, {100000, 1000});
  t.switch_port.by_gbps[800] = {5000, 50, "test"};
  return t;
}

TopologyReport distinct_report(const TopologyParams& p) {
  return make_report(build_topology(p), p, distinct_prices());
}

}  // namespace

TEST_CASE("non-blocking 2-tier fat-tree: bisection N/2 NIC links", "[report]") {
  SECTION("small full tree: the tree cut equals max-flow") {
    const TopologyParams p = fat_tree(32, 1, 1, 8);  // radix 8: 8 leaves x 4 NICs, 4 spines
    const auto r = distinct_report(p);
    CHECK(r.bisection_method == "tree_cut");
    CHECK(r.bisection_partitions == 18);
    CHECK(r.bisection_Bps == Approx(16 * kBw));
    const Topology t = build_topology(p);
    CHECK(max_flow_bisection(t, candidate_partitions(t)) == Approx(r.bisection_Bps));
    CHECK(r.switches == 12);
    CHECK(count(r.switches_by_tier, "leaf") == 8);
    CHECK(count(r.switches_by_tier, "spine") == 4);
    CHECK(r.diameter_hops == 4);
    CHECK(r.diameter_method == "bfs");
    CHECK(r.diameter_closed_form == 4);
  }
  SECTION("tiny tree, every balanced half") {
    const auto r = distinct_report(fat_tree(8, 2, 1, 4));  // radix 4: 4 leaves x 2 NICs, 2 spines
    CHECK(r.bisection_partitions == 35);           // C(8,4) / 2
    CHECK(r.bisection_Bps == Approx(4 * kBw));
  }
  SECTION("large full tree: the tree cut equals the closed form") {
    const TopologyParams p = fat_tree(2048, 8, 1, 64);
    const auto r = distinct_report(p);
    CHECK(r.bisection_method == "tree_cut");
    CHECK(r.bisection_Bps == Approx(1024 * kBw));
    CHECK(closed_form_bisection(build_topology(p), p).value() == Approx(1024 * kBw));
    CHECK(r.diameter_method == "bfs");  // 2,048 NICs x 4,096 cables: still exact
    CHECK(r.diameter_hops == 4);
  }
}

TEST_CASE("o:1 oversubscribed fat-tree: 1/o of N/2 NIC links", "[report]") {
  SECTION("small: tree cut = max-flow") {
    const TopologyParams p = fat_tree(36, 1, 1, 8, 3.0);  // 6 leaves of 6 down, 2 up
    const auto r = distinct_report(p);
    CHECK(r.bisection_method == "tree_cut");
    CHECK(r.bisection_Bps == Approx(18 * kBw / 3));
    const Topology t = build_topology(p);
    CHECK(max_flow_bisection(t, candidate_partitions(t)) == Approx(r.bisection_Bps));
  }
  SECTION("large: tree cut = closed form") {
    const TopologyParams p = fat_tree(3072, 8, 1, 64, 3.0);  // 64 leaves of 48 down, 16 up
    const auto r = distinct_report(p);
    CHECK(r.bisection_method == "tree_cut");
    CHECK(r.bisection_Bps == Approx(1536 * kBw / 3));
    CHECK(closed_form_bisection(build_topology(p), p).value() == Approx(1536 * kBw / 3));
  }
}

TEST_CASE("3-tier k-ary fat-tree: closed form agrees with max-flow and BFS", "[report]") {
  const TopologyParams p = fat_tree_tiers(3, 128, 1, 1, 8);  // k = 8: k^3/4 NICs
  const Topology t = build_topology(p);
  REQUIRE(t.fat_tree()->tiers == 3);
  const auto r = make_report(t, p, distinct_prices());
  CHECK(r.switches == 80);  // 5k^2/4
  CHECK(count(r.switches_by_tier, "core") == 16);
  CHECK(r.bisection_method == "tree_cut");
  CHECK(r.bisection_Bps == Approx(64 * kBw));
  CHECK(closed_form_bisection(t, p).value() == Approx(64 * kBw));
  auto halves = balanced_partitions(128);
  halves.resize(4);
  CHECK(max_flow_bisection(t, halves) == Approx(64 * kBw));
  CHECK(r.diameter_hops == 6);
  CHECK(bfs_diameter(t) == 6);
}

TEST_CASE("torus bisection: 2 x (N / longest dim) links, max-flow up to 65,536 cables", "[report]") {
  TopologyParams p = torus({4, 4, 4}, 1, 1);
  p.node.nic_bandwidth_Bps = 4 * kBw;  // the fabric links bind, not the NICs
  const Topology t = build_topology(p);
  const auto r = make_report(t, p, distinct_prices());
  CHECK(r.bisection_method == "max_flow");
  CHECK(r.bisection_Bps == Approx(32 * kBw));
  CHECK(closed_form_bisection(t, p).value() == Approx(32 * kBw));

  // 12,288 switch cables: max-flow, equal to the closed form (its cut across a dimension is
  // a candidate).
  TopologyParams big = torus({16, 16, 16}, 1, 1);
  big.node.nic_bandwidth_Bps = 4 * kBw;
  const auto rb = distinct_report(big);
  CHECK(rb.bisection_method == "max_flow");
  CHECK(rb.bisection_Bps == Approx(512 * kBw));
  CHECK(rb.diameter_hops == 2 + 24);
  // 98,304 switch cables: the closed form, the same rule.
  TopologyParams huge = torus({32, 32, 32}, 1, 1);
  huge.node.nic_bandwidth_Bps = 4 * kBw;
  const auto rh = distinct_report(huge);
  CHECK(rh.bisection_method == "closed_form");
  CHECK(rh.bisection_Bps == Approx(2 * 1024 * kBw));
  // Bundles per dimension: the cheapest cut is across the dimension with the fewest cables.
  TopologyParams bundled = torus({4, 4, 4}, 1, 1);
  bundled.node.nic_bandwidth_Bps = 8 * kBw;
  bundled.dim_parallel_links = {2, 3, 4};
  const auto rbun = distinct_report(bundled);
  CHECK(rbun.bisection_Bps == Approx(32 * 2 * kBw));
  CHECK(closed_form_bisection(build_topology(bundled), bundled).value() == Approx(64 * kBw));

  const TopologyParams odd = torus({4, 4, 3});
  const Topology to = build_topology(odd);
  CHECK(closed_form_diameter(to).value() == 2 + 2 + 2 + 1);
  CHECK(bfs_diameter(to) == 7);
}

TEST_CASE("dragonfly counts", "[report]") {
  // a = 4, p = 2, h = 2, g = a*h + 1 = 9: one global cable per group pair.
  const TopologyParams p = dragonfly(4, 2, 2, 9, 72, 2, 1, GlobalArrangement::relative);
  const Topology t = build_topology(p);
  const auto r = make_report(t, p, distinct_prices());
  CHECK(r.nodes == 72);
  CHECK(r.gpus == 144);
  CHECK(r.switches == 36);
  CHECK(count(r.switches_by_tier, "router") == 36);
  CHECK(count(r.links_by_kind, "local") == 9 * 6);
  CHECK(count(r.links_by_kind, "global") == 36);
  CHECK(count(r.links_by_kind, "nic_switch") == 72);
  // Racks of 4 nodes: routers 2i and 2i+1 of a group share a rack with their 4 nodes, so the
  // NIC cables and 2 of a group's 6 local cables are copper; the other local cables and the
  // 36 global ones are optical.
  CHECK(r.copper_cables == 72 + 9 * 2);
  CHECK(r.optical_cables == 9 * 4 + 36);
  CHECK(r.transceivers == 2 * r.optical_cables);
  CHECK(r.global_arrangement == "relative");
  // 9 groups: a balanced cut splits group 4 (36 of 72 nodes on each side). Its routers 2
  // and 3 lead to groups 0-3 (relative arrangement), so with groups 0-3 they leave 4 x 4
  // group-pair cables and 4 local ones: 20 cables, as the 4 | 5 groups closed form.
  CHECK(r.bisection_method == "max_flow");
  CHECK(r.bisection_Bps == Approx(20 * kBw));
  CHECK(closed_form_bisection(t, p).value() == Approx(20 * kBw));
  std::vector<bool> groups_0_to_3(72);
  for (int n = 0; n < 32; ++n) groups_0_to_3[static_cast<std::size_t>(n)] = true;
  CHECK(max_flow_bisection(t, {groups_0_to_3}) == Approx(4 * 5 * kBw));
  std::vector<bool> index_halves(72);
  for (int n = 0; n < 36; ++n) index_halves[static_cast<std::size_t>(n)] = true;
  CHECK(max_flow_bisection(t, {index_halves}) == Approx(24 * kBw));  // routers 0-1 of group 4
  CHECK(r.diameter_method == "bfs");
  CHECK(r.diameter_hops <= r.diameter_closed_form.value());
  CHECK(r.diameter_closed_form == 5);
}

TEST_CASE("cost and power: items x prices on a hand-counted custom fabric", "[report]") {
  TopologyParams p;
  p.kind = TopologyKind::custom;
  p.nodes = 3;
  p.nodes_per_rack = 2;  // n0, n1 and s0 in rack 0; n2 and s1 in rack 1
  p.node.gpus = 1;
  p.node.nics = 1;
  p.switches = {"s0", "s1"};
  p.links = {{"n0", "s0", kBw, 1e-6}, {"n1", "s0", kBw, 1e-6}, {"n2", "s1", kBw, 1e-6},
             {"s0", "s1", 2 * kBw, 1e-6}};  // 800 Gb/s between the switches
  const auto r = distinct_report(p);
  CHECK(r.copper_cables == 3);
  CHECK(r.optical_cables == 1);
  CHECK(r.transceivers == 2);
  CHECK(r.switch_ports == 5);  // s0: 3 cables, s1: 2
  // 3 nodes, 3 NICs, 5 ports at the 800G class (each switch has an 800G cable), 2 x 800G
  // transceivers priced at the largest class (400G), 3 copper and 1 optical cable.
  const double usd = 3 * 100000 + 3 * 300 + 5 * 5000 + 2 * 70 + 3 * 9 + 11;
  const double watts = 3 * 1000 + 3 * 3 + 5 * 50 + 2 * 0.7;
  CHECK(r.cost_usd == Approx(usd));
  CHECK(r.power_w == Approx(watts));
  double sum = 0;
  for (const CostLine& c : r.bill) sum += c.usd;
  CHECK(sum == Approx(usd));
  CHECK(r.diameter_hops == 3);
  CHECK(r.bisection_method == "max_flow");
  CHECK(r.bisection_Bps == Approx(kBw));  // {n2} + one of n0/n1 against the other
}

TEST_CASE("a single node has no fabric bisection", "[report]") {
  TopologyParams p;
  p.kind = TopologyKind::single_node;
  p.nodes = 1;
  const auto r = distinct_report(p);
  CHECK(r.bisection_method == "none");
  CHECK(r.bisection_Bps == 0);
  CHECK(r.nodes == 1);
  CHECK(r.gpus == 8);
}
