// Narrow-link warnings (topology/narrow_links.hpp): a dragonfly router's local links against
// its NICs, a torus bundle against a position's NICs, by hand; none on balanced fabrics.
#include <catch2/catch.hpp>

#include <string>

#include "direct_helpers.hpp"
#include "report_helpers.hpp"
#include "topology/narrow_links.hpp"
#include "topology/report.hpp"

using namespace cs::topo;
using namespace cs::topo::test;

TEST_CASE("narrow links: a rail dragonfly's routers inject more than their local links carry") {
  // a = 8 routers, p = 4 nodes of 8 NICs each (50 GB/s), rail-optimized: a group's 32 nodes
  // put NIC j on router j, 32 NICs a router: 1,600 GB/s against 7 local cables x 50 = 350.
  TopologyParams p = dragonfly(8, 4, 16, 4, 128, 8, 8);
  p.rail_optimized = true;
  const auto warnings = narrow_link_warnings(build_topology(p));
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("350.0 GB/s") != std::string::npos);
  CHECK(warnings[0].find("1600.0 GB/s") != std::string::npos);
  // The topology report (`topo`) carries the same warnings.
  CHECK(make_report(build_topology(p), p, unit_prices()).warnings == warnings);
  // 8 cables per local bundle: 7 x 8 x 50 = 2,800 GB/s, wider than 1,600.
  p.local_parallel_links = 8;
  CHECK(narrow_link_warnings(build_topology(p)).empty());
  // The balanced dragonfly (a = 2p = 2h, one NIC per node): 4 NICs against 7 local cables.
  CHECK(narrow_link_warnings(build_topology(dragonfly(8, 4, 4, 9, 288))).empty());
}

TEST_CASE("narrow links: a torus bundle narrower than a position's NICs") {
  // 4 x 4 torus, nodes of 8 NICs at 50 GB/s (400 GB/s a position) over single 50 GB/s cables.
  TopologyParams p = torus({4, 4}, 8, 8);
  const auto warnings = narrow_link_warnings(build_topology(p));
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("50.0 GB/s") != std::string::npos);
  CHECK(warnings[0].find("400.0 GB/s") != std::string::npos);
  // Bundles of 8 along each dimension: 400 GB/s, as wide as the NICs.
  p.dim_parallel_links = {8};
  CHECK(narrow_link_warnings(build_topology(p)).empty());
  // One NIC a position: 50 GB/s against 50.
  CHECK(narrow_link_warnings(build_topology(torus({4, 4}))).empty());
}

TEST_CASE("narrow links: fat-trees report none (their ratios are in the report)") {
  CHECK(narrow_link_warnings(build_topology(fat_tree_tiers(2, 16, 8, 8, 16, 3.0, true))).empty());
}
