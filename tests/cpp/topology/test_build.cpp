// Closed-form sizes of the built topologies, names, placement and Boost.Graph sync.
#include <catch2/catch.hpp>

#include <boost/graph/graph_traits.hpp>

#include "topology/boost_graph.hpp"

#include "helpers.hpp"

using namespace cs::topo;
using cs::topo::test::fat_tree;

namespace {

std::size_t count_kind(const Topology& t, VertexKind kind) {
  std::size_t n = 0;
  for (VertexId v = 0; v < t.num_vertices(); ++v) n += t.vertex(v).kind == kind;
  return n;
}

// Every vertex's Boost out-edges are its out_links, in the same order.
void check_graph_in_sync(const Topology& t) {
  const auto graph = cs::topo::detail::boost_graph(t);
  const cs::topo::detail::Graph& g = *graph;
  REQUIRE(boost::num_vertices(g) == t.num_vertices());
  REQUIRE(boost::num_edges(g) == t.num_links());
  for (VertexId v = 0; v < t.num_vertices(); ++v) {
    auto links = t.out_links(v);
    std::size_t i = 0;
    for (auto [it, end] = boost::out_edges(v, g); it != end; ++it, ++i) {
      REQUIRE(i < links.size());
      const LinkId l = boost::get(boost::edge_index, g, *it);
      REQUIRE(l == links[i]);
      REQUIRE(boost::target(*it, g) == t.link(l).to);
      REQUIRE(t.link(l).from == v);
    }
    REQUIRE(i == links.size());
  }
  for (LinkId l = 0; l < t.num_links(); ++l) {
    REQUIRE(t.link(reverse(l)).from == t.link(l).to);
    REQUIRE(t.link(reverse(l)).to == t.link(l).from);
  }
}

}  // namespace

TEST_CASE("single_node nvswitch: 8 GPUs, 8 NICs") {
  TopologyParams p;
  p.kind = TopologyKind::single_node;
  const Topology t = build_topology(p);
  // 8 GPUs + 8 NICs + 1 NVSwitch = 17 vertices; 8 GPU-NVSwitch + 8 GPU-NIC = 16 cables.
  CHECK(t.num_vertices() == 17);
  CHECK(t.num_cables() == 16);
  CHECK(t.num_links() == 32);
  CHECK(t.num_fabric_switches() == 0);
  CHECK(t.ranks() == 8);
  CHECK(t.fat_tree() == nullptr);
  CHECK(t.kind() == TopologyKind::single_node);
  CHECK(t.vertex(t.gpu(5)).name == "n0.gpu5");
  CHECK(t.vertex(t.nic(0, 3)).name == "n0.3");
  CHECK(t.vertex(t.node_switch(0)).name == "n0.nvswitch");
  CHECK(t.find("n0.gpu7") == t.gpu(7));
  CHECK_FALSE(t.find("n1.gpu0"));
  // GPU out-links: [NVSwitch (node_fabric), affine NIC (pcie)].
  const auto out = t.out_links(t.gpu(2));
  REQUIRE(out.size() == 2);
  CHECK(t.link(out[0]).to == t.node_switch(0));
  CHECK(t.link(out[0]).kind == LinkKind::node_fabric);
  CHECK(t.link(out[0]).bandwidth_Bps == 450e9);
  CHECK(t.link(out[1]).to == t.nic(0, 2));
  CHECK(t.link(out[1]).kind == LinkKind::pcie);
  CHECK(t.link(out[1]).bandwidth_Bps == 64e9);
  check_graph_in_sync(t);
}

TEST_CASE("single_node: GPUs share NICs by affinity floor(j * nics / gpus)") {
  TopologyParams p;
  p.kind = TopologyKind::single_node;
  p.node.gpus = 8;
  p.node.nics = 3;
  const Topology t = build_topology(p);
  // Affinity: GPUs 0-2 -> NIC 0, 3-5 -> NIC 1, 6-7 -> NIC 2.
  const int expected[8] = {0, 0, 0, 1, 1, 1, 2, 2};
  for (int j = 0; j < 8; ++j) {
    CHECK(t.nic_of_local_gpu(j) == expected[j]);
    CHECK(t.find_link(t.gpu(j), t.nic(0, expected[j])));
  }
  // NIC 0 has 3 PCIe cables, one per GPU sharing it.
  CHECK(t.out_links(t.nic(0, 0)).size() == 3);
  CHECK(t.num_cables() == 16);
}

