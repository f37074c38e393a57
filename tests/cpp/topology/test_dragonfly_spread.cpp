// Dragonfly minimal routing spreads a group pair's traffic evenly over its parallel global
// cables; rail-style NIC placement; bundled local links.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "direct_helpers.hpp"
#include "report_helpers.hpp"

using namespace cs::topo;
using cs::topo::test::check_route;
using cs::topo::test::dragonfly;
using cs::topo::test::hop_distance;

namespace {

// Flows of an all-to-all (every rank to every other) on each directed global link, routed
// minimally. A router per source keeps the route cache small.
std::unordered_map<LinkId, int> all_to_all_global_flows(const Topology& t) {
  const DragonflyLayout& d = *t.dragonfly();
  const std::unordered_set<LinkId> global(d.global.begin(), d.global.end());
  std::unordered_map<LinkId, int> flows;
  for (int s = 0; s < t.ranks(); ++s) {
    auto router = make_router(t, RoutingKind::minimal, 1);
    for (int r = 0; r < t.ranks(); ++r)
      for (LinkId l : router->route(s, r, 0).links)
        if (global.count(l)) ++flows[l];
  }
  return flows;
}

// Largest relative distance from the mean over the m copies of each directed group pair
// that carries flows.
double worst_spread(const Topology& t, const std::unordered_map<LinkId, int>& flows) {
  const DragonflyLayout& d = *t.dragonfly();
  double worst = 0;
  for (int from = 0; from < d.groups; ++from)
    for (int to = 0; to < d.groups; ++to) {
      if (from == to) continue;
      std::vector<int> n;
      for (int c = 0; c < d.links_per_group_pair; ++c) {
        const auto it = flows.find(d.global_link(from, to, c));
        n.push_back(it == flows.end() ? 0 : it->second);
      }
      double mean = 0;
      for (int x : n) mean += x;
      mean /= static_cast<double>(n.size());
      if (mean == 0) continue;
      for (int x : n) worst = std::max(worst, std::abs(x - mean) / mean);
    }
  return worst;
}

}  // namespace

TEST_CASE("minimal all-to-all loads a group pair's parallel global cables within 5% of even") {
  SECTION("1,024 GPUs, 18 cables per group pair (the issue's case)") {
    // a = 16 routers, h = 9, g = 9: 16 * 9 / 8 = 18 cables per pair; 128 nodes of 8 GPUs
    // fill 8 groups. The nearest-cable rule loaded them 0.13-2.08 GB (16x apart).
    const Topology t = build_topology(dragonfly(16, 1, 9, 9, 128, 8, 1));
    REQUIRE(t.dragonfly()->links_per_group_pair == 18);
    const auto flows = all_to_all_global_flows(t);
    CHECK(worst_spread(t, flows) < 0.05);
    // Every cable between two populated groups carries flows; 128 * 128 / 18 = 910.2 each.
    int used = 0;
    for (const auto& [l, n] : flows) {
      CHECK(n >= 910);
      CHECK(n <= 911);
      ++used;
    }
    CHECK(used == 8 * 7 * 18);
  }
  SECTION("8 cables per pair, 2 GPUs per node, two NICs per node on separate rails") {
    TopologyParams p = dragonfly(8, 4, 4, 5, 160, 2, 2);
    p.rail_optimized = true;
    const Topology t = build_topology(p);
    REQUIRE(t.dragonfly()->links_per_group_pair == 8);
    CHECK(worst_spread(t, all_to_all_global_flows(t)) < 0.05);
  }
}

TEST_CASE("minimal: a rank to the same rank of another group uses every parallel cable") {
  // The permutation i -> i of the next group: (i + j) mod m would use every other cable only.
  const Topology t = build_topology(dragonfly(16, 1, 9, 9, 144, 8, 1));
  const DragonflyLayout& d = *t.dragonfly();
  auto router = make_router(t, RoutingKind::minimal, 1);
  const int per_group = 16 * 8;
  std::map<LinkId, int> flows;
  for (int i = 0; i < per_group; ++i)
    for (LinkId l : router->route(i, per_group + i, 0).links)
      if (std::find(d.global.begin(), d.global.end(), l) != d.global.end()) ++flows[l];
  CHECK(flows.size() == 18);  // 128 flows over all 18 cables of the pair: 7 or 8 each
  for (const auto& [l, n] : flows) CHECK(n <= 8);
}

