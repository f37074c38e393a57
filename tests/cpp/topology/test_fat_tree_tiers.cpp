// Fat-trees of 3 tiers: closed-form sizes of full (k-ary) and partial trees, per-tier
// oversubscription, rail-optimized leaves, the wiring rule, and the parameter errors.
#include <catch2/catch.hpp>

#include <string>

#include "helpers.hpp"

using namespace cs::topo;
using cs::topo::test::failing_param;
using cs::topo::test::fat_tree_tiers;

namespace {

// Every switch's cables go to the tier just below or just above it, and each cable up from
// tier t reaches the switch the FatTreeTier rule names.
void check_wiring(const Topology& t) {
  const FatTreeLayout& f = *t.fat_tree();
  REQUIRE(static_cast<int>(f.tier.size()) == f.tiers);
  for (std::size_t i = 0; i + 1 < f.tier.size(); ++i) {
    const FatTreeTier& tier = f.tier[i];
    const FatTreeTier& above = f.tier[i + 1];
    REQUIRE(tier.up_link.size() == static_cast<std::size_t>(tier.switches) * tier.up);
    REQUIRE(tier.up % tier.parallel == 0);
    const int reach = tier.up / tier.parallel;
    REQUIRE(above.per_group == tier.per_group * reach);
    REQUIRE(above.down == above.fan * tier.parallel);
    for (int sw = 0; sw < tier.switches; ++sw)
      for (int p = 0; p < tier.up; ++p) {
        const Link& l = t.link(tier.up_link[static_cast<std::size_t>(sw * tier.up + p)]);
        CHECK(l.from == tier.vertex[static_cast<std::size_t>(sw)]);
        const int group = sw / tier.per_group, local = sw % tier.per_group;
        const int expected = group / above.fan * above.per_group + local * reach + p % reach;
        CHECK(l.to == above.vertex[static_cast<std::size_t>(expected)]);
        CHECK(t.vertex(l.to).tier == static_cast<int>(i) + 2);
      }
  }
}

}  // namespace

TEST_CASE("3-tier full fat-tree = the k-ary fat-tree: k^3/4 hosts, 5k^2/4 switches") {
  for (int k : {4, 8, 16}) {
    INFO("k = " << k);
    const int hosts = k * k * k / 4;
    const Topology t = build_topology(fat_tree_tiers(3, hosts, 1, 1, k));
    const FatTreeLayout& f = *t.fat_tree();
    REQUIRE(f.tiers == 3);
    CHECK(f.tier[0].switches == k * k / 2);  // leaves
    CHECK(f.tier[1].switches == k * k / 2);  // aggregation: k pods of k/2
    CHECK(f.tier[2].switches == k * k / 4);  // core
    CHECK(t.num_fabric_switches() == static_cast<std::size_t>(5 * k * k / 4));
    CHECK(f.tier[1].per_group == k / 2);
    CHECK(f.tier[2].per_group == k * k / 4);
    CHECK(f.tier[1].leaves_per_group == k / 2);
    // Vertices: GPU, NIC and NVSwitch per host plus the switches; cables: GPU-NVSwitch,
    // GPU-NIC, NIC-leaf per host, then k/2 up-cables per leaf and per aggregation switch.
    CHECK(t.num_vertices() == static_cast<std::size_t>(3 * hosts + 5 * k * k / 4));
    CHECK(t.num_cables() == static_cast<std::size_t>(3 * hosts + 2 * (k * k / 2) * (k / 2)));
    // Every switch uses all k ports.
    for (const FatTreeTier& tier : f.tier)
      for (VertexId v : tier.vertex) CHECK(t.out_links(v).size() == static_cast<std::size_t>(k));
    // The 2-tier view names tier 2 "spine" and keeps leaf_up = tier 1's up-links.
    CHECK(f.spines == k * k / 2);
    CHECK(f.leaf_up == f.tier[0].up_link);
    CHECK(t.vertex(f.tier[2].vertex.back()).name == "core" + std::to_string(k * k / 4 - 1));
    check_wiring(t);
  }
}

