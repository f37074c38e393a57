// Routes: validity over all rank pairs, minimal hop counts, D-mod-K contention freedom on
// shift permutations, ECMP determinism and spread, caching.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "helpers.hpp"

using namespace cs::topo;
using cs::topo::test::check_all_pairs;
using cs::topo::test::check_route;
using cs::topo::test::fat_tree;
using cs::topo::test::max_link_load;

namespace {

const RoutingKind kAllRoutings[] = {RoutingKind::dmodk, RoutingKind::ecmp, RoutingKind::shortest};

}  // namespace

TEST_CASE("fat_tree routes: valid and minimal for all pairs, every routing") {
  // 3 nodes of 4 GPUs and 2 NICs, k = 4: 6 NICs on 3 leaves of 2, 2 spines.
  const Topology nv = build_topology(fat_tree(3, 4, 2, 4));
  TopologyParams pcie_params = fat_tree(3, 4, 2, 4);
  pcie_params.node.fabric = NodeFabric::pcie;
  const Topology pcie = build_topology(pcie_params);
  const Topology rail = build_topology(fat_tree(3, 4, 2, 4, 1.0, true));  // 2 rails x 2 leaves
  const Topology over = build_topology(fat_tree(5, 2, 2, 8, 3.0));        // 6 down, 2 up
  const Topology one_leaf = build_topology(fat_tree(2, 2, 1, 4));         // 2 NICs, no spines
  for (RoutingKind kind : kAllRoutings) {
    INFO("routing " << static_cast<int>(kind));
    check_all_pairs(nv, kind);
    check_all_pairs(pcie, kind);
    check_all_pairs(rail, kind);
    check_all_pairs(over, kind);
    check_all_pairs(one_leaf, kind);
  }
}

TEST_CASE("dmodk hop counts and latency in closed form") {
  const Topology t = build_topology(fat_tree(3, 4, 2, 4));
  auto r = make_router(t, RoutingKind::dmodk, 0);
  // Same node: GPU -> NVSwitch -> GPU, 2 * 0.7 us.
  CHECK(r->route(0, 3, 0).links.size() == 2);
  CHECK(r->route(0, 3, 0).latency_s == Approx(1.4e-6));
  // Rank 0 (NIC 0, leaf 0) -> rank 4 (node 1, NIC g = 2, leaf 1): different leaves:
  // GPU-NIC-leaf-spine-leaf-NIC-GPU = 6 links, 2 * 0.5 us PCIe + 4 * 0.5 us fabric.
  CHECK(r->route(0, 4, 0).links.size() == 6);
  CHECK(r->route(0, 4, 0).latency_s == Approx(3e-6));
  // Rank 0 (NIC 0) -> rank 2 of the same node: same node wins over the shared leaf.
  CHECK(r->route(0, 2, 0).links.size() == 2);
  // Same leaf, different nodes (a 1-leaf tree of 2 NICs): GPU-NIC-leaf-NIC-GPU = 4 links.
  const Topology small = build_topology(fat_tree(2, 2, 1, 4));
  CHECK(make_router(small, RoutingKind::dmodk, 0)->route(0, 2, 0).links.size() == 4);
  // D-mod-K: the spine is the destination NIC's port mod spines. Rank 6 has NIC g = 3
  // (node 1, NIC 1), port 1 on leaf 1 -> spine 1.
  const Route& to6 = r->route(0, 6, 0);
  CHECK(t.link(to6.links[2]).to == t.fat_tree()->spine[1]);
  // pcie nodes go through the host: GPU-host-NIC-leaf-spine-leaf-NIC-host-GPU = 8 links.
  TopologyParams pp = fat_tree(3, 4, 2, 4);
  pp.node.fabric = NodeFabric::pcie;
  const Topology pt = build_topology(pp);
  auto pr = make_router(pt, RoutingKind::dmodk, 0);
  CHECK(pr->route(0, 4, 0).links.size() == 8);
  CHECK(pt.link(pr->route(0, 4, 0).links[1]).to == pt.nic(0, 0));  // affine NIC of GPU 0
  CHECK(pt.link(pr->route(3, 4, 0).links[1]).to == pt.nic(0, 1));  // affine NIC of GPU 3
}

