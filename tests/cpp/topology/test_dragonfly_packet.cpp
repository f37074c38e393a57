// Valiant and UGAL per packet on dragonflies: a valiant_packet route is g - 2 lanes, one
// Valiant path through each intermediate group on the pair's fixed cables, minimal inside a
// group; a ugal_packet route 4 (g - 2) lanes, each part of the flow minimal or spread as
// valiant_packet's; every lane live on a degraded fabric.
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

// Every lane of every pair from `src` under `router`: a whole route, and no failed cable.
void check_packet_routes(const Topology& t, Router& router, RoutingKind kind, int src, int lanes) {
  REQUIRE(router.lanes() == lanes);
  for (int dst = 0; dst < t.ranks(); ++dst) {
    if (dst == src) continue;
    const Route& r = router.route(src, dst, 0);
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
    const bool computed = router.route_into(src, dst, 0, into);
    REQUIRE(computed == computes_routes_uncached(kind));
    if (computed) CHECK(into.links == r.links);
  }
}
void check_packet_routes(const Topology& t, int src, int lanes) {
  auto router = make_router(t, RoutingKind::valiant_packet, 7);
  check_packet_routes(t, *router, RoutingKind::valiant_packet, src, lanes);
}

// The a=4, p=2, h=2, g=9 dragonfly with its global cable from group 0 to group 2 down.
Topology without_cable_0_2() {
  TopologyParams p = cs::topo::test::dragonfly(4, 2, 2, 9, 72);
  const Topology intact = build_topology(p);
  const Link& global = intact.link(intact.dragonfly()->global_link(0, 2, 0));
  p.failed.links = {{intact.vertex(global.from).name, intact.vertex(global.to).name, 0}};
  return build_topology(p);
}

// The group of the router a lane's first global cable reaches (-1: none).
int first_via(const Topology& t, const Route& lane) {
  const std::vector<LinkId> g = globals_of(t, lane);
  return g.empty() ? -1 : t.dragonfly()->group_of_router(t.vertex(t.link(g[0]).to).index);
}

// A load oracle with `lanes` on every global cable from group u to group u + 1 (a group
// shift's minimal routes) and nothing elsewhere.
Router::LoadOracle shift_load(const Topology& t, uint32_t lanes) {
  const DragonflyLayout& d = *t.dragonfly();
  return [&t, &d, lanes](LinkId l) -> uint32_t {
    if (std::find(d.global.begin(), d.global.end(), l) == d.global.end()) return 0;
    const int from = d.group_of_router(t.vertex(t.link(l).from).index), to = d.group_of_router(t.vertex(t.link(l).to).index);
    return to == (from + 1) % d.groups ? lanes : 0;
  };
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
  const Topology t = without_cable_0_2();
  REQUIRE(t.num_failed_cables() == 1);
  check_packet_routes(t, 3, 7);
}

TEST_CASE("ugal_packet: parts minimal on an idle fabric, round where the minimal cable is busy", "[routing][dragonfly][ugal_packet]") {
  const Topology t = build_topology(cs::topo::test::dragonfly(4, 2, 2, 9, 72));
  const int per_group = t.ranks() / t.dragonfly()->groups;
  auto router = make_router(t, RoutingKind::ugal_packet, 1);
  auto minimal = make_router(t, RoutingKind::minimal, 1);
  REQUIRE(router->lanes() == 28);  // 4 parts x 7 intermediate groups
  const int src = 3, next = per_group + 9, far = 5 * per_group + 9;
  const auto all_minimal = [&](int dst) {
    const std::vector<Route> lanes = lanes_of(t, router->route(src, dst, 0), src);
    REQUIRE(lanes.size() == 28);
    for (const Route& lane : lanes)
      if (lane.links != minimal->route(src, dst, 0).links) return false;
    return true;
  };
  SECTION("no oracle, or an idle fabric: every lane minimal") {
    CHECK(all_minimal(next));
    router->set_load_oracle([](LinkId) { return 0u; });
    CHECK(all_minimal(next));
    CHECK(all_minimal(far));
  }
  SECTION("the minimal cable busy: parts spread evenly over the 7 intermediate groups") {
    router->set_load_oracle(shift_load(t, 1000));
    const std::vector<Route> lanes = lanes_of(t, router->route(src, next, 0), src);
    REQUIRE(lanes.size() == 28);
    std::vector<int> through(9, 0);
    int direct = 0;
    for (const Route& lane : lanes) {
      cs::topo::test::check_route(t, lane, src, next);
      const int via = first_via(t, lane);
      if (via == 1) ++direct;
      else ++through[static_cast<std::size_t>(via)];
    }
    CHECK(direct == 0);  // its minimal cable 1000 lanes deep: every part round
    for (int via : {2, 3, 4, 5, 6, 7, 8}) CHECK(through[static_cast<std::size_t>(via)] == 4);
    // Toward group 5 the detour through group 4 crosses a busy cable too: every part minimal.
    CHECK(all_minimal(far));
    // The same choice computed uncached.
    Route chosen;
    REQUIRE(router->choose_into(src, next, 0, chosen));
    CHECK(chosen.links == router->route(src, next, 0).links);
  }
  SECTION("inside a group: every lane minimal, whatever the load") {
    router->set_load_oracle(shift_load(t, 1000));
    CHECK(all_minimal(12));
  }
}

TEST_CASE("route_lanes gives the routers' lanes from the parameters", "[routing][dragonfly][ugal_packet]") {
  for (const int groups : {2, 3, 9}) {
    const TopologyParams p = cs::topo::test::dragonfly(4, 2, 2, groups, 8 * groups);
    const Topology t = build_topology(p);
    for (const RoutingKind kind : {RoutingKind::minimal, RoutingKind::ugal, RoutingKind::valiant_packet, RoutingKind::ugal_packet})
      CHECK(route_lanes(p, kind) == make_router(t, kind, 1)->lanes());
  }
  CHECK(route_lanes(cs::topo::test::dragonfly(4, 2, 2, 9, 72), RoutingKind::ugal_packet) == 28);
}

TEST_CASE("ugal_packet routes every lane around a dead global cable", "[routing][dragonfly][ugal_packet][failures]") {
  const Topology t = without_cable_0_2();
  auto router = make_router(t, RoutingKind::ugal_packet, 7);
  check_packet_routes(t, *router, RoutingKind::ugal_packet, 3, 28);  // no oracle: minimal
  router->set_load_oracle(shift_load(t, 1000));  // to group 1 every part round, one lane via group 2
  check_packet_routes(t, *router, RoutingKind::ugal_packet, 3, 28);
  // The dead cable is on one of the detour's 7 lanes only: the parts still go round (each
  // through groups 3-8 as on the intact fabric; the lane via group 2 repaired), not all
  // minimal as when one dead cable counted against the whole detour.
  const int per_group = t.ranks() / t.dragonfly()->groups, next = per_group + 9;
  std::vector<int> through(9, 0);
  for (const Route& lane : lanes_of(t, router->route(3, next, 0), 3)) {
    const int via = first_via(t, lane);
    if (via >= 0) ++through[static_cast<std::size_t>(via)];
  }
  CHECK(through[1] == 4);  // the 4 repaired lanes, on the live minimal cable
  for (int via : {3, 4, 5, 6, 7, 8}) CHECK(through[static_cast<std::size_t>(via)] == 4);
}