TEST_CASE("single_node pcie: GPUs and NICs hang off the host") {
  TopologyParams p;
  p.kind = TopologyKind::single_node;
  p.node.fabric = NodeFabric::pcie;
  p.node.gpus = 4;
  p.node.nics = 2;
  const Topology t = build_topology(p);
  // 4 GPUs + 2 NICs + host = 7 vertices; 4 GPU-host + 2 NIC-host = 6 cables.
  CHECK(t.num_vertices() == 7);
  CHECK(t.num_cables() == 6);
  CHECK(t.vertex(t.node_switch(0)).name == "n0.host");
  CHECK(t.node_fabric() == NodeFabric::pcie);
  for (LinkId l = 0; l < t.num_links(); ++l) CHECK(t.link(l).kind == LinkKind::pcie);
  CHECK_FALSE(t.find_link(t.gpu(0), t.nic(0, 0)));
  check_graph_in_sync(t);
}

TEST_CASE("fat_tree full, k=8: 32 NICs on 8 leaves and 4 spines") {
  const Topology t = build_topology(fat_tree(4, 8, 8, 8));
  // down = up = 4; 32 NICs / 4 = 8 leaves = k, spines = 4.
  // Vertices: 4 nodes * 17 + 8 + 4 = 80. Cables: 4 * 16 + 32 NIC-leaf + 8 * 4 = 128.
  CHECK(t.num_vertices() == 80);
  CHECK(t.num_cables() == 128);
  CHECK(t.num_fabric_switches() == 12);
  const FatTreeLayout* f = t.fat_tree();
  REQUIRE(f);
  CHECK(f->leaves == 8);
  CHECK(f->spines == 4);
  CHECK(f->down_ports == 4);
  CHECK(f->up_ports == 4);
  CHECK(t.vertex(f->leaf[7]).name == "leaf7");
  CHECK(t.vertex(f->leaf[7]).tier == 1);
  CHECK(t.vertex(f->spine[3]).name == "spine3");
  CHECK(t.vertex(f->spine[3]).tier == 2);
  // NIC g = 13 (node 1, NIC 5): leaf 3, port 1.
  CHECK(f->nic_leaf[13] == 3);
  CHECK(f->nic_port[13] == 1);
  CHECK(t.link(f->nic_up[13]).from == t.nic(1, 5));
  CHECK(t.link(f->nic_up[13]).to == f->leaf[3]);
  CHECK(t.link(f->nic_up[13]).bandwidth_Bps == 50e9);  // nic_bandwidth
  CHECK(t.link(f->leaf_up[2 * 4 + 1]).from == f->leaf[2]);
  CHECK(t.link(f->leaf_up[2 * 4 + 1]).to == f->spine[1]);
  CHECK(t.link(f->leaf_up[0]).kind == LinkKind::fabric);
  // Every switch uses exactly k = 8 ports.
  for (VertexId v : f->leaf) CHECK(t.out_links(v).size() == 8);
  for (VertexId v : f->spine) CHECK(t.out_links(v).size() == 8);
  CHECK(count_kind(t, VertexKind::gpu) == 32);
  CHECK(count_kind(t, VertexKind::nic) == 32);
  CHECK(count_kind(t, VertexKind::node_switch) == 4);
  check_graph_in_sync(t);
}

TEST_CASE("fat_tree partial: 3 nodes fill 6 of 8 leaves") {
  const Topology t = build_topology(fat_tree(3, 8, 8, 8));
  // 24 NICs / 4 = 6 leaves, 4 spines. Vertices 3 * 17 + 10 = 61; cables 48 + 24 + 24 = 96.
  CHECK(t.num_vertices() == 61);
  CHECK(t.num_cables() == 96);
  CHECK(t.fat_tree()->leaves == 6);
  CHECK(t.fat_tree()->spines == 4);
  // Spines use only 6 of their 8 ports.
  CHECK(t.out_links(t.fat_tree()->spine[0]).size() == 6);
}