TEST_CASE("dmodk: shift permutations are contention-free on full non-blocking fat-trees") {
  struct Case {
    const char* name;
    TopologyParams params;
  };
  const Case cases[] = {
      // k = 8: 4 down / 4 up, 8 leaves * 4 = 32 NICs, the largest 2-tier tree of radix 8.
      {"32 nodes x 1 GPU, k=8", fat_tree(32, 1, 1, 8)},
      {"4 nodes x 8 GPUs x 8 NICs, k=8", fat_tree(4, 8, 8, 8)},
      {"4 nodes x 8 GPUs x 8 NICs, k=8, rail-optimized", fat_tree(4, 8, 8, 8, 1.0, true)},
      // k = 16: 8 down / 8 up, 16 leaves * 8 = 128 NICs.
      {"16 nodes x 8 GPUs x 8 NICs, k=16", fat_tree(16, 8, 8, 16)},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const Topology t = build_topology(c.params);
    const FatTreeLayout& f = *t.fat_tree();
    REQUIRE(f.leaves == c.params.switch_radix);   // every spine port used
    REQUIRE(f.down_ports == f.spines);             // non-blocking
    auto router = make_router(t, RoutingKind::dmodk, 0);
    for (int shift = 1; shift < t.ranks(); ++shift) {
      INFO("shift " << shift);
      CHECK(max_link_load(t, *router, shift) == 1);
    }
  }
}

TEST_CASE("ecmp: deterministic for a seed, per-flow hashing spreads over spines") {
  const Topology t = build_topology(fat_tree(4, 8, 8, 8));  // 4 spines
  auto a = make_router(t, RoutingKind::ecmp, 42);
  auto b = make_router(t, RoutingKind::ecmp, 42);
  auto c = make_router(t, RoutingKind::ecmp, 43);
  int differs = 0;
  for (uint64_t key = 0; key < 200; ++key) {
    const int s = static_cast<int>(key % 32), d = static_cast<int>((key * 7 + 5) % 32);
    CHECK(a->route(s, d, key).links == b->route(s, d, key).links);
    differs += a->route(s, d, key).links != c->route(s, d, key).links;
  }
  CHECK(differs > 0);  // another seed picks other spines for some flows

  // Rank 0 (leaf 0) -> rank 31 (leaf 7): 4000 flows, about 1000 per spine.
  std::map<VertexId, int> per_spine;
  for (uint64_t key = 0; key < 4000; ++key) {
    const Route& r = a->route(0, 31, key);
    REQUIRE(r.links.size() == 6);
    ++per_spine[t.link(r.links[2]).to];
  }
  REQUIRE(per_spine.size() == 4);
  for (const auto& [spine, n] : per_spine) {
    CHECK(t.vertex(spine).tier == 2);
    CHECK(n > 800);
    CHECK(n < 1200);
  }
  // Different NIC pairs also spread for a fixed flow key.
  std::map<VertexId, int> per_spine_pairs;
  for (int s = 0; s < 4; ++s)
    for (int d = 28; d < 32; ++d) ++per_spine_pairs[t.link(a->route(s, d, 0).links[2]).to];
  CHECK(per_spine_pairs.size() >= 3);
}

TEST_CASE("ecmp caches per (src, dst, spine), not per flow key") {
  const Topology t = build_topology(fat_tree(4, 8, 8, 8));
  auto r = make_router(t, RoutingKind::ecmp, 1);
  std::map<VertexId, const Route*> by_spine;
  for (uint64_t key = 0; key < 64; ++key) {
    const Route& route = r->route(0, 31, key);
    const VertexId spine = t.link(route.links[2]).to;
    auto [it, fresh] = by_spine.emplace(spine, &route);
    if (!fresh) CHECK(it->second == &route);  // same cached object for the same spine
  }
  CHECK(by_spine.size() == 4);
  // Same node and same leaf: no spine, one route whatever the key.
  CHECK(&r->route(0, 1, 1) == &r->route(0, 1, 999));
}

TEST_CASE("cached route references stay valid as the cache grows") {
  const Topology t = build_topology(fat_tree(4, 8, 8, 8));
  for (RoutingKind kind : kAllRoutings) {
    auto r = make_router(t, kind, 3);
    const Route& first = r->route(0, 31, 0);
    const std::vector<LinkId> copy = first.links;
    for (int s = 0; s < 32; ++s)
      for (int d = 0; d < 32; ++d) r->route(s, d, 0);
    CHECK(first.links == copy);
    CHECK(&r->route(0, 31, 0) == &first);
  }
}

TEST_CASE("router errors") {
  const Topology t = build_topology(fat_tree(2, 2, 1, 4));
  auto r = make_router(t, RoutingKind::dmodk, 0);
  CHECK(r->route(1, 1, 5).links.empty());
  CHECK_THROWS_AS(r->route(-1, 0, 0), std::out_of_range);
  CHECK_THROWS_AS(r->route(0, 4, 0), std::out_of_range);

  TopologyParams single;
  single.kind = TopologyKind::single_node;
  const Topology s = build_topology(single);
  CHECK_THROWS_WITH(make_router(s, RoutingKind::dmodk, 0),
                    Catch::Contains("dmodk") && Catch::Contains("fat_tree"));
  CHECK_THROWS_AS(make_router(s, RoutingKind::ecmp, 0), std::invalid_argument);
  auto shortest = make_router(s, RoutingKind::shortest, 0);
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) check_route(s, shortest->route(a, b, 0), a, b);
  CHECK(shortest->route(0, 7, 0).links.size() == 2);
}
