// Torus: closed-form sizes, wrap-around rules, diameter sum of floor(d/2) by BFS,
// dimension-order routes valid and shortest for all pairs, errors.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "direct_helpers.hpp"

using namespace cs::topo;
using cs::topo::test::check_route;
using cs::topo::test::failing_param;
using cs::topo::test::hop_distance;
using cs::topo::test::switch_diameter;
using cs::topo::test::torus;

namespace {

// Switch-to-switch cables: a ring per line for sizes >= 3, one cable for size 2, none for 1.
int64_t expected_torus_cables(const std::vector<int>& dims) {
  int64_t n = 1;
  for (int d : dims) n *= d;
  int64_t cables = 0;
  for (int d : dims) cables += d >= 3 ? n : d == 2 ? n / 2 : 0;
  return cables;
}

const std::vector<std::vector<int>> kShapes = {
    {4, 4}, {3, 5}, {2, 3}, {1, 4}, {2, 2}, {1, 1}, {2, 2, 2}, {3, 4, 2}, {3, 1, 5}, {5, 5, 5}};

}  // namespace

TEST_CASE("torus closed forms: nodes, switches, cables, diameter by BFS") {
  for (const auto& dims : kShapes)
    for (int nics : {1, 2}) {
      INFO("dims " << dims.size() << "D " << dims[0] << "x" << dims[1] << " nics " << nics);
      const Topology t = build_topology(torus(dims, 2, nics));
      const TorusLayout& l = *t.torus();
      const int n = l.positions();
      CHECK(t.kind() == TopologyKind::torus);
      CHECK(t.nodes() == n);
      CHECK(t.num_fabric_switches() == static_cast<std::size_t>(n));
      CHECK(t.num_cables() ==
            static_cast<std::size_t>(4 * n + n * nics + expected_torus_cables(dims)));
      int expected_diameter = 0;
      for (int d : dims) expected_diameter += d / 2;
      CHECK(l.diameter_hops() == expected_diameter);
      CHECK(switch_diameter(t) == expected_diameter);
      // NICs of node i on the switch at position i; +1 links lead one step along d.
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < nics; ++j)
          CHECK(t.link(l.nic_up[static_cast<std::size_t>(i * nics + j)]).to ==
                l.sw[static_cast<std::size_t>(i)]);
        for (std::size_t d = 0; d < dims.size(); ++d) {
          const LinkId plus = l.plus[static_cast<std::size_t>(i) * dims.size() + d];
          if (dims[d] == 1) {
            CHECK(plus == TorusLayout::kNone);
            continue;
          }
          CHECK(t.link(plus).from == l.sw[static_cast<std::size_t>(i)]);
          CHECK(t.link(plus).to == l.sw[static_cast<std::size_t>(l.step(i, d, +1))]);
        }
      }
    }
}

TEST_CASE("torus names and coordinates") {
  const Topology t = build_topology(torus({3, 4, 2}));
  const TorusLayout& l = *t.torus();
  // Position 1 + 3 * (2 + 4 * 1) = 19 is (1, 2, 1).
  CHECK(t.vertex(l.sw[19]).name == "t1.2.1");
  CHECK(l.coord(19, 0) == 1);
  CHECK(l.coord(19, 1) == 2);
  CHECK(l.coord(19, 2) == 1);
  CHECK(l.step(19, 1, +1) == 1 + 3 * (3 + 4 * 1));
  CHECK(l.step(l.step(19, 1, +1), 1, +1) == 1 + 3 * (0 + 4 * 1));  // wraps
  CHECK(l.step(19, 2, +1) == 1 + 3 * 2);
  CHECK(t.find("t0.0.0"));
  const Topology flat = build_topology(torus({2, 3}));
  CHECK(flat.vertex(flat.torus()->sw[5]).name == "t1.2");
}

