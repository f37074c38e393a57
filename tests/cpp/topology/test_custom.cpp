// Custom fabrics: names, sizes, shortest routes with the transit rule, unreachable pairs.
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "topology/reachability.hpp"
#include "topology/routing.hpp"

using namespace cs::topo;
using cs::topo::test::check_route;
using cs::topo::test::hop_distance;

namespace {

// Two nodes of 4 GPUs and 2 NICs; NIC j of each node on switch swj; sw0 - sw1.
//   n0.0 - sw0 - n1.0,   n0.1 - sw1 - n1.1,   sw0 - sw1
TopologyParams two_rails(NodeFabric fabric = NodeFabric::nvswitch) {
  TopologyParams p;
  p.kind = TopologyKind::custom;
  p.nodes = 2;
  p.node.gpus = 4;
  p.node.nics = 2;
  p.node.fabric = fabric;
  p.switches = {"sw0", "sw1"};
  p.links = {{"n0.0", "sw0", 25e9, 1e-6},
             {"n0.1", "sw1", 25e9, 1e-6},
             {"n1.0", "sw0", 25e9, 1e-6},
             {"n1.1", "sw1", 25e9, 1e-6},
             {"sw0", "sw1", 100e9, 2e-6}};
  return p;
}

}  // namespace

TEST_CASE("custom: sizes, names and link parameters") {
  const Topology t = build_topology(two_rails());
  // Vertices 2 * (4 + 2 + 1) + 2 = 16; cables 2 * (4 + 4) node-internal + 5 = 21.
  CHECK(t.num_vertices() == 16);
  CHECK(t.num_cables() == 21);
  CHECK(t.kind() == TopologyKind::custom);
  CHECK(t.fat_tree() == nullptr);
  CHECK(t.num_fabric_switches() == 2);
  const VertexId sw1 = *t.find("sw1");
  CHECK(t.vertex(sw1).kind == VertexKind::fabric_switch);
  CHECK(t.vertex(sw1).tier == 1);
  CHECK(t.vertex(sw1).index == 1);
  const auto l = t.find_link(*t.find("n1.1"), sw1);
  REQUIRE(l);
  CHECK(t.link(*l).bandwidth_Bps == 25e9);
  CHECK(t.link(*l).latency_s == 1e-6);
  CHECK(t.link(*l).kind == LinkKind::fabric);
  CHECK(t.link(reverse(*l)).from == sw1);
  const auto core = t.find_link(*t.find("sw0"), sw1);
  REQUIRE(core);
  CHECK(t.link(*core).bandwidth_Bps == 100e9);
}

TEST_CASE("custom: shortest routes, closed form and exhaustive") {
  const Topology t = build_topology(two_rails());
  auto r = make_router(t, RoutingKind::shortest, 0);
  // n0.gpu0 (NIC n0.0) -> n1.gpu0 (NIC n1.0): GPU-n0.0-sw0-n1.0-GPU, 4 links,
  // 0.5 + 1 + 1 + 0.5 us.
  const Route& same_rail = r->route(0, 4, 0);
  CHECK(same_rail.links.size() == 4);
  CHECK(same_rail.latency_s == Approx(3e-6));
  CHECK(t.link(same_rail.links[1]).to == *t.find("sw0"));
  // n0.gpu0 -> n1.gpu3 (NIC n1.1): GPU-n0.0-sw0-sw1-n1.1-GPU, 5 links. Going through
  // n0.gpu2 to reach n0.1 is not allowed (GPUs do not forward).
  const Route& cross = r->route(0, 7, 0);
  CHECK(cross.links.size() == 5);
  CHECK(cross.latency_s == Approx(0.5e-6 + 1e-6 + 2e-6 + 1e-6 + 0.5e-6));
  for (int s = 0; s < t.ranks(); ++s)
    for (int d = 0; d < t.ranks(); ++d) {
      const Route& route = r->route(s, d, 0);
      check_route(t, route, s, d);
      CHECK(static_cast<int>(route.links.size()) == hop_distance(t, s, d));
    }
}

TEST_CASE("custom: pcie nodes may leave through any NIC of the host") {
  const Topology t = build_topology(two_rails(NodeFabric::pcie));
  auto r = make_router(t, RoutingKind::shortest, 0);
  // GPU-host-NIC-sw-NIC-host-GPU: 6 links whatever the pair, never through sw0-sw1.
  for (int s = 0; s < 4; ++s)
    for (int d = 4; d < 8; ++d) {
      const Route& route = r->route(s, d, 0);
      check_route(t, route, s, d);
      CHECK(route.links.size() == 6);
      CHECK(static_cast<int>(route.links.size()) == hop_distance(t, s, d));
    }
}

