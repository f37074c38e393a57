// Bisection: the fat-tree's tree cut equals max-flow split by split; one method at every size,
// so growing a fabric past 64 nodes does not change its answer's basis; the closed forms
// agree with max-flow on the families' structural cuts.
#include <catch2/catch.hpp>

#include <vector>

#include "direct_helpers.hpp"
#include "helpers.hpp"
#include "report_helpers.hpp"
#include "topology/report.hpp"

using namespace cs::topo;
using cs::topo::test::dragonfly;
using cs::topo::test::fat_tree_tiers;
using cs::topo::test::kBw;
using cs::topo::test::unit_prices;
using cs::topo::test::torus;

namespace {


}  // namespace

TEST_CASE("fat-tree tree cut = max-flow min cut, split by split") {
  std::vector<TopologyParams> designs = {
      fat_tree_tiers(2, 12, 1, 1, 8),                        // 3 leaves, bundles of 2
      fat_tree_tiers(2, 11, 2, 2, 8, 3.0),                   // 2:1 ports rounded, partial leaf
      fat_tree_tiers(2, 10, 4, 4, 12, 1.0, true),            // rails, leaves of 5 + 5 nodes
      fat_tree_tiers(2, 9, 2, 4, 8, 2.0, true),              // rails 2:1
      fat_tree_tiers(3, 12, 1, 1, 4),                        // 3 tiers, partial pods
      fat_tree_tiers(3, 8, 2, 2, 4, 1.0, true),              // 3 tiers, rails
      fat_tree_tiers(3, 12, 1, 1, 6, 2.0, false, {2.0}),     // 3 tiers, 2:1 twice
      fat_tree_tiers(3, 40, 1, 1, 8),                        // 3 pods, cores by bundles of 2
      fat_tree_tiers(3, 24, 2, 4, 8, 3.0, true, {1.5}),      // rails, ratios per tier
  };
  TopologyParams slow_nics = fat_tree_tiers(2, 12, 1, 2, 8);
  slow_nics.node.nic_bandwidth_Bps = 25e9;  // 200G NICs under 400G up-links
  designs.push_back(slow_nics);
  TopologyParams bundled = fat_tree_tiers(3, 40, 1, 1, 8);
  bundled.parallel_links = {2, 0};
  designs.push_back(bundled);
  for (const TopologyParams& p : designs) {
    INFO("tiers " << p.tiers << " nodes " << p.nodes << " nics " << p.node.nics << " rail "
                  << p.rail_optimized << " o " << p.oversubscription);
    const Topology t = build_topology(p);
    const std::vector<Partition> halves = candidate_partitions(t);
    REQUIRE(!halves.empty());
    for (const Partition& h : halves)
      REQUIRE(tree_cut_bisection(t, {h}) == Approx(max_flow_bisection(t, {h})).epsilon(1e-12));
    const auto r = make_report(t, p, unit_prices());
    CHECK(r.bisection_method == "tree_cut");
    CHECK(r.bisection_Bps == Approx(max_flow_bisection(t, halves)).epsilon(1e-12));
  }
}

TEST_CASE("fat-tree bisection: one method from 56 to 72 nodes, no jump at 64 / 65") {
  // The jump: 800 GB/s by max-flow at 64 nodes, 600 by closed form at 65 on the same
  // design. Rail-optimized 2:1, radix 16, 2 NICs per node: leaves of up to 10 nodes.
  double previous = 0;
  for (int nodes = 56; nodes <= 72; ++nodes) {
    INFO(nodes << " nodes");
    const TopologyParams p = fat_tree_tiers(2, nodes, 2, 2, 16, 2.0, true);
    const Topology t = build_topology(p);
    const auto r = make_report(t, p, unit_prices());
    CHECK(r.bisection_method == "tree_cut");
    // The same candidates, max-flow: the same answer at every size.
    CHECK(r.bisection_Bps == Approx(max_flow_bisection(t, candidate_partitions(t))));
    CHECK(r.bisection_Bps <= nodes * 2 * kBw / 2 + 1);  // at most half the NICs
    // 64 -> 65 nodes keeps 7 leaves per rail and 5 up-ports each: the answer moves by at
    // most the new node's 2 NICs. (60 -> 61 adds a leaf per rail, and 5 up-ports with it.)
    if (nodes == 65) CHECK(std::abs(r.bisection_Bps - previous) <= 2 * kBw + 1);
    previous = r.bisection_Bps;
  }
}

TEST_CASE("fat-tree bisection: the tree cut equals the closed form on balanced designs") {
  // Whole leaves and pods on each side of the index halves, so half of each tier's up-links
  // (and of the NICs) is the min cut: 1,024 and 4,096 GPUs with rails, radix 64, 1:1 and
  // 2:1; 840 nodes of 8 NICs in 4 pods of 42 leaves, 2:1 at leaves and aggregation.
  for (const auto& p : {fat_tree_tiers(2, 128, 8, 8, 64, 1.0, true),
                        fat_tree_tiers(2, 128, 8, 8, 64, 2.0, true),
                        fat_tree_tiers(3, 512, 8, 8, 64, 1.0, true),
                        fat_tree_tiers(3, 840, 8, 8, 64, 2.0, false, {2.0})}) {
    INFO(p.nodes << " nodes, o " << p.oversubscription);
    const Topology t = build_topology(p);
    const auto r = make_report(t, p, unit_prices());
    CHECK(r.bisection_Bps == Approx(closed_form_bisection(t, p).value()));
  }
  // Rail-optimized with an oversubscribed aggregation tier: pods hold (nearly) whole rails,
  // so every node has NICs in every pod and no node split separates pods; a rail's traffic
  // between the halves crosses its leaves' up-links, not the pods'. The closed form's pod cut
  // (540 cables) is only a bound; the index halves cut 8 rails x (6 leaves x 20 up-links +
  // 17 pairs inside the leaf split in two) = 1,096, the fewest of the candidates.
  const TopologyParams rails = fat_tree_tiers(3, 512, 8, 8, 64, 2.0, true, {2.0});
  const Topology t = build_topology(rails);
  CHECK(closed_form_bisection(t, rails).value() == Approx(540 * kBw));
  CHECK(make_report(t, rails, unit_prices()).bisection_Bps == Approx(1040 * kBw + 56 * kBw));
}

TEST_CASE("direct networks: max-flow on the structural cuts equals the closed form") {
  // Even numbers of groups: group halves.
  const TopologyParams df = dragonfly(8, 2, 4, 8, 128, 1, 1);
  const Topology d = build_topology(df);
  const auto rd = make_report(d, df, unit_prices());
  CHECK(rd.bisection_method == "max_flow");
  CHECK(rd.bisection_Bps == Approx(closed_form_bisection(d, df).value()));
  CHECK(rd.bisection_Bps == Approx(4 * 4 * 4 * kBw));  // 16 group pairs x m = 32 / 7 = 4
  // Torus with the longest dimension not the last: the cut across it is a candidate.
  TopologyParams tp = torus({8, 4, 4}, 1, 1);
  tp.node.nic_bandwidth_Bps = 8 * kBw;
  const Topology tt = build_topology(tp);
  const auto rt = make_report(tt, tp, unit_prices());
  CHECK(rt.bisection_method == "max_flow");
  CHECK(rt.bisection_Bps == Approx(closed_form_bisection(tt, tp).value()));
  CHECK(rt.bisection_Bps == Approx(2 * 16 * kBw));
}