TEST_CASE("dor: valid and shortest for all pairs, shortest routing agrees in length") {
  std::vector<TopologyParams> cases;
  for (const auto& dims : kShapes)
    if (dims.size() == 2 || dims[0] * dims[1] * dims[2] <= 30) cases.push_back(torus(dims, 2, 1));
  cases.push_back(torus({4, 3}, 4, 2));
  TopologyParams pcie = torus({3, 3}, 2, 2);
  pcie.node.fabric = NodeFabric::pcie;
  cases.push_back(pcie);
  for (const TopologyParams& p : cases) {
    INFO("dims " << p.dims[0] << "x" << p.dims[1] << (p.dims.size() > 2 ? "x.." : ""));
    const Topology t = build_topology(p);
    auto dor = make_router(t, RoutingKind::dor, 1);
    auto shortest = make_router(t, RoutingKind::shortest, 1);
    for (int s = 0; s < t.ranks(); ++s)
      for (int d = 0; d < t.ranks(); ++d) {
        const Route& r = dor->route(s, d, 0);
        check_route(t, r, s, d);
        check_route(t, shortest->route(s, d, 0), s, d);
        const int hops = hop_distance(t, s, d);
        REQUIRE(static_cast<int>(r.links.size()) == hops);
        REQUIRE(static_cast<int>(shortest->route(s, d, 0).links.size()) == hops);
      }
  }
}

TEST_CASE("dor: dimension 0 first, ties the + way, size-2 dimensions over their one cable") {
  const Topology t = build_topology(torus({4, 4}, 1, 1));
  auto dor = make_router(t, RoutingKind::dor, 0);
  // (0,0) -> (2,3): two + steps in x (a tie), then one - step in y (0 -> 3 wraps).
  const int dst = 2 + 4 * 3;
  const Route& r = dor->route(0, dst, 0);
  std::vector<std::string> path;
  for (LinkId l : r.links)
    if (t.vertex(t.link(l).to).kind == VertexKind::fabric_switch)
      path.push_back(t.vertex(t.link(l).to).name);
  CHECK(path == std::vector<std::string>{"t0.0", "t1.0", "t2.0", "t2.3"});
  // (2,3) -> (0,0): the tie in x goes + too (2 -> 3 -> 0), then y 3 -> 0 the + way.
  path.clear();
  for (LinkId l : dor->route(dst, 0, 0).links)
    if (t.vertex(t.link(l).to).kind == VertexKind::fabric_switch)
      path.push_back(t.vertex(t.link(l).to).name);
  CHECK(path == std::vector<std::string>{"t2.3", "t3.3", "t0.3", "t0.0"});

  const Topology two = build_topology(torus({2, 2}, 1, 1));
  auto r2 = make_router(two, RoutingKind::dor, 0);
  const TorusLayout& l = *two.torus();
  CHECK(r2->route(1, 0, 0).links[2] == l.plus[1 * 2 + 0]);
  CHECK(l.plus[1 * 2 + 0] == reverse(l.plus[0 * 2 + 0]));  // one cable, both directions
}

TEST_CASE("torus errors name dims or nodes") {
  CHECK(failing_param(torus({4, 4})).empty());
  TopologyParams p = torus({4, 4});
  p.dims = {16};
  CHECK(failing_param(p) == "dims");
  p.dims = {2, 2, 2, 2};
  CHECK(failing_param(p) == "dims");
  p.dims = {};
  CHECK(failing_param(p) == "dims");
  p = torus({4, 4});
  p.dims = {4, 0};
  CHECK(failing_param(p) == "dims.1");
  p.dims = {-1, 4};
  CHECK(failing_param(p) == "dims.0");
  p = torus({4, 4});
  p.nodes = 15;
  CHECK(failing_param(p) == "nodes");
  p.dims = {65536, 65536, 2};
  CHECK(failing_param(p) == "dims");
  p = torus({4, 4});
  p.link_latency_s = -1;
  CHECK(failing_param(p) == "link_latency");
}

