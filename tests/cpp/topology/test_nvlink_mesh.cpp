// nvlink_mesh nodes: direct GPU-GPU cables (full mesh, DGX-1 hybrid cube-mesh), their
// bandwidth split, and routes inside and across such nodes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <utility>

#include "helpers.hpp"

using namespace cs::topo;
using cs::topo::test::check_all_pairs;
using cs::topo::test::check_route;
using cs::topo::test::fat_tree;

namespace {

TopologyParams mesh_node(int gpus, int nics, NodeMesh mesh = NodeMesh::full) {
  TopologyParams p;
  p.kind = TopologyKind::single_node;
  p.node.fabric = NodeFabric::nvlink_mesh;
  p.node.mesh = mesh;
  p.node.gpus = gpus;
  p.node.nics = nics;
  p.node.gpu_bandwidth_Bps = 150e9;
  return p;
}

// Sum of the NVLink bandwidth leaving a GPU.
double nvlink_out(const Topology& t, VertexId gpu) {
  double sum = 0;
  for (LinkId l : t.out_links(gpu))
    if (t.link(l).kind == LinkKind::node_fabric) sum += t.link(l).bandwidth_Bps;
  return sum;
}

}  // namespace

TEST_CASE("nvlink_mesh full: every GPU pair cabled, gpu_bandwidth split over gpus-1 cables") {
  const Topology t = build_topology(mesh_node(4, 4));
  // 4 GPUs + 4 NICs, no node switch; 6 NVLink cables + 4 PCIe cables.
  CHECK(t.num_vertices() == 8);
  CHECK(t.num_cables() == 10);
  CHECK_FALSE(t.has_node_switch());
  CHECK(t.node_fabric() == NodeFabric::nvlink_mesh);
  CHECK_FALSE(t.find("n0.nvswitch"));
  for (int a = 0; a < 4; ++a) {
    CHECK(nvlink_out(t, t.gpu(a)) == Approx(150e9));
    for (int b = 0; b < 4; ++b) {
      if (a == b) continue;
      const auto l = t.find_link(t.gpu(a), t.gpu(b));
      REQUIRE(l);
      CHECK(t.link(*l).bandwidth_Bps == Approx(50e9));
      CHECK(t.link(*l).kind == LinkKind::node_fabric);
    }
    CHECK(t.find_link(t.gpu(a), t.nic(0, a)));  // GPU-NIC stays the PCIe cable
  }
  auto r = make_router(t, RoutingKind::shortest, 0);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      const Route& route = r->route(a, b, 0);
      check_route(t, route, a, b);
      if (a != b) {
        CHECK(route.links.size() == 1);
        CHECK(route.latency_s == Approx(0.7e-6));
      }
    }
}

TEST_CASE("nvlink_mesh hybrid_cube: the DGX-1V layout, neighbours 1 hop, others 2") {
  const Topology t = build_topology(mesh_node(8, 4, NodeMesh::hybrid_cube));
  // 8 GPUs + 4 NICs; 16 NVLink cables + 8 PCIe cables.
  CHECK(t.num_vertices() == 12);
  CHECK(t.num_cables() == 24);
  const std::set<std::pair<int, int>> neighbours = {
      {0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}, {4, 5}, {4, 6},
      {4, 7}, {5, 6}, {5, 7}, {6, 7}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
  const std::set<std::pair<int, int>> doubled = {{0, 3}, {1, 2}, {2, 3}, {4, 7},
                                                 {5, 6}, {6, 7}, {0, 4}, {1, 5}};
  for (int g = 0; g < 8; ++g) {
    // 6 NVLinks of 150/6 = 25 GB/s each, over 4 neighbours.
    CHECK(nvlink_out(t, t.gpu(g)) == Approx(150e9));
    int degree = 0;
    for (LinkId l : t.out_links(t.gpu(g))) degree += t.link(l).kind == LinkKind::node_fabric;
    CHECK(degree == 4);
  }
  auto r = make_router(t, RoutingKind::shortest, 0);
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) {
      if (a == b) continue;
      const std::pair<int, int> key{std::min(a, b), std::max(a, b)};
      const auto direct = t.find_link(t.gpu(a), t.gpu(b));
      CHECK(direct.has_value() == (neighbours.count(key) == 1));
      if (direct)
        CHECK(t.link(*direct).bandwidth_Bps == Approx(doubled.count(key) ? 50e9 : 25e9));
      const Route& route = r->route(a, b, 0);
      check_route(t, route, a, b);
      REQUIRE(route.links.size() == (direct ? 1u : 2u));
      if (!direct) {
        // The one GPU that forwards: a neighbour of both ends.
        const Vertex& via = t.vertex(t.link(route.links[0]).to);
        CHECK(via.kind == VertexKind::gpu);
        CHECK(via.node == 0);
      }
    }
}