TEST_CASE("3-tier partial fat-tree: as many pods, leaves and cores as needed") {
  // k = 8: 4 down / 4 up per leaf and aggregation switch. 40 NICs -> 10 leaves, more than
  // one spine tier's 8 ports reach. The fewest pods, 3 (4 + 4 + 2 leaves) of 4 aggregation
  // switches, take 8 cores: 30 switches. 5 pods of 2 leaves, each leaf a bundle of 2 cables
  // to each of its pod's 2 aggregation switches, need 10 of those, each with 4 single cables
  // to the 4 cores of its plane: 8 cores with 5 of 8 ports used, 28 switches; the
  // configurator takes that (not the full tree's 16 cores with 3 of 8 ports used either).
  const Topology t = build_topology(fat_tree_tiers(3, 40, 1, 1, 8));
  const FatTreeLayout& f = *t.fat_tree();
  CHECK(f.tier[0].switches == 10);
  CHECK(f.tier[1].switches == 10);
  CHECK(f.tier[2].switches == 8);
  CHECK(f.tier[0].parallel == 2);
  CHECK(f.tier[1].parallel == 1);
  CHECK(t.num_vertices() == 40 * 3 + 28);
  CHECK(t.num_cables() == 40 * 3 + 10 * 4 + 10 * 4);
  for (VertexId core : f.tier[2].vertex) CHECK(t.out_links(core).size() == 5);  // 5 pods
  // An aggregation switch: 2 leaves by 2 cables each, 4 up.
  CHECK(t.out_links(f.tier[1].vertex[8]).size() == 2 * 2 + 4);
  check_wiring(t);
}

TEST_CASE("3 tiers asked, one spine tier enough: the core tier is left out") {
  // 16 NICs fill 4 leaves, which one tier of spines reaches (2 spines, bundles of 2):
  // exactly the 2-tier tree; tiers_requested keeps the 3 for the report's note.
  const Topology three = build_topology(fat_tree_tiers(3, 2, 8, 8, 8));
  const Topology two = build_topology(fat_tree_tiers(2, 2, 8, 8, 8));
  CHECK(three.fat_tree()->tiers == 2);
  CHECK(three.fat_tree()->tiers_requested == 3);
  CHECK(three.num_vertices() == two.num_vertices());
  CHECK(three.num_cables() == two.num_cables());
  CHECK(three.fat_tree()->spines == 2);
  CHECK(three.fat_tree()->tier[1].up == 0);
  // One leaf: no tier above it.
  const Topology one = build_topology(fat_tree_tiers(3, 1, 4, 4, 8));
  CHECK(one.fat_tree()->tiers == 1);
  CHECK(one.fat_tree()->spines == 0);
  CHECK(one.fat_tree()->leaf_up.empty());
}

TEST_CASE("per-tier oversubscription splits each tier's radix") {
  // k = 8, leaf 3:1 -> 6 down / 2 up; aggregation 1:1 -> 4 / 4. A pod holds 4 leaves under
  // 2 aggregation switches; 8 pods; 2 * 4 = 8 cores. At most 8 * 4 * 6 = 192 NICs.
  const Topology leaf3 = build_topology(fat_tree_tiers(3, 192, 1, 1, 8, 3.0));
  const FatTreeLayout& a = *leaf3.fat_tree();
  CHECK(a.tier[0].switches == 32);
  CHECK(a.tier[0].down == 6);
  CHECK(a.tier[0].up == 2);
  CHECK(a.tier[1].switches == 16);
  CHECK(a.tier[2].switches == 8);
  CHECK(failing_param(fat_tree_tiers(3, 193, 1, 1, 8, 3.0)) == "switch_radix");
  // Leaf 1:1, aggregation 3:1 -> 6 / 2: a pod holds 6 leaves under 4 aggregation switches,
  // 4 * 2 = 8 cores, 8 pods: again 192 NICs.
  const Topology agg3 = build_topology(fat_tree_tiers(3, 192, 1, 1, 8, 1.0, false, {3.0}));
  const FatTreeLayout& b = *agg3.fat_tree();
  CHECK(b.tier[0].switches == 48);
  CHECK(b.tier[1].switches == 32);
  CHECK(b.tier[1].down == 6);
  CHECK(b.tier[1].up == 2);
  CHECK(b.tier[2].switches == 8);
  for (VertexId v : b.tier[1].vertex) CHECK(agg3.out_links(v).size() == 8);
  check_wiring(agg3);
  // An explicit 1 for the upper tier is the default.
  CHECK(build_topology(fat_tree_tiers(3, 100, 1, 1, 8, 1.0, false, {1.0})).num_cables() ==
        build_topology(fat_tree_tiers(3, 100, 1, 1, 8)).num_cables());
}