TEST_CASE("dragonfly rail placement: NIC j of a node on router j of its group") {
  SECTION("as many NICs as routers: NIC j on router j") {
    TopologyParams p = dragonfly(4, 2, 2, 9, 72, 4, 4);
    p.rail_optimized = true;
    const Topology t = build_topology(p);
    const DragonflyLayout& d = *t.dragonfly();
    std::vector<int> nics_on(static_cast<std::size_t>(d.router.size()), 0);
    for (int n = 0; n < 72; ++n)
      for (int j = 0; j < 4; ++j) {
        const Link& up = t.link(d.nic_up[static_cast<std::size_t>(n * 4 + j)]);
        CHECK(up.from == t.nic(n, j));
        const int router = t.vertex(up.to).index;
        CHECK(router == (n / 8) * 4 + j);
        ++nics_on[static_cast<std::size_t>(router)];
      }
    for (int n : nics_on) CHECK(n == 2 * 4);  // p x NICs, as without rails
  }
  SECTION("fewer NICs than routers: nodes take turns, a node's NICs on distinct routers") {
    TopologyParams p = dragonfly(4, 2, 2, 3, 24, 2, 2);
    p.rail_optimized = true;
    const Topology t = build_topology(p);
    const DragonflyLayout& d = *t.dragonfly();
    for (int n = 0; n < 24; ++n) {
      const int q = n % 8;
      CHECK(d.router_of_nic(n * 2 + 0) == (n / 8) * 4 + (2 * q) % 4);
      CHECK(d.router_of_nic(n * 2 + 1) == (n / 8) * 4 + (2 * q + 1) % 4);
    }
  }
  SECTION("routes valid, one global cable at most, the diameter as the closed form") {
    TopologyParams p = dragonfly(3, 2, 2, 4, 20, 2, 3);
    p.rail_optimized = true;
    const Topology t = build_topology(p);
    auto minimal = make_router(t, RoutingKind::minimal, 1);
    auto valiant = make_router(t, RoutingKind::valiant, 1);
    const std::unordered_set<LinkId> global(t.dragonfly()->global.begin(),
                                            t.dragonfly()->global.end());
    for (int s = 0; s < t.ranks(); ++s)
      for (int r = 0; r < t.ranks(); ++r) {
        const Route& m = minimal->route(s, r, 0);
        check_route(t, m, s, r);
        check_route(t, valiant->route(s, r, static_cast<uint64_t>(s)), s, r);
        int globals = 0;
        for (LinkId l : m.links) globals += static_cast<int>(global.count(l));
        CHECK(globals <= 1);
        CHECK(m.links.size() >= static_cast<std::size_t>(hop_distance(t, s, r)));
      }
    CHECK(bfs_diameter(t) <= closed_form_diameter(t).value());
  }
}

TEST_CASE("dragonfly local bundles: parallel cables per router pair, all used, all counted") {
  TopologyParams p = dragonfly(4, 2, 2, 5, 40, 2, 1);
  p.local_parallel_links = 3;
  const Topology t = build_topology(p);
  const DragonflyLayout& d = *t.dragonfly();
  // Copy c of a bundle joins the same two routers; 5 groups x 6 pairs x 3 cables.
  std::set<LinkId> locals;
  for (int R = 0; R < 20; ++R)
    for (int r2 = 0; r2 < 4; ++r2) {
      if (r2 == R % 4) continue;
      for (int c = 0; c < 3; ++c) {
        const Link& l = t.link(d.local_link(R, r2, c));
        CHECK(l.from == d.router[static_cast<std::size_t>(R)]);
        CHECK(l.to == d.router[static_cast<std::size_t>(R / 4 * 4 + r2)]);
        locals.insert(d.local_link(R, r2, c));
      }
    }
  CHECK(locals.size() == 5 * 6 * 3 * 2);  // directed
  const PriceTable prices = cs::topo::test::unit_prices();
  const TopologyReport r = make_report(t, p, prices);
  CHECK(cs::topo::test::count(r.links_by_kind, "local") == 5 * 6 * 3);
  // Designed router ports: p x NICs + (a - 1) x 3 + h = 2 + 9 + 2.
  CHECK(dragonfly_router_ports(p) == 13);
  CHECK(r.switch_ports == 20 * 13);
  // Every cable of a bundle carries some pair's route.
  auto router = make_router(t, RoutingKind::minimal, 1);
  std::set<LinkId> used;
  for (int s = 0; s < t.ranks(); ++s)
    for (int q = 0; q < t.ranks(); ++q)
      for (LinkId l : router->route(s, q, 0).links)
        if (locals.count(l)) used.insert(l);
  CHECK(used.size() == locals.size());
  // A router bought larger than its design is priced at its radix; smaller is an error.
  p.router_radix = 16;
  CHECK(make_report(t, p, prices).switch_ports == 20 * 16);
  p.router_radix = 12;
  CHECK(cs::topo::test::failing_param(p) == "switch_radix");
}
