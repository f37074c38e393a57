// The fat-tree configurator: the smallest fabric for the asked-for ratios, checked against
// NVIDIA's published DGX SuperPOD compute fabrics; balanced leaves under oversubscription;
// per-tier ratios and bundles; tiers asked for but not needed.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "helpers.hpp"
#include "report_helpers.hpp"
#include "topology/report.hpp"

using namespace cs::topo;
using cs::topo::test::fat_tree_tiers;
using cs::topo::test::unit_prices;

namespace {

struct Counts3 {
  int leaf, spine, core;
};

Counts3 switch_counts(const Topology& t) {
  const FatTreeLayout& f = *t.fat_tree();
  return {f.tier[0].switches, f.tiers > 1 ? f.tier[1].switches : 0,
          f.tiers > 2 ? f.tier[2].switches : 0};
}

// Rail-optimized DGX-like nodes: 8 NICs at the fabric's speed.
TopologyParams superpod(int nodes, int radix, int tiers) {
  return fat_tree_tiers(tiers, nodes, 8, 8, radix, 1.0, true);
}

}  // namespace

TEST_CASE("DGX SuperPOD B200 (radix 64, 8 x 400G): NVIDIA's switch and cable counts") {
  // docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-b200/latest/
  // dgx-superpod-architecture.html, "Larger DGX SuperPOD component counts".
  struct Row {
    int nodes, tiers, leaf, spine, core;
  };
  const Row rows[] = {{64, 2, 16, 8, 0},      {128, 2, 32, 16, 0},     {256, 2, 64, 32, 0},
                      {512, 3, 128, 128, 64}, {1024, 3, 256, 256, 128}, {2048, 3, 512, 512, 256}};
  for (const Row& row : rows) {
    INFO(row.nodes << " nodes");
    const Topology t = build_topology(superpod(row.nodes, 64, row.tiers));
    const Counts3 c = switch_counts(t);
    CHECK(c.leaf == row.leaf);
    CHECK(c.spine == row.spine);
    CHECK(c.core == row.core);
    // Cables: one per NIC at each level (node-leaf, leaf-spine, spine-core).
    const FatTreeLayout& f = *t.fat_tree();
    for (std::size_t i = 0; i + 1 < f.tier.size(); ++i)
      CHECK(f.tier[i].up_link.size() == static_cast<std::size_t>(row.nodes * 8));
    // Every spine and core port is used.
    const auto r = make_report(t, superpod(row.nodes, 64, row.tiers), unit_prices());
    CHECK(r.switch_ports_used == r.switch_ports);
  }
}

TEST_CASE("DGX SuperPOD B300 XDR (radix 144, 8 NICs, 72 nodes per SU): NVIDIA's counts") {
  // docs.nvidia.com/dgx-superpod/reference-architecture/scalable-infrastructure-b300-xdr/
  // latest/dgx-superpod-architecture.html, Table 3. At 4 SUs 32 leaves of 72 up-ports reach
  // 18 spines by bundles of 4 (128 of 144 ports), as NVIDIA's 18.
  struct Row {
    int nodes, leaf, spine;
  };
  for (const Row& row : {Row{72, 8, 4}, Row{144, 16, 8}, Row{288, 32, 18}, Row{576, 64, 36},
                         Row{1296, 144, 72}}) {
    INFO(row.nodes << " nodes");
    const Topology t = build_topology(superpod(row.nodes, 144, 2));
    const Counts3 c = switch_counts(t);
    CHECK(c.leaf == row.leaf);
    CHECK(c.spine == row.spine);
    CHECK(t.fat_tree()->leaf_up.size() == static_cast<std::size_t>(row.nodes * 8));
  }
}

