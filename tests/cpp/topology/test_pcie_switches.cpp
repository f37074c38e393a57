// PCIe switches inside a node (NodeParams::pcie_switches): counts, GPU-to-NIC routes through
// the right switch (and across the host when the affine NIC is behind another one), GPU-GPU
// routes of pcie nodes, route validity and minimality, and the parameter error.
#include <catch2/catch.hpp>

#include <vector>

#include "helpers.hpp"

using namespace cs::topo;
using cs::topo::test::check_all_pairs;
using cs::topo::test::failing_param;
using cs::topo::test::fat_tree;

namespace {

TopologyParams with_switches(TopologyParams p, NodeFabric fabric, int switches) {
  p.node.fabric = fabric;
  p.node.pcie_switches = switches;
  return p;
}

int count(const Topology& t, VertexKind kind) {
  int n = 0;
  for (VertexId v = 0; v < t.num_vertices(); ++v) n += t.vertex(v).kind == kind;
  return n;
}

// The vertices a route visits after its source.
std::vector<VertexId> hops(const Topology& t, const Route& r) {
  std::vector<VertexId> v;
  for (LinkId l : r.links) v.push_back(t.link(l).to);
  return v;
}

VertexId named(const Topology& t, const char* name) { return *t.find(name); }

}  // namespace

TEST_CASE("pcie switches: counts per node") {
  // pcie node, 4 GPUs, 2 NICs, 2 switches: host + 2 PCIe switches; cables GPU-switch,
  // NIC-switch, switch-host.
  const Topology a = build_topology(with_switches(fat_tree(2, 4, 2, 8), NodeFabric::pcie, 2));
  CHECK(a.pcie_switches_per_node() == 2);
  CHECK(count(a, VertexKind::node_switch) == 2 * 3);
  CHECK(a.num_vertices() == 2 * (4 + 2 + 3) + a.num_fabric_switches());
  CHECK(a.num_cables() == 2 * (4 + 2 + 2) + 4);  // + 4 NIC-leaf cables (one leaf)
  // nvswitch node, 8 GPUs, 2 NICs, 4 switches: NVSwitch + host + 4 PCIe switches.
  const Topology b = build_topology(with_switches(fat_tree(2, 8, 2, 8), NodeFabric::nvswitch, 4));
  CHECK(count(b, VertexKind::node_switch) == 2 * 6);
  CHECK(b.num_cables() == 2 * (8 + 8 + 2 + 4) + 4);
  // Absent: nothing modelled, as before.
  const Topology c = build_topology(fat_tree(2, 8, 2, 8));
  CHECK(c.pcie_switches_per_node() == 0);
  CHECK(count(c, VertexKind::node_switch) == 2);
  CHECK(c.num_cables() == 2 * 16 + 4);
}

TEST_CASE("pcie switches: GPU-NIC and GPU-GPU routes go through the right switch") {
  SECTION("pcie node: affine NIC under the GPU's switch; GPU-GPU across switches via the host") {
    const Topology t = build_topology(with_switches(fat_tree(2, 4, 2, 8), NodeFabric::pcie, 2));
    auto r = make_router(t, RoutingKind::dmodk, 0);
    // GPU 3 (switch 1) -> NIC 1 (switch 1) -> leaf -> NIC 1 of node 1 -> switch 1 -> GPU 3.
    const auto out = hops(t, r->route(3, 7, 0));
    REQUIRE(out.size() == 6);
    CHECK(out[0] == named(t, "n0.pcie1"));
    CHECK(out[1] == named(t, "n0.1"));
    CHECK(out[4] == named(t, "n1.pcie1"));
    // GPU 0 -> GPU 1: one switch. GPU 0 -> GPU 2: switch 0, host, switch 1.
    CHECK(hops(t, r->route(0, 1, 0)) ==
          std::vector<VertexId>{named(t, "n0.pcie0"), named(t, "n0.gpu1")});
    CHECK(hops(t, r->route(0, 2, 0)) ==
          std::vector<VertexId>{named(t, "n0.pcie0"), named(t, "n0.host"), named(t, "n0.pcie1"),
                                named(t, "n0.gpu2")});
  }
  SECTION("nvswitch node: a NIC behind another switch is reached across the host") {
    // 8 GPUs, 2 NICs, 4 switches: GPU i behind switch i / 2, NIC j behind switch 2j; GPU 2
    // uses NIC 0 (switch 0) from switch 1.
    const Topology t = build_topology(with_switches(fat_tree(2, 8, 2, 8), NodeFabric::nvswitch, 4));
    auto r = make_router(t, RoutingKind::dmodk, 0);
    const auto out = hops(t, r->route(2, 8, 0));
    REQUIRE(out.size() >= 4);
    CHECK(out[0] == named(t, "n0.pcie1"));
    CHECK(out[1] == named(t, "n0.host"));
    CHECK(out[2] == named(t, "n0.pcie0"));
    CHECK(out[3] == named(t, "n0.0"));
    // GPU 0 uses NIC 0, both behind switch 0.
    const auto near = hops(t, r->route(0, 8, 0));
    CHECK(near[0] == named(t, "n0.pcie0"));
    CHECK(near[1] == named(t, "n0.0"));
    // Inside the node GPU-GPU stays on the NVSwitch.
    CHECK(hops(t, r->route(0, 7, 0)) ==
          std::vector<VertexId>{named(t, "n0.nvswitch"), named(t, "n0.gpu7")});
  }
}

TEST_CASE("pcie switches: routes valid and minimal for all pairs") {
  const TopologyParams cases[] = {
      with_switches(fat_tree(3, 4, 2, 8), NodeFabric::pcie, 2),
      with_switches(fat_tree(3, 4, 2, 8), NodeFabric::pcie, 1),
      with_switches(fat_tree(3, 8, 2, 8), NodeFabric::nvswitch, 4),
      with_switches(fat_tree(3, 8, 4, 8), NodeFabric::nvswitch, 2),
      with_switches(fat_tree(3, 4, 2, 8), NodeFabric::nvlink_mesh, 2),
  };
  for (const TopologyParams& p : cases) {
    const Topology t = build_topology(p);
    for (RoutingKind kind : {RoutingKind::dmodk, RoutingKind::ecmp, RoutingKind::shortest}) {
      INFO("fabric " << static_cast<int>(p.node.fabric) << ", switches " << p.node.pcie_switches
                     << ", routing " << static_cast<int>(kind));
      check_all_pairs(t, kind);
    }
  }
}

TEST_CASE("pcie switches: more switches than GPUs is an error") {
  CHECK(failing_param(with_switches(fat_tree(2, 2, 1, 8), NodeFabric::pcie, 3)) ==
        "node.pcie_switches");
}
