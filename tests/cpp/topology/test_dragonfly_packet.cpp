// Valiant per packet on dragonflies: a route is g - 2 lanes, one Valiant path through each
// intermediate group on the pair's fixed cables, minimal inside a group, and every lane live
// on a degraded fabric.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <vector>

#include "direct_helpers.hpp"

using namespace cs::topo;

namespace {

void finish_lane(const Topology& t, Route& lane) {
  for (LinkId l : lane.links) lane.latency_s += t.link(l).latency_s;
}

// A route's lanes: the paths it lists one after another, each from the source GPU.
std::vector<Route> lanes_of(const Topology& t, const Route& r, int src) {
  std::vector<Route> lanes;
  for (LinkId l : r.links) {
    if (t.link(l).from == t.gpu(src)) lanes.emplace_back();
    lanes.back().links.push_back(l);
  }
  for (Route& lane : lanes) finish_lane(t, lane);
  return lanes;
}

// The global cables a lane crosses, in order.
std::vector<LinkId> globals_of(const Topology& t, const Route& lane) {
  const DragonflyLayout& d = *t.dragonfly();
  std::vector<LinkId> out;
  for (LinkId l : lane.links)
    if (std::find(d.global.begin(), d.global.end(), l) != d.global.end()) out.push_back(l);
  return out;
}

// Every lane of every pair from `src`: a whole route, and no failed cable.
void check_packet_routes(const Topology& t, int src, int lanes) {
  auto router = make_router(t, RoutingKind::valiant_packet, 7);
  REQUIRE(router->lanes() == lanes);
  for (int dst = 0; dst < t.ranks(); ++dst) {
    if (dst == src) continue;
    const Route& r = router->route(src, dst, 0);
    const std::vector<Route> per_lane = lanes_of(t, r, src);
    REQUIRE(static_cast<int>(per_lane.size()) == lanes);
    double slowest = 0;
    for (const Route& lane : per_lane) {
      cs::topo::test::check_route(t, lane, src, dst);
      for (LinkId l : lane.links) REQUIRE_FALSE(t.failed(l));
      slowest = std::max(slowest, lane.latency_s);
    }
    CHECK(r.latency_s == Approx(slowest).epsilon(1e-12));
    Route into;
    REQUIRE(router->route_into(src, dst, 0, into));
    CHECK(into.links == r.links);
  }
}

}  // namespace

TEST_CASE("valiant_packet: one lane through every intermediate group", "[routing][dragonfly][valiant_packet]") {
  // a=4, p=2, h=2, g=9: one global cable per group pair, 8 nodes of 2 GPUs per group.
  const Topology t = build_topology(cs::topo::test::dragonfly(4, 2, 2, 9, 72));
  const DragonflyLayout& d = *t.dragonfly();
  auto router = make_router(t, RoutingKind::valiant_packet, 1);
  REQUIRE(router->lanes() == 7);
  const int per_group = t.ranks() / d.groups;
  SECTION("between groups: 7 Valiant paths, each intermediate group once") {
    const int src = 3, dst = 5 * per_group + 9;
    const std::vector<Route> lanes = lanes_of(t, router->route(src, dst, 0), src);
    REQUIRE(lanes.size() == 7);
    std::set<int> via;
    for (const Route& lane : lanes) {
      const std::vector<LinkId> g = globals_of(t, lane);
      REQUIRE(g.size() == 2);
      const int first = d.group_of_router(t.vertex(t.link(g[0]).to).index);
      CHECK(d.group_of_router(t.vertex(t.link(g[0]).from).index) == 0);
      CHECK(d.group_of_router(t.vertex(t.link(g[1]).from).index) == first);
      CHECK(d.group_of_router(t.vertex(t.link(g[1]).to).index) == 5);
      via.insert(first);
    }
    CHECK(via == std::set<int>{1, 2, 3, 4, 6, 7, 8});
  }
  SECTION("inside a group: every lane the minimal route") {
    auto minimal = make_router(t, RoutingKind::minimal, 1);
    const int src = 0, dst = 12;
    const std::vector<Route> lanes = lanes_of(t, router->route(src, dst, 0), src);
    REQUIRE(lanes.size() == 7);
    for (const Route& lane : lanes) CHECK(lane.links == minimal->route(src, dst, 0).links);
  }
  SECTION("every pair from a rank: whole lanes, route_into alike") { check_packet_routes(t, 3, 7); }
  SECTION("two groups: one lane, the minimal route") {
    const Topology two = build_topology(cs::topo::test::dragonfly(2, 1, 1, 2, 4));
    auto packet = make_router(two, RoutingKind::valiant_packet, 1);
    CHECK(packet->lanes() == 1);
    CHECK(packet->route(0, 7, 0).links == make_router(two, RoutingKind::minimal, 1)->route(0, 7, 0).links);
  }
}

TEST_CASE("valiant_packet routes every lane around a dead global cable", "[routing][dragonfly][valiant_packet][failures]") {
  TopologyParams p = cs::topo::test::dragonfly(4, 2, 2, 9, 72);
  const Topology intact = build_topology(p);
  const Link& global = intact.link(intact.dragonfly()->global_link(0, 2, 0));
  p.failed.links = {{intact.vertex(global.from).name, intact.vertex(global.to).name, 0}};
  const Topology t = build_topology(p);
  REQUIRE(t.num_failed_cables() == 1);
  check_packet_routes(t, 3, 7);
}