TEST_CASE("oversubscription: NICs spread evenly over leaves, each leaf at the asked ratio") {
  // 1,024 GPUs, 2:1, radix 64: a leaf may take 42 NICs, so 4 leaves per rail; the 128 NICs
  // of a rail go 32 / 32 / 32 / 32 (not 42 / 42 / 42 / 2) with 16 up-ports each, and 32
  // leaves x 16 up-ports fill 8 spines by bundles of 2.
  const TopologyParams p = fat_tree_tiers(2, 128, 8, 8, 64, 2.0, true);
  const Topology t = build_topology(p);
  const FatTreeLayout& f = *t.fat_tree();
  CHECK(f.leaves == 32);
  CHECK(f.spines == 8);
  CHECK(f.down_ports == 32);
  CHECK(f.up_ports == 16);
  std::vector<int> per_leaf(static_cast<std::size_t>(f.leaves), 0);
  for (int leaf : f.nic_leaf) ++per_leaf[static_cast<std::size_t>(leaf)];
  for (int n : per_leaf) CHECK(n == 32);
  const auto r = make_report(t, p, unit_prices());
  REQUIRE(r.oversubscription_by_tier.size() == 1);
  CHECK(r.oversubscription_by_tier[0].ratio == Approx(2.0));
  CHECK(r.oversubscription_by_tier[0].worst_switch_ratio == Approx(2.0));
  // By its own bisection the fabric is 2:1: half of the non-blocking 1,024 x 50 GB/s / 2.
  CHECK(r.bisection_Bps == Approx(128 * 8 * 50e9 / 2 / 2));
  CHECK(r.notes.empty());

  // 130 nodes do not divide: leaves of 33, 33, 32, 32 per rail, 17 up-ports needed, 18 in
  // bundles of 2; the report says the leaves are 33:18, not 2:1.
  const TopologyParams q = fat_tree_tiers(2, 130, 8, 8, 64, 2.0, true);
  const Topology u = build_topology(q);
  std::vector<int> counts(static_cast<std::size_t>(u.fat_tree()->leaves), 0);
  for (int leaf : u.fat_tree()->nic_leaf) ++counts[static_cast<std::size_t>(leaf)];
  CHECK(counts[0] == 33);
  CHECK(counts[1] == 33);
  CHECK(counts[2] == 32);
  CHECK(counts[3] == 32);
  CHECK(u.fat_tree()->up_ports == 18);
  const auto ru = make_report(u, q, unit_prices());
  CHECK(ru.oversubscription_by_tier[0].worst_switch_ratio == Approx(33.0 / 18));
  REQUIRE(ru.notes.size() == 1);
  CHECK_THAT(ru.notes[0], Catch::Contains("33 down / 18 up"));

  // Not rail-optimized: whole nodes per leaf (5 nodes = 40 NICs, 42 fit), 26 leaves.
  const Topology flat = build_topology(fat_tree_tiers(2, 128, 8, 8, 64, 2.0));
  CHECK(flat.fat_tree()->leaves == 26);
  CHECK(flat.fat_tree()->down_ports == 40);
  for (int n = 0; n < 128; ++n)
    for (int j = 1; j < 8; ++j)
      CHECK(flat.fat_tree()->nic_leaf[static_cast<std::size_t>(n * 8 + j)] ==
            flat.fat_tree()->nic_leaf[static_cast<std::size_t>(n * 8)]);
}

TEST_CASE("oversubscription and bundles differ per tier") {
  // 4,096 GPUs, radix 64, leaves 2:1 and aggregation 4:1, bundles auto then 4.
  TopologyParams p = fat_tree_tiers(3, 512, 8, 8, 64, 2.0, true, {4.0});
  p.parallel_links = {0, 4};
  const Topology t = build_topology(p);
  const FatTreeLayout& f = *t.fat_tree();
  REQUIRE(f.tiers == 3);
  // Leaves: 512 / 42 -> 13 per rail (40 / 39 NICs), 20 up-ports.
  CHECK(f.tier[0].switches == 104);
  CHECK(f.tier[0].down == 40);
  CHECK(f.tier[0].up == 20);
  // Aggregation 4:1: at most 51 down-ports, so pods of 51 leaves -> 3 pods (35, 35, 34),
  // 20 aggregation switches each with 35 down and 9 up (rounded to 12 by bundles of 4).
  CHECK(f.tier[1].fan == 35);
  CHECK(f.tier[1].switches == 60);
  CHECK(f.tier[1].parallel == 4);
  CHECK(f.tier[1].up == 12);
  CHECK(f.tier[2].switches == 20 * 3);
  const auto r = make_report(t, p, unit_prices());
  REQUIRE(r.oversubscription_by_tier.size() == 2);
  CHECK(r.oversubscription_by_tier[0].ratio == Approx(4096.0 / (104 * 20)));
  CHECK(r.oversubscription_by_tier[1].ratio == Approx((104.0 * 20) / (60 * 12)));
  CHECK(r.oversubscription_by_tier[1].parallel_links == 4);
}

TEST_CASE("tiers: 3 on a fabric that fits in 2 builds 2 and the report says so") {
  const TopologyParams p = fat_tree_tiers(3, 128, 8, 8, 64, 1.0, true);
  const Topology t = build_topology(p);
  CHECK(t.fat_tree()->tiers == 2);
  CHECK(t.fat_tree()->tiers_requested == 3);
  const auto r = make_report(t, p, unit_prices());
  CHECK(r.tiers == 2);
  CHECK(r.tiers_requested == 3);
  REQUIRE(r.notes.size() == 1);
  CHECK_THAT(r.notes[0], Catch::Contains("tiers: 3 asked, 2 built") &&
                             Catch::Contains("32 leaves fit under one top switch's 64 ports"));
  // Asked for 2 and built 2: nothing to say.
  CHECK(make_report(build_topology(fat_tree_tiers(2, 128, 8, 8, 64, 1.0, true)),
                    fat_tree_tiers(2, 128, 8, 8, 64, 1.0, true), unit_prices())
            .notes.empty());
}