TEST_CASE("3-tier rail-optimized: rail j's NICs on rail-j leaves, rails fill pods in order") {
  // 16 nodes of 8 NICs, k = 8: 4 leaves per rail, 32 leaves; pod j = the 4 leaves of rail j.
  const Topology t = build_topology(fat_tree_tiers(3, 16, 8, 8, 8, 1.0, true));
  const FatTreeLayout& f = *t.fat_tree();
  CHECK(f.tier[0].switches == 32);
  CHECK(f.tier[1].switches == 32);
  CHECK(f.tier[2].switches == 16);
  CHECK(t.num_vertices() == 16 * 17 + 80);
  CHECK(t.num_cables() == 16 * 16 + 128 + 32 * 4 + 32 * 4);
  for (int n = 0; n < 16; ++n)
    for (int j = 0; j < 8; ++j) {
      const int leaf = f.nic_leaf[static_cast<std::size_t>(n * 8 + j)];
      CHECK(leaf / 4 == j);
      CHECK(leaf / f.tier[1].leaves_per_group == j);  // pod
      CHECK(f.nic_port[static_cast<std::size_t>(n * 8 + j)] == n % 4);
    }
  check_wiring(t);
}

TEST_CASE("16,384 GPUs in a 3-tier rail-optimized fat-tree of radix 64") {
  // 2048 nodes x 8 NICs, k = 64: 32 down per leaf, 64 leaves per rail, 512 leaves; 16 pods
  // of 32 leaves and 32 aggregation switches (512); 16 pods x bundles of 4 fill a core's 64
  // ports: 512 * 32 / 64 = 256 cores (NVIDIA's 64-SU DGX SuperPOD: 512 / 512 / 256).
  const Topology t = build_topology(fat_tree_tiers(3, 2048, 8, 8, 64, 1.0, true));
  const FatTreeLayout& f = *t.fat_tree();
  CHECK(t.ranks() == 16384);
  CHECK(f.tier[0].switches == 512);
  CHECK(f.tier[1].switches == 512);
  CHECK(f.tier[2].switches == 256);
  CHECK(t.num_vertices() == 2048 * 17 + 1280);
  CHECK(t.num_cables() == 2048 * 16 + 16384 + 512 * 32 + 512 * 32);
  CHECK(t.out_links(f.tier[2].vertex[0]).size() == 64);
}

TEST_CASE("3-tier errors name switch_radix, tiers or the oversubscription entry") {
  std::string message;
  // k = 8 holds at most 128 NICs in 3 tiers.
  CHECK(failing_param(fat_tree_tiers(3, 128, 1, 1, 8)).empty());
  CHECK(failing_param(fat_tree_tiers(3, 129, 1, 1, 8), &message) == "switch_radix");
  CHECK_THAT(message, Catch::Contains("3-tier fat-tree of 129 NICs") &&
                          Catch::Contains("at most 128 NICs") && Catch::Contains("tiers"));
  // Rail-optimized, 8 NICs per node: 32 leaves of 4 -> at most 16 nodes.
  CHECK(failing_param(fat_tree_tiers(3, 17, 8, 8, 8, 1.0, true), &message) == "switch_radix");
  CHECK_THAT(message, Catch::Contains("at most 16 nodes of 8 NICs"));
  // Too many ratios for the tiers; a bad upper ratio names its list index.
  CHECK(failing_param(fat_tree_tiers(2, 4, 1, 1, 8, 1.0, false, {1.0})) == "oversubscription");
  CHECK(failing_param(fat_tree_tiers(3, 4, 1, 1, 8, 1.0, false, {1.0, 1.0})) ==
        "oversubscription");
  for (double bad : {0.0, -2.0, 0.01, 1e12})
    CHECK(failing_param(fat_tree_tiers(3, 4, 1, 1, 8, 1.0, false, {bad})) == "oversubscription.1");
  CHECK(failing_param(fat_tree_tiers(1, 4, 1, 1, 8)) == "tiers");
  CHECK(failing_param(fat_tree_tiers(7, 4, 1, 1, 8)) == "tiers");
}
