// Routing on 3-tier fat-trees: validity and minimality for all pairs, D-mod-K contention
// freedom on shift permutations, ECMP spread over cores, and adaptive routing with a load
// oracle.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "helpers.hpp"

using namespace cs::topo;
using cs::topo::test::check_all_pairs;
using cs::topo::test::fat_tree_tiers;
using cs::topo::test::max_link_load;

namespace {

const RoutingKind kRoutings[] = {RoutingKind::dmodk, RoutingKind::ecmp, RoutingKind::adaptive,
                                 RoutingKind::shortest};

// The tier-3 switch a route turns at (nullopt when it stays below tier 3).
std::optional<VertexId> core_of(const Topology& t, const Route& r) {
  for (LinkId l : r.links)
    if (t.vertex(t.link(l).to).tier == 3) return t.link(l).to;
  return std::nullopt;
}

}  // namespace

TEST_CASE("3-tier routes: valid and minimal for all pairs, every fat-tree routing") {
  TopologyParams pcie = fat_tree_tiers(3, 11, 2, 1, 4);
  pcie.node.fabric = NodeFabric::pcie;
  TopologyParams mesh = fat_tree_tiers(3, 6, 4, 2, 4);
  mesh.node.fabric = NodeFabric::nvlink_mesh;
  const TopologyParams cases[] = {
      fat_tree_tiers(3, 16, 1, 1, 4),                         // full k = 4
      fat_tree_tiers(3, 11, 2, 1, 4),                         // partial: 6 leaves, 3 pods
      fat_tree_tiers(3, 8, 2, 2, 4, 1.0, true),               // rail-optimized, 4 pods
      fat_tree_tiers(3, 15, 2, 2, 6, 2.0, false, {1.0}),      // leaf 4:2, aggregation 3:3
      fat_tree_tiers(3, 21, 1, 1, 6, 1.0, false, {2.0}),      // aggregation 4:2
      pcie,
      mesh,
  };
  for (const TopologyParams& p : cases) {
    const Topology t = build_topology(p);
    REQUIRE(t.fat_tree()->tiers == 3);
    for (RoutingKind kind : kRoutings) {
      INFO("nodes " << p.nodes << ", routing " << static_cast<int>(kind));
      check_all_pairs(t, kind);
    }
  }
}

TEST_CASE("3-tier dmodk: level-l up-port = floor(key / lower up-ports) mod up-ports") {
  // Full k = 8, one NIC per node: key = port + 4 * leaf-in-pod + 16 * pod, so a route turns
  // at aggregation switch `port` of its pod and at core 4 * port + leaf-in-pod.
  const Topology t = build_topology(fat_tree_tiers(3, 128, 1, 1, 8));
  const FatTreeLayout& f = *t.fat_tree();
  auto r = make_router(t, RoutingKind::dmodk, 0);
  for (int dst = 16; dst < 128; ++dst) {
    const Route& route = r->route(0, dst, 0);
    REQUIRE(route.links.size() == 8);  // GPU-NIC-leaf-agg-core-agg-leaf-NIC-GPU
    const int port = dst % 4, leaf_in_pod = dst / 4 % 4;
    const auto core = static_cast<std::size_t>(4 * port + leaf_in_pod);
    CHECK(t.link(route.links[3]).to == f.tier[2].vertex[core]);
    CHECK(t.vertex(t.link(route.links[2]).to).index == port);  // pod 0, aggregation `port`
    CHECK(f.nic_key[static_cast<std::size_t>(dst)] == static_cast<uint64_t>(dst));
  }
  // Inside a pod: GPU-NIC-leaf-agg-leaf-NIC-GPU, through aggregation switch `port`.
  const Route& in_pod = r->route(0, 13, 0);
  CHECK(in_pod.links.size() == 6);
  CHECK(t.vertex(t.link(in_pod.links[2]).to).index == 13 % 4);
}

TEST_CASE("3-tier dmodk: shift permutations are contention-free on full fat-trees") {
  struct Case {
    const char* name;
    TopologyParams params;
  };
  const Case cases[] = {
      {"k=4, 16 hosts", fat_tree_tiers(3, 16, 1, 1, 4)},
      {"k=8, 128 hosts", fat_tree_tiers(3, 128, 1, 1, 8)},
      {"k=8, 16 nodes x 8 GPUs x 8 NICs", fat_tree_tiers(3, 16, 8, 8, 8)},
      {"k=8, 16 nodes x 8 GPUs x 8 NICs, rail", fat_tree_tiers(3, 16, 8, 8, 8, 1.0, true)},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const Topology t = build_topology(c.params);
    const int k = c.params.switch_radix;
    REQUIRE(t.fat_tree()->tiers == 3);
    REQUIRE(t.fat_tree()->tier[0].switches == k * k / 2);  // full: every core port used
    auto router = make_router(t, RoutingKind::dmodk, 0);
    for (int shift = 1; shift < t.ranks(); ++shift) {
      INFO("shift " << shift);
      REQUIRE(max_link_load(t, *router, shift) == 1);
    }
  }
}

