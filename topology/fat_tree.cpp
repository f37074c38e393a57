// Fat-trees. Two tiers today: leaves (NIC-facing) and spines. The shape is computed and
// checked first (no allocation on bad input), then nodes, switches and cables are added
// tier by tier, so an L-tier version only adds tiers to FatTreeShape and wiring loops.
#include <cmath>
#include <string>

#include "topology/build_detail.hpp"

namespace cs::topo::detail {
namespace {

struct FatTreeShape {
  int64_t nics = 0;             // global NIC count
  int down = 0, up = 0;         // leaf ports toward NICs / toward spines
  int64_t leaves = 0;
  int64_t leaves_per_rail = 0;  // rail-optimized only
  int spines = 0;               // 0 when a single leaf holds every NIC
};

FatTreeShape fat_tree_shape(const TopologyParams& p) {
  if (p.tiers < 2)
    fail("tiers", "a fat_tree has 2 tiers, got " + std::to_string(p.tiers) +
                      " (a single switch is a fat_tree whose NICs fit on one leaf)");
  if (p.tiers > 2)
    fail("tiers", "fat_tree with " + std::to_string(p.tiers) +
                      " tiers is not supported yet (use 2)");
  const int k = p.switch_radix;
  if (k < 2) fail("switch_radix", "switch_radix must be >= 2, got " + std::to_string(k));
  if (k > kMaxSwitchRadix)
    fail("switch_radix", "switch_radix must be <= " + std::to_string(kMaxSwitchRadix) + ", got " +
                             std::to_string(k));
  const double o = p.oversubscription;
  if (!(o > 0.0) || !std::isfinite(o))
    fail("oversubscription", "oversubscription (down:up) must be a finite number > 0");
  check_bandwidth(p.link_bandwidth_Bps, "link_bandwidth");
  check_latency(p.link_latency_s, "link_latency");

  FatTreeShape s;
  // down:up = o with down + up = k. The epsilon keeps exact ratios (k=8, o=3 -> 6) from
  // rounding down through floating-point error.
  s.down = static_cast<int>(std::floor(k * o / (1.0 + o) + 1e-9));
  s.up = k - s.down;
  if (s.down < 1 || s.up < 1)
    fail("oversubscription", "oversubscription " + std::to_string(o) + " with switch_radix " +
                                 std::to_string(k) + " leaves " + std::to_string(s.down) +
                                 " down and " + std::to_string(s.up) +
                                 " up ports per leaf; each needs at least 1");
  s.nics = int64_t{p.nodes} * p.node.nics;
  if (p.rail_optimized) {
    s.leaves_per_rail = (p.nodes + s.down - 1) / s.down;
    s.leaves = s.leaves_per_rail * p.node.nics;
  } else {
    s.leaves = (s.nics + s.down - 1) / s.down;
  }
  if (s.leaves > 1 && s.leaves > k) {
    // Each spine has one port per leaf, so at most k leaves.
    std::string what = "switch_radix too small for a 2-tier fat-tree of " + std::to_string(s.nics) +
                       " NICs: at most " + std::to_string(int64_t{k} * s.down) + " NICs";
    if (p.rail_optimized)
      what += " (rail-optimized: at most " + std::to_string(int64_t{k / p.node.nics} * s.down) +
              " nodes of " + std::to_string(p.node.nics) + " NICs)";
    fail("switch_radix", what + "; raise switch_radix or oversubscription");
  }
  s.spines = s.leaves > 1 ? s.up : 0;
  return s;
}

}  // namespace

void build_fat_tree(Topology& t, const TopologyParams& p) {
  const FatTreeShape s = fat_tree_shape(p);
  const int64_t switches = s.leaves + s.spines;
  t.reserve(static_cast<std::size_t>(p.nodes * node_vertex_count(p.node) + switches),
            static_cast<std::size_t>(p.nodes * node_cable_count(p.node) + s.nics +
                                     s.leaves * s.spines));
  const NodeVertices nodes = add_nodes(t, TopologyKind::fat_tree, p.node, p.nodes);

  FatTreeLayout f;
  f.leaves = static_cast<int>(s.leaves);
  f.spines = s.spines;
  f.down_ports = s.down;
  f.up_ports = s.spines;
  f.rail_optimized = p.rail_optimized;
  f.leaf.reserve(static_cast<std::size_t>(s.leaves));
  for (int i = 0; i < f.leaves; ++i)
    f.leaf.push_back(t.add_vertex(VertexKind::fabric_switch, -1, i, 1, "leaf" + std::to_string(i)));
  f.spine.reserve(static_cast<std::size_t>(s.spines));
  for (int i = 0; i < f.spines; ++i)
    f.spine.push_back(
        t.add_vertex(VertexKind::fabric_switch, -1, i, 2, "spine" + std::to_string(i)));

  // Tier 0 -> 1: NICs to leaves, in global NIC order.
  const auto G = static_cast<std::size_t>(s.nics);
  f.nic_leaf.resize(G);
  f.nic_port.resize(G);
  f.nic_up.resize(G);
  const int nics = p.node.nics;
  for (std::size_t g = 0; g < G; ++g) {
    int leaf = 0, port = 0;
    if (p.rail_optimized) {
      // Rail j holds NIC j of every node, in leaves_per_rail consecutive leaves.
      const int n = static_cast<int>(g / static_cast<std::size_t>(nics));
      const int j = static_cast<int>(g % static_cast<std::size_t>(nics));
      leaf = static_cast<int>(j * s.leaves_per_rail) + n / s.down;
      port = n % s.down;
    } else {
      leaf = static_cast<int>(g / static_cast<std::size_t>(s.down));
      port = static_cast<int>(g % static_cast<std::size_t>(s.down));
    }
    f.nic_leaf[g] = leaf;
    f.nic_port[g] = port;
    f.nic_up[g] = t.add_cable(nodes.nics[g], f.leaf[static_cast<std::size_t>(leaf)],
                              p.node.nic_bandwidth_Bps, p.link_latency_s, LinkKind::fabric);
  }

  // Tier 1 -> 2: every leaf to every spine, one cable each.
  f.leaf_up.reserve(static_cast<std::size_t>(s.leaves * s.spines));
  for (int l = 0; l < f.leaves; ++l)
    for (int sp = 0; sp < f.spines; ++sp)
      f.leaf_up.push_back(t.add_cable(f.leaf[static_cast<std::size_t>(l)],
                                      f.spine[static_cast<std::size_t>(sp)], p.link_bandwidth_Bps,
                                      p.link_latency_s, LinkKind::fabric));
  t.set_fat_tree(std::move(f));
}

}  // namespace cs::topo::detail