TEST_CASE("fat_tree partial leaf: 10 NICs, k=8 -> leaves of 4, 4, 2") {
  const Topology t = build_topology(fat_tree(5, 2, 2, 8));
  // Whole nodes per leaf: 2, 2, 1 nodes. 4 up-ports per leaf; 3 leaves reach the spines in
  // bundles of 2 (3 x 2 = 6 of 8 ports), so 2 spines. Vertices 5 * (2 + 2 + 1) + 3 + 2 = 30;
  // cables 5 * 4 + 10 + 3 * 4 = 42.
  CHECK(t.num_vertices() == 30);
  CHECK(t.num_cables() == 42);
  CHECK(t.fat_tree()->leaves == 3);
  CHECK(t.fat_tree()->spines == 2);
  CHECK(t.fat_tree()->tier[0].parallel == 2);
  CHECK(t.out_links(t.fat_tree()->leaf[2]).size() == 2 + 4);
}

TEST_CASE("fat_tree with one leaf has no spines") {
  const Topology t = build_topology(fat_tree(1, 4, 4, 8));
  // 4 NICs fit one leaf. Vertices 4 + 4 + 1 + 1 = 10; cables 4 + 4 + 4 = 12.
  CHECK(t.num_vertices() == 10);
  CHECK(t.num_cables() == 12);
  CHECK(t.fat_tree()->leaves == 1);
  CHECK(t.fat_tree()->spines == 0);
  CHECK(t.fat_tree()->up_ports == 0);
  CHECK(t.fat_tree()->leaf_up.empty());
  CHECK(t.vertex(t.nic(0, 0)).name == "n0.0");
}

TEST_CASE("fat_tree with one NIC per node names the NIC after the node") {
  const Topology t = build_topology(fat_tree(2, 4, 1, 8));
  CHECK(t.vertex(t.nic(1, 0)).name == "n1");
  CHECK(t.find("n1") == t.nic(1, 0));
  CHECK(t.nic_index_of_rank(7) == 1);
  // All 4 GPUs of a node have their own PCIe cable to the one NIC.
  CHECK(t.out_links(t.nic(1, 0)).size() == 4 + 1);
}

TEST_CASE("fat_tree rail-optimized vs not: 6 nodes of 2 NICs, k=8") {
  // Rail-optimized: leaves_per_rail = ceil(6 / 4) = 2 holding 3 nodes each, leaves = 2 rails
  // * 2 = 4 with 3 up-ports, rounded to 4 for bundles of 2 (4 leaves x 2 = 8 ports): 2 spines.
  // Vertices 6 * (8 + 2 + 1) + 4 + 2 = 72; cables 6 * 16 + 12 + 4 * 4 = 124.
  const Topology rail = build_topology(fat_tree(6, 8, 2, 8, 1.0, true));
  CHECK(rail.num_vertices() == 72);
  CHECK(rail.num_cables() == 124);
  const FatTreeLayout& f = *rail.fat_tree();
  CHECK(f.leaves == 4);
  CHECK(f.down_ports == 3);
  CHECK(f.up_ports == 4);
  CHECK(f.rail_optimized);
  // NIC 1 of node 5 (g = 11): rail 1's second leaf (nodes 3-5), 1 * 2 + 1 = 3, port 2.
  CHECK(f.nic_leaf[11] == 3);
  CHECK(f.nic_port[11] == 2);
  // Rail j only on leaves [2j, 2j + 2).
  for (int n = 0; n < 6; ++n)
    for (int j = 0; j < 2; ++j) {
      const int leaf = f.nic_leaf[static_cast<std::size_t>(n * 2 + j)];
      CHECK(leaf / 2 == j);
    }

  // Not rail-optimized: two whole nodes per leaf, 3 leaves; NIC 11 -> leaf 2, port 3; 2
  // spines (bundles of 2).
  const Topology flat = build_topology(fat_tree(6, 8, 2, 8));
  CHECK(flat.fat_tree()->leaves == 3);
  CHECK(flat.fat_tree()->nic_leaf[11] == 2);
  CHECK(flat.fat_tree()->nic_port[11] == 3);
  CHECK(flat.num_vertices() == 6 * 11 + 3 + 2);
  CHECK(flat.num_cables() == 6 * 16 + 12 + 3 * 4);
}