TEST_CASE("3-tier ecmp: per-flow hashing spreads over every core") {
  const Topology t = build_topology(fat_tree_tiers(3, 16, 1, 1, 4));  // 4 cores
  auto a = make_router(t, RoutingKind::ecmp, 42);
  auto b = make_router(t, RoutingKind::ecmp, 42);
  std::map<VertexId, int> per_core;
  for (uint64_t key = 0; key < 4000; ++key) {
    const Route& r = a->route(0, 15, key);
    REQUIRE(r.links == b->route(0, 15, key).links);
    ++per_core[*core_of(t, r)];
  }
  REQUIRE(per_core.size() == 4);
  for (const auto& [core, n] : per_core) {
    CHECK(n > 800);
    CHECK(n < 1200);
  }
}

TEST_CASE("adaptive: without an oracle, or on an idle fabric, it is dmodk") {
  const Topology t = build_topology(fat_tree_tiers(3, 16, 1, 1, 4));
  auto dmodk = make_router(t, RoutingKind::dmodk, 0);
  auto adaptive = make_router(t, RoutingKind::adaptive, 0);
  auto idle = make_router(t, RoutingKind::adaptive, 0);
  idle->set_load_oracle([](LinkId) { return 0u; });
  for (int s = 0; s < 16; ++s)
    for (int d = 0; d < 16; ++d) {
      CHECK(adaptive->route(s, d, 9).links == dmodk->route(s, d, 0).links);
      CHECK(idle->route(s, d, 9).links == dmodk->route(s, d, 0).links);
    }
}

TEST_CASE("adaptive: the path whose busiest link has the fewest flows") {
  const Topology t = build_topology(fat_tree_tiers(3, 16, 1, 1, 4));
  std::vector<uint32_t> load(t.num_links(), 0);
  auto router = make_router(t, RoutingKind::adaptive, 0);
  router->set_load_oracle([&load](LinkId l) { return load[l]; });
  auto dmodk = make_router(t, RoutingKind::dmodk, 0);
  const Route& base = dmodk->route(0, 15, 0);  // rank 0 (pod 0) -> rank 15 (pod 3)
  const VertexId base_core = *core_of(t, base);

  // Load the D-mod-K path's core down-link: another core is taken, the next one after it.
  const int base_index = t.vertex(base_core).index;
  for (LinkId l : base.links)
    if (t.link(l).from == base_core) load[l] = 3;
  VertexId chosen = *core_of(t, router->route(0, 15, 1));
  CHECK(chosen != base_core);
  CHECK(t.vertex(chosen).index == (base_index + 1) % 4);

  // Every fabric link busy except those of the path through core 2: that path wins.
  std::fill(load.begin(), load.end(), 2);
  auto via_core2 = make_router(t, RoutingKind::ecmp, 0);
  std::vector<LinkId> free_path;
  for (uint64_t key = 0; free_path.empty(); ++key) {
    const Route& r = via_core2->route(0, 15, key);
    if (t.vertex(*core_of(t, r)).index == 2) free_path = r.links;
  }
  for (LinkId l : free_path) load[l] = 0;
  CHECK(t.vertex(*core_of(t, router->route(0, 15, 2))).index == 2);

  // Min-max, not min-sum: a path with several lightly used links beats one hot link.
  std::fill(load.begin(), load.end(), 1);
  for (LinkId l : free_path)
    if (t.vertex(t.link(l).to).tier == 3) load[l] = 5;  // core 2: one hot up-link
  const VertexId pick = *core_of(t, router->route(0, 15, 3));
  CHECK(t.vertex(pick).index != 2);
}

TEST_CASE("adaptive with loads fed back spreads flows that dmodk stacks") {
  // k = 4: destinations 4, 8 and 12 all have leaf port 0 and leaf-in-pod 0, so D-mod-K
  // sends their flows from pod 0 through core 0, three on one aggregation up-link.
  const Topology t = build_topology(fat_tree_tiers(3, 16, 1, 1, 4));
  const std::pair<int, int> flows[] = {{0, 4}, {1, 8}, {2, 12}, {3, 6}};
  auto worst = [&](Router& r) {
    std::vector<uint32_t> load(t.num_links(), 0);
    r.set_load_oracle([&load](LinkId l) { return load[l]; });
    uint32_t w = 0;
    for (auto [s, d] : flows)
      for (LinkId l : r.route(s, d, 0).links) w = std::max(w, ++load[l]);
    return w;
  };
  auto dmodk = make_router(t, RoutingKind::dmodk, 0);
  auto adaptive = make_router(t, RoutingKind::adaptive, 0);
  CHECK(worst(*dmodk) == 3);
  CHECK(worst(*adaptive) == 1);
}
