// Dragonfly routings: validity and minimality over all rank pairs, Valiant through an
// intermediate group, determinism per seed, UGAL's choice under a fake load oracle.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <unordered_set>
#include <vector>

#include "direct_helpers.hpp"

using namespace cs::topo;
using cs::topo::test::check_route;
using cs::topo::test::dragonfly;
using cs::topo::test::hop_distance;
using cs::topo::test::kArrangements;
using cs::topo::test::one_global_distance;

namespace {

std::unordered_set<LinkId> global_links(const Topology& t) {
  const DragonflyLayout& d = *t.dragonfly();
  return {d.global.begin(), d.global.end()};
}

int count_global(const std::unordered_set<LinkId>& global, const Route& r) {
  int n = 0;
  for (LinkId l : r.links) n += static_cast<int>(global.count(l));
  return n;
}

// Groups of the routers a route passes through, in order, without repeats.
std::vector<int> groups_visited(const Topology& t, const Route& r) {
  const DragonflyLayout& d = *t.dragonfly();
  std::vector<int> out;
  for (LinkId l : r.links) {
    const Vertex& v = t.vertex(t.link(l).to);
    if (v.kind != VertexKind::fabric_switch) continue;
    const int g = d.group_of_router(v.index);
    if (out.empty() || out.back() != g) out.push_back(g);
  }
  return out;
}

// Most switch-to-switch hops a route takes inside one group.
int local_hops_per_group(const Topology& t, const Route& r) {
  const DragonflyLayout& d = *t.dragonfly();
  std::vector<int> per_group(static_cast<std::size_t>(d.groups), 0);
  int most = 0;
  for (LinkId l : r.links) {
    const Vertex &a = t.vertex(t.link(l).from), &b = t.vertex(t.link(l).to);
    if (a.kind != VertexKind::fabric_switch || b.kind != VertexKind::fabric_switch) continue;
    if (d.group_of_router(a.index) != d.group_of_router(b.index)) continue;
    most = std::max(most, ++per_group[static_cast<std::size_t>(d.group_of_router(a.index))]);
  }
  return most;
}

int group_of_rank(const Topology& t, int rank) {
  const DragonflyLayout& d = *t.dragonfly();
  return d.group_of_node(t.node_of_rank(rank));
}

std::vector<TopologyParams> small_dragonflies() {
  std::vector<TopologyParams> out;
  for (GlobalArrangement arr : kArrangements) {
    out.push_back(dragonfly(2, 2, 1, 3, 12, 2, 1, arr));  // full, one cable per pair
    out.push_back(dragonfly(4, 1, 2, 5, 18, 2, 2, arr));  // 2 cables per pair, partial fill
    out.push_back(dragonfly(3, 1, 2, 5, 15, 1, 1, arr));  // unused ports
    out.push_back(dragonfly(2, 1, 2, 5, 10, 2, 1, arr));  // full, h = 2
  }
  TopologyParams pcie = dragonfly(3, 1, 2, 4, 12, 2, 2);
  pcie.node.fabric = NodeFabric::pcie;
  out.push_back(pcie);
  out.push_back(dragonfly(3, 2, 2, 1, 6));  // one group
  return out;
}

}  // namespace

TEST_CASE("dragonfly routes: valid for all pairs; minimal and shortest are shortest") {
  for (const TopologyParams& p : small_dragonflies()) {
    INFO("a=" << p.routers_per_group << " g=" << p.groups << " nodes=" << p.nodes << " "
              << arrangement_name(p.global_arrangement));
    const Topology t = build_topology(p);
    const auto global = global_links(t);
    auto minimal = make_router(t, RoutingKind::minimal, 5);
    auto valiant = make_router(t, RoutingKind::valiant, 5);
    auto ugal = make_router(t, RoutingKind::ugal, 5);  // no oracle: minimal
    auto shortest = make_router(t, RoutingKind::shortest, 5);
    for (int s = 0; s < t.ranks(); ++s)
      for (int d = 0; d < t.ranks(); ++d) {
        const auto key = static_cast<uint64_t>(s * 131 + d);
        const Route& m = minimal->route(s, d, key);
        const Route& v = valiant->route(s, d, key);
        const Route& sh = shortest->route(s, d, key);
        check_route(t, m, s, d);
        check_route(t, v, s, d);
        check_route(t, sh, s, d);
        REQUIRE(ugal->route(s, d, key).links == m.links);
        REQUIRE(static_cast<int>(sh.links.size()) == hop_distance(t, s, d));
        // Minimal: local-global-local, at most one global cable and one local hop in each
        // group; the shortest such route when only one cable joins two groups (with m
        // parallel cables the pair's own cable may need local hops the nearest would not).
        REQUIRE(count_global(global, m) <= 1);
        REQUIRE(local_hops_per_group(t, m) <= 1);
        const int nearest = one_global_distance(t, global, s, d);
        if (t.dragonfly()->links_per_group_pair <= 1)
          REQUIRE(static_cast<int>(m.links.size()) == nearest);
        REQUIRE(static_cast<int>(m.links.size()) <= nearest + 2);
        REQUIRE(m.links.size() >= sh.links.size());
        const int sg = group_of_rank(t, s), dg = group_of_rank(t, d);
        if (sg != dg && p.groups >= 3) {
          // Valiant: through exactly one other group, two global cables.
          const std::vector<int> seen = groups_visited(t, v);
          REQUIRE(seen.size() == 3);
          REQUIRE(seen.front() == sg);
          REQUIRE(seen.back() == dg);
          REQUIRE(seen[1] != sg);
          REQUIRE(seen[1] != dg);
          REQUIRE(count_global(global, v) == 2);
        } else {
          REQUIRE(v.links == m.links);
        }
      }
  }
}