TEST_CASE("nvlink_mesh nodes in a fat-tree: routes valid and minimal, GPU-NIC over PCIe") {
  TopologyParams p = fat_tree(3, 8, 4, 8);
  p.node.fabric = NodeFabric::nvlink_mesh;
  p.node.mesh = NodeMesh::hybrid_cube;
  const Topology t = build_topology(p);
  // Per node: 8 GPUs + 4 NICs, 16 + 8 cables.
  CHECK(t.num_vertices() == 3 * 12 + t.num_fabric_switches());
  for (RoutingKind kind : {RoutingKind::dmodk, RoutingKind::ecmp, RoutingKind::shortest})
    check_all_pairs(t, kind);
  // Across nodes no GPU forwards: rank 0 -> rank 8 leaves over GPU 0's PCIe cable.
  auto r = make_router(t, RoutingKind::dmodk, 0);
  const Route& across = r->route(0, 8, 0);
  CHECK(t.link(across.links[0]).kind == LinkKind::pcie);
  CHECK(t.link(across.links[0]).to == t.nic(0, 0));

  TopologyParams full = fat_tree(2, 4, 2, 4);
  full.node.fabric = NodeFabric::nvlink_mesh;
  check_all_pairs(build_topology(full), RoutingKind::dmodk);
}

TEST_CASE("nvlink_mesh errors: hybrid_cube needs 8 GPUs") {
  for (int gpus : {4, 16}) {
    try {
      build_topology(mesh_node(gpus, 1, NodeMesh::hybrid_cube));
      FAIL("no error for " << gpus << " GPUs");
    } catch (const BuildError& e) {
      CHECK(e.param() == "node.mesh");
      CHECK_THAT(e.what(), Catch::Contains("8-GPU"));
    }
  }
  CHECK_NOTHROW(build_topology(mesh_node(1, 1)));  // one GPU: no NVLink at all
}

TEST_CASE("nvlink_mesh torus_4x4 (trn1/trn2): 4 links per chip, the farthest chip 4 hops away") {
  const Topology t = build_topology(mesh_node(16, 1, NodeMesh::torus_4x4));
  CHECK(t.num_cables() == 32 + 16);  // 2 NeuronLink cables per chip + one PCIe cable each
  auto r = make_router(t, RoutingKind::shortest, 0);
  for (int a = 0; a < 16; ++a) {
    CHECK(nvlink_out(t, t.gpu(a)) == Approx(150e9));
    for (int b = 0; b < 16; ++b) {
      if (a == b) continue;
      const Route& route = r->route(a, b, 0);
      check_route(t, route, a, b);
      // Hops on a 4-ring: min(d, 4 - d) per dimension.
      const int dr = std::abs(a / 4 - b / 4), dc = std::abs(a % 4 - b % 4);
      CHECK(static_cast<int>(route.links.size()) == std::min(dr, 4 - dr) + std::min(dc, 4 - dc));
    }
  }
  CHECK_THROWS_WITH(build_topology(mesh_node(8, 1, NodeMesh::torus_4x4)),
                    Catch::Contains("torus_4x4 is a 16-chip node"));
}

TEST_CASE("nvlink_mesh ring (inf2): 2 links per chip, the opposite chip gpus/2 hops away") {
  const Topology t = build_topology(mesh_node(12, 1, NodeMesh::ring));
  CHECK(t.num_cables() == 12 + 12);
  auto r = make_router(t, RoutingKind::shortest, 0);
  for (int a = 0; a < 12; ++a) CHECK(nvlink_out(t, t.gpu(a)) == Approx(150e9));
  CHECK(r->route(0, 1, 0).links.size() == 1);
  CHECK(r->route(0, 11, 0).links.size() == 1);
  CHECK(r->route(0, 6, 0).links.size() == 6);
  const Topology pair = build_topology(mesh_node(2, 1, NodeMesh::ring));
  CHECK(nvlink_out(pair, pair.gpu(0)) == Approx(150e9));  // one cable carrying both links
}
