// Fat-trees with parallel cables per switch-to-switch connection (parallel_links P): closed-form
// counts, wiring (up / P switches above, P cables each), route validity for every fat-tree
// routing, D-mod-K contention freedom on shift permutations, spreading over the parallel
// cables, and the parameter errors.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "helpers.hpp"

using namespace cs::topo;
using cs::topo::test::check_all_pairs;
using cs::topo::test::failing_param;
using cs::topo::test::fat_tree_tiers;
using cs::topo::test::max_link_load;

namespace {

// P cables per bundle at every tier boundary.
TopologyParams parallel(TopologyParams p, int links) {
  p.parallel_links.assign(static_cast<std::size_t>(p.tiers - 1), links);
  return p;
}

// Every switch of tier `level` (below the top): its up-links reach up / P distinct switches,
// P cables each.
void check_bundles(const Topology& t, int level, int P) {
  const FatTreeTier& tier = t.fat_tree()->tier[static_cast<std::size_t>(level - 1)];
  for (int sw = 0; sw < tier.switches; ++sw) {
    std::map<VertexId, int> per_upper;
    for (int p = 0; p < tier.up; ++p) {
      const Link& l = t.link(tier.up_link[static_cast<std::size_t>(sw * tier.up + p)]);
      REQUIRE(l.from == tier.vertex[static_cast<std::size_t>(sw)]);
      REQUIRE(t.vertex(l.to).tier == level + 1);
      ++per_upper[l.to];
    }
    REQUIRE(per_upper.size() == static_cast<std::size_t>(tier.up / P));
    for (const auto& [v, n] : per_upper) REQUIRE(n == P);
  }
}

}  // namespace

TEST_CASE("parallel links: closed-form counts") {
  SECTION("2 tiers, k = 8, P = 2: 4 leaves of 4 NICs, 2 spines, 16 leaf-spine cables") {
    const Topology t = build_topology(parallel(fat_tree_tiers(2, 16, 1, 1, 8), 2));
    const FatTreeLayout& f = *t.fat_tree();
    REQUIRE(f.tiers == 2);
    CHECK(f.leaves == 4);
    CHECK(f.spines == 2);
    CHECK(f.leaf_up.size() == 16);
    CHECK(t.num_fabric_switches() == 6);
    check_bundles(t, 1, 2);
  }
  SECTION("2 tiers, k = 8, P = 4: one spine, 4 cables to each of 2 leaves") {
    const Topology t = build_topology(parallel(fat_tree_tiers(2, 8, 1, 1, 8), 4));
    CHECK(t.fat_tree()->leaves == 2);
    CHECK(t.fat_tree()->spines == 1);
    CHECK(t.fat_tree()->leaf_up.size() == 8);
    check_bundles(t, 1, 4);
  }
  SECTION("3 tiers, k = 8, P = 2: (k/P)^2 * k/2 = 32 NICs, 8 leaves, 8 aggregation, 4 cores") {
    const Topology t = build_topology(parallel(fat_tree_tiers(3, 32, 1, 1, 8), 2));
    const FatTreeLayout& f = *t.fat_tree();
    REQUIRE(f.tiers == 3);
    CHECK(f.tier[0].switches == 8);
    CHECK(f.tier[1].switches == 8);
    CHECK(f.tier[2].switches == 4);
    CHECK(f.tier[0].up_link.size() == 32);
    CHECK(f.tier[1].up_link.size() == 32);
    check_bundles(t, 1, 2);
    check_bundles(t, 2, 2);
    // Every core port used: 4 cores x 8 ports = 32 aggregation up-cables.
    std::map<VertexId, int> core_ports;
    for (LinkId l : f.tier[1].up_link) ++core_ports[t.link(l).to];
    REQUIRE(core_ports.size() == 4);
    for (const auto& [v, n] : core_ports) CHECK(n == 8);
  }
  SECTION("more than fits: the bundles' error when single cables fit, else the radix's") {
    // 17 NICs: 5 leaves, which 2 tiers reach with single cables but not with bundles of 2.
    CHECK(failing_param(parallel(fat_tree_tiers(2, 17, 1, 1, 8), 2)) == "parallel_links");
    CHECK(failing_param(fat_tree_tiers(2, 17, 1, 1, 8)).empty());
    // 33 NICs: 9 leaves, more than a spine's 8 ports.
    CHECK(failing_param(fat_tree_tiers(2, 33, 1, 1, 8)) == "switch_radix");
  }
}

