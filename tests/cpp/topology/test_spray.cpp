// Spray (per-packet) routing on fat-trees: a sprayed route, read as a share of the flow on
// every link (1 on a plain hop, 1/k on each of a bundle's k members), is a unit flow from the
// source GPU to the destination GPU that every switch on the way up splits evenly over all of
// its up-ports; its first path is a valid route; fabrics of 2 and 3 tiers, parallel cables,
// rails and oversubscription.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>

#include "helpers.hpp"

using namespace cs::topo;
using cs::topo::test::check_route;
using cs::topo::test::fat_tree_tiers;

namespace {

// The share of the flow on each link.
std::map<LinkId, double> shares(const Router& router, const Route& r) {
  std::map<LinkId, double> w;
  const auto bundles = router.bundles();
  for (std::size_t i = 0; i < r.links.size(); ++i) {
    if (r.bundle.empty() || r.bundle[i] == kNoBundle) {
      w[r.links[i]] += 1;
      continue;
    }
    REQUIRE(r.bundle[i] < bundles.size());
    const auto& members = bundles[r.bundle[i]].members;
    REQUIRE(members.size() >= 2);
    // The path's own hop is one of the bundle's links.
    REQUIRE(std::set<LinkId>(members.begin(), members.end()).count(r.links[i]) == 1);
    for (LinkId m : members) w[m] += 1.0 / static_cast<double>(members.size());
  }
  return w;
}

void check_spray(const Topology& t, int src, int dst) {
  auto router = make_router(t, RoutingKind::spray, 1);
  const Route& r = router->route(src, dst, 0);
  check_route(t, r, src, dst);
  if (!r.bundle.empty()) REQUIRE(r.bundle.size() == r.links.size());
  const auto w = shares(*router, r);
  // Conservation: one unit leaves the source GPU, one arrives at the destination, nothing is
  // made or lost anywhere else.
  std::map<VertexId, double> net;  // out - in
  for (const auto& [l, share] : w) {
    net[t.link(l).from] += share;
    net[t.link(l).to] -= share;
  }
  for (const auto& [v, x] : net) {
    const double expected = v == t.gpu(src) ? 1.0 : v == t.gpu(dst) ? -1.0 : 0.0;
    REQUIRE(x == Approx(expected).margin(1e-12));
  }
  // Even split: a switch that sends part of the flow up sends an equal part up every port.
  const FatTreeLayout& f = *t.fat_tree();
  for (const auto& [l, share] : w) {
    const Vertex& from = t.vertex(t.link(l).from);
    const Vertex& to = t.vertex(t.link(l).to);
    if (from.kind != VertexKind::fabric_switch || to.kind != VertexKind::fabric_switch || to.tier <= from.tier) continue;
    const FatTreeTier& tier = f.tier[static_cast<std::size_t>(from.tier - 1)];
    for (int p = 0; p < tier.up; ++p) {
      const LinkId up = tier.up_link[static_cast<std::size_t>(from.index * tier.up + p)];
      REQUIRE(w.count(up) == 1);
      REQUIRE(w.at(up) == Approx(share).epsilon(1e-12));
    }
  }
}

void check_all(const Topology& t) {
  const int n = t.ranks();
  const int step = n > 64 ? n / 31 : 1;
  for (int s = 0; s < n; s += step)
    for (int d = 0; d < n; d += step) check_spray(t, s, d);
}

}  // namespace

TEST_CASE("spray: every route is an even per-hop split of one unit of flow", "[routing][spray]") {
  SECTION("2 tiers") { check_all(build_topology(fat_tree_tiers(2, 16, 1, 1, 8))); }
  SECTION("2 tiers, 2:1 oversubscribed") { check_all(build_topology(fat_tree_tiers(2, 24, 1, 1, 8, 2.0))); }
  SECTION("2 tiers, parallel cables") {
    TopologyParams p = fat_tree_tiers(2, 16, 1, 1, 8);
    p.parallel_links = {2};
    check_all(build_topology(p));
  }
  SECTION("3 tiers") { check_all(build_topology(fat_tree_tiers(3, 64, 1, 1, 8))); }
  SECTION("3 tiers, parallel cables and 2:1 above the leaves") {
    TopologyParams p = fat_tree_tiers(3, 64, 1, 1, 8, 1.0, false, {2.0});
    p.parallel_links = {2, 1};
    check_all(build_topology(p));
  }
  SECTION("rail-optimized, 8 GPUs and NICs per node") {
    check_all(build_topology(fat_tree_tiers(2, 16, 8, 8, 16, 1.0, true)));
  }
}

TEST_CASE("spray: bundles are whole levels, shared by a group's leaves", "[routing][spray]") {
  const Topology t = build_topology(fat_tree_tiers(3, 64, 1, 1, 8));
  const FatTreeLayout& f = *t.fat_tree();
  auto router = make_router(t, RoutingKind::spray, 1);
  // A leaf's up-bundle: its up-ports; a tier-2 group's: every up-link of its switches. Leaves
  // 0 and 1 share a group, so routes from them to a far leaf name the same level-2 bundle.
  const Route& a = router->route(0, t.ranks() - 1, 0);
  const Route& b = router->route(f.tier[0].down, t.ranks() - 1, 0);  // first NIC of leaf 1
  REQUIRE(f.tiers == 3);
  REQUIRE(a.bundle.size() == a.links.size());
  const auto bundles = router->bundles();
  std::size_t up1 = 0, up2 = 0;
  for (std::size_t i = 0; i < a.links.size(); ++i) {
    if (a.bundle[i] == kNoBundle) continue;
    const auto k = bundles[a.bundle[i]].members.size();
    if (t.vertex(t.link(a.links[i]).from).tier == 1 && t.vertex(t.link(a.links[i]).to).tier == 2) up1 = k;
    if (t.vertex(t.link(a.links[i]).from).tier == 2 && t.vertex(t.link(a.links[i]).to).tier == 3) {
      up2 = k;
      CHECK(a.bundle[i] == b.bundle[i]);
    }
  }
  CHECK(up1 == static_cast<std::size_t>(f.tier[0].up));
  CHECK(up2 == static_cast<std::size_t>(f.tier[1].per_group * f.tier[1].up));
  // The same routing on a dragonfly is refused.
  TopologyParams d;
  d.kind = TopologyKind::dragonfly;
  d.routers_per_group = 2;
  d.nodes_per_router = 1;
  d.global_links_per_router = 1;
  CHECK_THROWS_WITH(make_router(build_topology(d), RoutingKind::spray, 1), Catch::Contains("needs a fat_tree"));
}