TEST_CASE("torus bundles per dimension: cables, copies, routes, ports") {
  // 4 x 4 x 3 with 2, 1 and 3 cables per neighbour pair along dimensions 0, 1, 2.
  TopologyParams p = torus({4, 4, 3}, 2, 2);
  p.dim_parallel_links = {2, 1, 3};
  const Topology t = build_topology(p);
  const TorusLayout& l = *t.torus();
  CHECK(l.parallel == std::vector<int>{2, 1, 3});
  const int n = 48;
  CHECK(t.num_cables() == static_cast<std::size_t>(4 * n + 2 * n + 2 * n + n + 3 * n));
  // Copy c of a bundle: the link 2c after its first, between the same two switches.
  for (int i = 0; i < n; ++i)
    for (std::size_t d = 0; d < 3; ++d)
      for (int c = 0; c < l.parallel[d]; ++c) {
        const Link& k = t.link(l.plus[static_cast<std::size_t>(i) * 3 + d] + 2 * static_cast<LinkId>(c));
        CHECK(k.from == l.sw[static_cast<std::size_t>(i)]);
        CHECK(k.to == l.sw[static_cast<std::size_t>(l.step(i, d, +1))]);
      }
  // DOR stays shortest and valid; the pairs spread over every copy.
  auto router = make_router(t, RoutingKind::dor, 0);
  std::vector<int> uses(t.num_links(), 0);
  for (int s = 0; s < t.ranks(); ++s)
    for (int d = 0; d < t.ranks(); ++d) {
      const Route& r = router->route(s, d, 0);
      check_route(t, r, s, d);
      REQUIRE(static_cast<int>(r.links.size()) == hop_distance(t, s, d));
      for (LinkId k : r.links) ++uses[k];
    }
  for (int i = 0; i < n; ++i)
    for (std::size_t d = 0; d < 3; ++d)
      for (int c = 0; c < l.parallel[d]; ++c)
        CHECK(uses[l.plus[static_cast<std::size_t>(i) * 3 + d] + 2 * static_cast<LinkId>(c)] > 0);
  // Designed ports: 2 NICs + 2 x 2 + 2 x 1 + 2 x 3.
  CHECK(torus_switch_ports(p) == 2 + 4 + 2 + 6);
  // One number bundles every dimension; a list must name each.
  p.dim_parallel_links = {2};
  CHECK(build_topology(p).num_cables() == static_cast<std::size_t>(4 * n + 2 * n + 2 * 3 * n));
  p.dim_parallel_links = {2, 2};
  CHECK(failing_param(p) == "parallel_links");
  p.dim_parallel_links = {2, 0, 1};
  CHECK(failing_param(p) == "parallel_links.1");
  // A dimension of size 2 has one bundle between its two positions, used both ways.
  TopologyParams two = torus({2, 3}, 1, 1);
  two.dim_parallel_links = {3};
  const Topology t2 = build_topology(two);
  CHECK(t2.num_cables() == static_cast<std::size_t>(2 * 6 + 6 + 3 * 3 + 3 * 6));
  auto r2 = make_router(t2, RoutingKind::dor, 0);
  for (int s = 0; s < t2.ranks(); ++s)
    for (int d = 0; d < t2.ranks(); ++d) {
      check_route(t2, r2->route(s, d, 0), s, d);
      REQUIRE(static_cast<int>(r2->route(s, d, 0).links.size()) == hop_distance(t2, s, d));
    }
}

TEST_CASE("multislice: tori joined by a DCN switch; dor stays in a slice, crosses slices by the DCN") {
  TopologyParams p = torus({4, 4}, 1, 1);
  p.slices = 3;
  p.nodes = 48;
  p.dcn_bandwidth_Bps = 6.25e9;
  const Topology t = build_topology(p);
  const TorusLayout& l = *t.torus();
  CHECK(l.positions() == 48);
  CHECK(l.slice_positions() == 16);
  CHECK(t.num_fabric_switches() == 48 + 1);
  CHECK(t.num_cables() == static_cast<std::size_t>(2 * 48 + 48 + 3 * expected_torus_cables({4, 4}) + 48));
  CHECK(t.vertex(l.sw[16 + 5]).name == "s1.t1.1");
  CHECK(l.step(16 + 3, 0, +1) == 16);  // wraps inside slice 1
  CHECK(l.diameter_hops() == 4);  // dor's longest: two hops each way inside a slice
  CHECK(switch_diameter(t) == 2);  // every switch is 2 hops from any other through the DCN switch
  auto dor = make_router(t, RoutingKind::dor, 0);
  for (int s = 0; s < t.ranks(); ++s)
    for (int d = 0; d < t.ranks(); ++d) check_route(t, dor->route(s, d, 0), s, d);
  // Slice 0 position 5 to slice 2 position 6: up to the DCN and down, no ICI hop.
  std::vector<std::string> path;
  for (LinkId link : dor->route(5, 32 + 6, 0).links)
    if (t.vertex(t.link(link).to).kind == VertexKind::fabric_switch) path.push_back(t.vertex(t.link(link).to).name);
  CHECK(path == std::vector<std::string>{"s0.t1.1", "dcn", "s2.t2.1"});
  CHECK(t.link(l.dcn_up[5]).bandwidth_Bps == 6.25e9);
}