TEST_CASE("fat_tree oversubscription splits the radix into down:up ports") {
  // k = 8, o = 1: 4 down, 4 up; 4 leaves reach 2 spines in bundles of 2.
  CHECK(build_topology(fat_tree(16, 1, 1, 8, 1.0)).fat_tree()->down_ports == 4);
  CHECK(build_topology(fat_tree(16, 1, 1, 8, 1.0)).fat_tree()->spines == 2);
  // k = 8, o = 3: floor(8 * 3 / 4) = 6 down, 2 up. 12 NICs -> 2 leaves, one spine taking a
  // bundle of 2 from each. Vertices 12 * 3 + 2 + 1 = 39; cables 12 * 2 + 12 + 2 * 2 = 40.
  const Topology t = build_topology(fat_tree(12, 1, 1, 8, 3.0));
  CHECK(t.fat_tree()->down_ports == 6);
  CHECK(t.fat_tree()->up_ports == 2);
  CHECK(t.fat_tree()->leaves == 2);
  CHECK(t.fat_tree()->spines == 1);
  CHECK(t.num_vertices() == 39);
  CHECK(t.num_cables() == 40);
  // k = 8, o = 2: floor(16 / 3) = 5 down, 3 up, one spine (2 bundles of 3).
  const Topology t2 = build_topology(fat_tree(10, 1, 1, 8, 2.0));
  CHECK(t2.fat_tree()->down_ports == 5);
  CHECK(t2.fat_tree()->up_ports == 3);
  CHECK(t2.fat_tree()->spines == 1);
  // k = 8, o = 3 holds at most 8 leaves * 6 = 48 NICs.
  CHECK(build_topology(fat_tree(48, 1, 1, 8, 3.0)).fat_tree()->leaves == 8);
  CHECK_THROWS_AS(build_topology(fat_tree(49, 1, 1, 8, 3.0)), BuildError);
}

TEST_CASE("fat_tree of 16,384 GPUs builds with the closed-form sizes") {
  // 2048 nodes of 8 GPUs + 8 NICs, k = 256: 128 down / 128 up, 16384 / 128 = 128 leaves;
  // 128 leaves x bundles of 2 fill a spine's 256 ports: 128 * 128 / 256 = 64 spines.
  // Vertices 2048 * 17 + 192 = 35008; cables 2048 * 16 + 16384 + 128 * 128.
  const Topology t = build_topology(fat_tree(2048, 8, 8, 256));
  CHECK(t.ranks() == 16384);
  CHECK(t.num_vertices() == 35008);
  CHECK(t.num_cables() == 2048 * 16 + 16384 + 128 * 128);
  CHECK(t.fat_tree()->leaves == 128);
  CHECK(t.fat_tree()->spines == 64);
  CHECK(t.vertex(t.gpu(16383)).name == "n2047.gpu7");
}

TEST_CASE("topology_size counts what build_topology builds, without building", "[build][size]") {
  std::vector<cs::topo::TopologyParams> cases;
  cs::topo::TopologyParams ft;
  ft.kind = cs::topo::TopologyKind::fat_tree;
  ft.nodes = 37;
  ft.node.nics = 4;
  ft.switch_radix = 16;
  ft.tiers = 3;
  ft.rail_optimized = true;
  cases.push_back(ft);
  cs::topo::TopologyParams df;
  df.kind = cs::topo::TopologyKind::dragonfly;
  df.nodes = 40;
  df.routers_per_group = 4;
  df.nodes_per_router = 2;
  df.global_links_per_router = 2;
  df.groups = 5;
  df.local_parallel_links = 2;
  cases.push_back(df);
  cs::topo::TopologyParams torus;
  torus.kind = cs::topo::TopologyKind::torus;
  torus.dims = {3, 2, 4};
  torus.nodes = 24;
  torus.dim_parallel_links = {2};
  cases.push_back(torus);
  cs::topo::TopologyParams multislice = torus;  // three tori and their DCN switch
  multislice.slices = 3;
  multislice.nodes = 72;
  cases.push_back(multislice);
  cs::topo::TopologyParams single;
  single.kind = cs::topo::TopologyKind::single_node;
  single.node.fabric = cs::topo::NodeFabric::nvlink_mesh;
  cases.push_back(single);
  for (const auto& p : cases) {
    const cs::topo::Topology t = cs::topo::build_topology(p);
    const cs::topo::TopologySize s = cs::topo::topology_size(p);
    CHECK(s.vertices == static_cast<int64_t>(t.num_vertices()));
    CHECK(s.cables == static_cast<int64_t>(t.num_cables()));
  }
}
