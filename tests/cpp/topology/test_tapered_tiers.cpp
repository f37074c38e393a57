// Tapered fat-trees sized from the asked ratio: 2:1 leaves (radix 64, 8 x 400G NICs per node)
// at 1K, 4K and 16K GPUs, 2 and 3 tiers, rail-optimized and not, against counts worked out by
// hand from the configurator's rules (topology/fat_tree_shape.hpp), and each tier's achieved
// ratio in the report.
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "report_helpers.hpp"
#include "topology/report.hpp"

using namespace cs::topo;
using cs::topo::test::fat_tree_tiers;
using cs::topo::test::unit_prices;

namespace {

struct TaperedCase {
  const char* what;
  int nodes, tiers;
  bool rail;
  int leaf, spine, core;     // switches per tier (core 0: 2 tiers built)
  int leaf_down, leaf_up;    // ports on the fullest leaf
  int spine_up;              // up-ports per spine (3 tiers)
  double leaf_ratio, spine_ratio;  // the report's per-tier ratios (bandwidth down / up)
};

int tier_switches(const FatTreeLayout& f, std::size_t i) { return i < f.tier.size() ? f.tier[i].switches : 0; }

}  // namespace

TEST_CASE("tapered tiers: 2:1 leaves at 1K/4K/16K GPUs, counts by hand, achieved ratio per tier") {
  // A 2:1 leaf of radix 64 takes at most floor(64 x 2 / 3) = 42 NICs.
  //  1K rail: a rail's 128 NICs over ceil(128 / 42) = 4 leaves of 32, 16 up each; 32 leaves
  //    fit under one top switch (<= 64 groups): 2 tiers even when 3 are asked. 512 up-cables in
  //    bundles of 2 (32 leaves x 2 = 64 ports a spine): 8 spines.
  //  1K not rail: whole nodes, 5 per leaf (40 NICs): 26 leaves (24 of 5 nodes, 2 of 4), 20 up;
  //    bundles of 2 (26 x 2 = 52 ports): 10 spines.
  //  4K rail: ceil(512 / 42) = 13 leaves per rail of 39-40 NICs, 20 up: 104 leaves. Spines
  //    (1:1, at most 32 down) need at least 104 x 20 / 32 = 65: 13 pods of 8 leaves, each leaf
  //    a bundle of 4 cables to each of 5 spines (8 x 4 = 32 ports a spine), give 65 spines of
  //    32 up-ports, in 8 bundles of 4 to cores (13 pods x 4 = 52 ports a core): 40 cores, 209
  //    switches. (The fewest pods, 4 of 26 leaves, take single cables: 80 spines, 224.) Spine
  //    ratio 2,080 / 2,080 = 1.
  //  4K not rail: ceil(512 / 5) = 103 leaves (100 of 5 nodes, 3 of 4), 40 down, 20 up; 13
  //    pods of 7-8 leaves as above: 65 spines, 40 cores. Spine ratio 2,060 / 2,080.
  //  16K rail: ceil(2,048 / 42) = 49 leaves per rail of 41-42 NICs, 21 up: 392 leaves. The
  //    fewest pods, 13 of 30-31 leaves, give 273 spines of 31 up-ports, rounded to bundles of
  //    4 (13 pods x 4 = 52 ports a core) to 32: 168 cores, the spine tier at 8,232 / 8,736 =
  //    0.942. 14 pods of exactly 28 leaves give 294 spines of 28 up in bundles of 4 (56 ports a
  //    core) to 7 cores each: 147 cores, as many switches (833) and 504 fewer cables; the
  //    spine tier at exactly 1:1.
  //  16K not rail: ceil(2,048 / 5) = 410 leaves (408 of 5 nodes, 2 of 4), 20 up; 13 pods of
  //    31-32 leaves: 260 spines of 32 up, 8 bundles of 4: 160 cores (830 switches; 15 pods
  //    would give 140 cores but 300 spines: 850). Spine ratio 8,200 / 8,320.
  const TaperedCase cases[] = {
      {"1K rail, 2 tiers", 128, 2, true, 32, 8, 0, 32, 16, 0, 2.0, 0},
      {"1K rail, 3 asked", 128, 3, true, 32, 8, 0, 32, 16, 0, 2.0, 0},
      {"1K not rail, 2 tiers", 128, 2, false, 26, 10, 0, 40, 20, 0, 1024.0 / 520, 0},
      {"4K rail, 3 tiers", 512, 3, true, 104, 65, 40, 40, 20, 32, 4096.0 / 2080, 1.0},
      {"4K not rail, 3 tiers", 512, 3, false, 103, 65, 40, 40, 20, 32, 4096.0 / 2060, 2060.0 / 2080},
      {"16K rail, 3 tiers", 2048, 3, true, 392, 294, 147, 42, 21, 28, 16384.0 / 8232, 1.0},
      {"16K not rail, 3 tiers", 2048, 3, false, 410, 260, 160, 40, 20, 32, 16384.0 / 8200, 8200.0 / 8320},
  };
  for (const TaperedCase& c : cases) {
    INFO(c.what);
    const TopologyParams p = fat_tree_tiers(c.tiers, c.nodes, 8, 8, 64, 2.0, c.rail);
    const Topology t = build_topology(p);
    const FatTreeLayout& f = *t.fat_tree();
    CHECK(tier_switches(f, 0) == c.leaf);
    CHECK(tier_switches(f, 1) == c.spine);
    CHECK(tier_switches(f, 2) == c.core);
    CHECK(f.tier[0].down == c.leaf_down);
    CHECK(f.tier[0].up == c.leaf_up);
    if (c.core > 0) CHECK(f.tier[1].up == c.spine_up);
    const auto r = make_report(t, p, unit_prices());
    REQUIRE(r.oversubscription_by_tier.size() == (c.core > 0 ? 2u : 1u));
    CHECK(r.oversubscription_by_tier[0].ratio == Approx(c.leaf_ratio));
    if (c.core > 0) CHECK(r.oversubscription_by_tier[1].ratio == Approx(c.spine_ratio));
  }
}