TEST_CASE("custom: single-NIC nodes are named n<i>, a chain of switches") {
  TopologyParams p;
  p.kind = TopologyKind::custom;
  p.nodes = 3;
  p.node.gpus = 2;
  p.node.nics = 1;
  p.switches = {"a", "b", "c"};
  // n0 - a - b - c - n2, and n1 - b.
  p.links = {{"n0", "a", 50e9, 0}, {"a", "b", 50e9, 0}, {"b", "c", 50e9, 0},
             {"c", "n2", 50e9, 0}, {"n1", "b", 50e9, 0}};
  const Topology t = build_topology(p);
  auto r = make_router(t, RoutingKind::shortest, 0);
  // n0.gpu0 -> n2.gpu1: GPU-n0-a-b-c-n2-GPU = 6 links.
  CHECK(r->route(0, 5, 0).links.size() == 6);
  // n1.gpu0 -> n0.gpu0: GPU-n1-b-a-n0-GPU = 5 links.
  CHECK(r->route(2, 0, 0).links.size() == 5);
  for (int s = 0; s < t.ranks(); ++s)
    for (int d = 0; d < t.ranks(); ++d) check_route(t, r->route(s, d, 0), s, d);
}

TEST_CASE("custom: an unconnected node is unreachable, with both GPUs named") {
  TopologyParams p = two_rails();
  p.nodes = 3;  // n2 has no fabric links
  const Topology t = build_topology(p);
  auto r = make_router(t, RoutingKind::shortest, 0);
  CHECK(r->route(0, 4, 0).links.size() == 4);
  CHECK_THROWS_AS(r->route(0, 8, 0), RouteError);
  CHECK_THROWS_WITH(r->route(1, 9, 0), Catch::Contains("n0.gpu1") && Catch::Contains("n2.gpu1"));
  // Inside n2 routing still works; and the failed search left the router usable.
  CHECK(r->route(8, 11, 0).links.size() == 2);
  CHECK(r->route(4, 3, 0).links.size() == 5);
  CHECK_THROWS_AS(make_router(t, RoutingKind::dmodk, 0), std::invalid_argument);
}

TEST_CASE("node reachability: through switches, or a direct NIC cable; a NIC never forwards", "[custom][reach]") {
  // n0 - n1 - n2 as NIC-to-NIC cables, and n3, n4 on switch s (s - t - n5 through a second
  // switch): n0 reaches n1 but not n2; n3, n4, n5 reach each other; nothing joins the groups.
  cs::topo::TopologyParams p;
  p.kind = cs::topo::TopologyKind::custom;
  p.nodes = 6;
  p.node.gpus = 1;
  p.node.nics = 1;
  p.switches = {"s", "t"};
  for (auto [a, b] : std::vector<std::pair<const char*, const char*>>{
           {"n0", "n1"}, {"n1", "n2"}, {"n3", "s"}, {"n4", "s"}, {"s", "t"}, {"t", "n5"}})
    p.links.push_back({a, b, 1e9, 1e-6});
  const cs::topo::Topology t = cs::topo::build_topology(p);
  const cs::topo::NodeReachability reach(t);
  CHECK(reach.connected(0, 1));
  CHECK(reach.connected(1, 2));
  CHECK_FALSE(reach.connected(0, 2));
  CHECK(reach.connected(3, 5));
  CHECK_FALSE(reach.connected(2, 3));
  int a = -1, b = -1;
  CHECK(reach.all_connected({3, 4, 5}));
  CHECK_FALSE(reach.all_connected({0, 1, 2}, &a, &b));
  CHECK(a == 0);
  CHECK(b == 2);
  // The routes agree: shortest routing finds n0 -> n1 and n3 -> n5, and none for n0 -> n2.
  auto router = cs::topo::make_router(t, cs::topo::RoutingKind::shortest, 1);
  CHECK_FALSE(router->route(0, 1, 0).links.empty());
  CHECK_FALSE(router->route(3, 5, 0).links.empty());
  CHECK_THROWS_AS(router->route(0, 2, 0), cs::topo::RouteError);
}