TEST_CASE("valiant: intermediate groups spread per flow, deterministic for a seed") {
  const Topology t = build_topology(dragonfly(4, 2, 2, 9, 72));
  auto a = make_router(t, RoutingKind::valiant, 11);
  auto b = make_router(t, RoutingKind::valiant, 11);
  auto c = make_router(t, RoutingKind::valiant, 12);
  const int src = 0, dst = t.ranks() - 1;  // group 0 -> group 8
  std::set<int> via;
  int differs = 0;
  for (uint64_t key = 0; key < 500; ++key) {
    const Route& r = a->route(src, dst, key);
    CHECK(r.links == b->route(src, dst, key).links);
    differs += r.links != c->route(src, dst, key).links;
    via.insert(groups_visited(t, r)[1]);
  }
  CHECK(differs > 0);
  CHECK(via == std::set<int>{1, 2, 3, 4, 5, 6, 7});  // every group but 0 and 8
}

TEST_CASE("ugal: non-minimal when the minimal route is loaded, minimal otherwise") {
  const Topology t = build_topology(dragonfly(4, 2, 2, 9, 72));
  auto ugal = make_router(t, RoutingKind::ugal, 3);
  auto minimal = make_router(t, RoutingKind::minimal, 3);
  auto valiant = make_router(t, RoutingKind::valiant, 3);
  const int src = 0, dst = 40;  // group 0 -> group 5
  const uint64_t key = 77;
  const std::vector<LinkId> min_links = minimal->route(src, dst, key).links;
  const std::vector<LinkId> val_links = valiant->route(src, dst, key).links;
  REQUIRE(val_links.size() > min_links.size());
  const std::unordered_set<LinkId> only_min = [&] {
    std::unordered_set<LinkId> s(min_links.begin(), min_links.end());
    for (LinkId l : val_links) s.erase(l);
    return s;
  }();
  REQUIRE(!only_min.empty());

  uint32_t load = 0;  // on the links of the minimal route that the Valiant one avoids
  ugal->set_load_oracle([&](LinkId l) { return only_min.count(l) ? load : 0u; });
  CHECK(ugal->route(src, dst, key).links == min_links);  // idle: minimal
  load = 1;
  // (1 + 1) * hops_min against hops_valiant: minimal while 2 * min >= valiant.
  const bool min_wins = 2 * min_links.size() <= val_links.size();
  CHECK((ugal->route(src, dst, key).links == min_links) == min_wins);
  load = 100;
  CHECK(ugal->route(src, dst, key).links == val_links);
  // Load everywhere alike: hops decide, minimal.
  ugal->set_load_oracle([](LinkId) { return 100u; });
  CHECK(ugal->route(src, dst, key).links == min_links);
}

TEST_CASE("dragonfly and torus routings need their family") {
  const Topology fat = build_topology(cs::topo::test::fat_tree(2, 2, 1, 4));
  for (RoutingKind kind : {RoutingKind::minimal, RoutingKind::valiant, RoutingKind::ugal})
    CHECK_THROWS_WITH(make_router(fat, kind, 0),
                      Catch::Contains("dragonfly") && Catch::Contains("fat_tree"));
  CHECK_THROWS_WITH(make_router(fat, RoutingKind::dor, 0), Catch::Contains("torus"));
  const Topology df = build_topology(dragonfly(2, 2, 1, 3, 12));
  CHECK_THROWS_AS(make_router(df, RoutingKind::dor, 0), std::invalid_argument);
  CHECK_THROWS_AS(make_router(df, RoutingKind::dmodk, 0), std::invalid_argument);
  auto r = make_router(df, RoutingKind::minimal, 0);
  CHECK_THROWS_AS(r->route(0, df.ranks(), 0), std::out_of_range);
}