TEST_CASE("parallel links: routes valid and minimal for all pairs, every fat-tree routing") {
  TopologyParams pcie = parallel(fat_tree_tiers(3, 11, 2, 1, 8), 2);
  pcie.node.fabric = NodeFabric::pcie;
  const TopologyParams cases[] = {
      parallel(fat_tree_tiers(2, 16, 1, 1, 8), 2),
      parallel(fat_tree_tiers(2, 5, 2, 2, 8, 1.0, true), 2),
      parallel(fat_tree_tiers(3, 32, 1, 1, 8), 2),
      parallel(fat_tree_tiers(3, 13, 2, 1, 8), 2),              // partial
      parallel(fat_tree_tiers(3, 4, 8, 8, 8, 1.0, true), 2),    // rail-optimized
      parallel(fat_tree_tiers(3, 20, 1, 1, 12, 2.0), 2),        // leaf 8:4
      pcie,
  };
  for (const TopologyParams& p : cases)
    for (RoutingKind kind : {RoutingKind::dmodk, RoutingKind::ecmp, RoutingKind::adaptive,
                             RoutingKind::shortest}) {
      INFO("tiers " << p.tiers << ", nodes " << p.nodes << ", routing " << static_cast<int>(kind));
      const Topology t = build_topology(p);
      check_all_pairs(t, kind);
    }
}

TEST_CASE("parallel links: dmodk shift permutations are contention-free on full trees") {
  struct Case {
    const char* name;
    TopologyParams params;
  };
  const Case cases[] = {
      {"2 tiers, k=8, P=2", parallel(fat_tree_tiers(2, 16, 1, 1, 8), 2)},
      {"2 tiers, k=8, P=4", parallel(fat_tree_tiers(2, 8, 1, 1, 8), 4)},
      {"3 tiers, k=8, P=2", parallel(fat_tree_tiers(3, 32, 1, 1, 8), 2)},
      {"3 tiers, k=8, P=2, 4 nodes x 8 NICs, rail",
       parallel(fat_tree_tiers(3, 4, 8, 8, 8, 1.0, true), 2)},
      {"3 tiers, k=12, P=2", parallel(fat_tree_tiers(3, 108, 1, 1, 12), 2)},
      {"3 tiers, k=12, P=3", parallel(fat_tree_tiers(3, 48, 1, 1, 12), 3)},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const Topology t = build_topology(c.params);
    auto router = make_router(t, RoutingKind::dmodk, 0);
    for (int shift = 1; shift < t.ranks(); ++shift) {
      INFO("shift " << shift);
      REQUIRE(max_link_load(t, *router, shift) == 1);
    }
  }
}

TEST_CASE("parallel links: dmodk picks the cable from the destination key, ecmp spreads") {
  // 2 tiers, k = 8, P = 2: leaf 0's 4 up-ports go 2 to each spine; destination port q of a
  // remote leaf leaves through up-port q (cable q / 2 to spine q mod 2).
  const Topology t = build_topology(parallel(fat_tree_tiers(2, 16, 1, 1, 8), 2));
  const FatTreeLayout& f = *t.fat_tree();
  auto dmodk = make_router(t, RoutingKind::dmodk, 0);
  for (int dst = 4; dst < 16; ++dst) {
    const Route& r = dmodk->route(0, dst, 0);
    REQUIRE(r.links.size() == 6);  // GPU-NIC-leaf-spine-leaf-NIC-GPU
    CHECK(r.links[2] == f.leaf_up[static_cast<std::size_t>(dst % 4)]);
    CHECK(t.vertex(t.link(r.links[2]).to).index == dst % 2);
  }
  auto ecmp = make_router(t, RoutingKind::ecmp, 7);
  std::set<LinkId> used;
  for (uint64_t key = 0; key < 400; ++key) used.insert(ecmp->route(0, 15, key).links[2]);
  CHECK(used.size() == 4);  // both spines, both cables to each
}

TEST_CASE("parallel links: parameter errors name parallel_links") {
  // 2 leaves of 4 NICs need 4 up-ports; bundles of 3 round that to 6, beyond the radix 8.
  CHECK(failing_param(parallel(fat_tree_tiers(2, 8, 1, 1, 8), 3)) == "parallel_links");
  CHECK(failing_param(parallel(fat_tree_tiers(2, 8, 1, 1, 8), 5)) == "parallel_links");   // > k/2
  CHECK(failing_param(parallel(fat_tree_tiers(2, 8, 1, 1, 8), -1)) == "parallel_links");
  // 8 leaves x bundles of 2 exceed a spine's 8 ports (single cables would fit).
  CHECK(failing_param(parallel(fat_tree_tiers(2, 32, 1, 1, 8), 2)) == "parallel_links");
  // Per boundary: the entry at fault is named; more entries than boundaries.
  TopologyParams listed = fat_tree_tiers(3, 40, 1, 1, 8);
  listed.parallel_links = {1, 3};
  CHECK(failing_param(listed) == "parallel_links.1");
  listed.parallel_links = {1, 1, 1};
  CHECK(failing_param(listed) == "parallel_links");
  // 0 is the builder's choice, as an absent entry.
  CHECK(failing_param(parallel(fat_tree_tiers(2, 8, 1, 1, 8), 0)).empty());
}
