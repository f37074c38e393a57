// Fat-trees (folded Clos) of 2 or more tiers: leaves (NIC-facing), then aggregation tiers,
// then the top tier. The configurator (fat_tree_shape.cpp) sizes and checks it first (no
// allocation on bad input), then nodes, switches and cables are added tier by tier. The wiring rule is the one stated
// at FatTreeTier (topology.hpp): on a full non-blocking tree of radix k and 3 tiers it gives
// the k-ary fat-tree, k pods of k/2 leaves and k/2 aggregation switches, and (k/2)^2 cores.
#include <string>
#include <vector>

#include "topology/build_detail.hpp"
#include "topology/fat_tree_shape.hpp"

namespace cs::topo::detail {
namespace {

const char* tier_name(int tier) {
  switch (tier) {
    case 1: return "leaf";
    case 2: return "spine";
    case 3: return "core";
    default: return "tier";
  }
}

// NIC -> (leaf, port) placement: rail j (or the one set of leaves) holds its units in
// balanced consecutive blocks of leaves (leaf_block); a unit is one NIC, or a whole node.
void place_nics(const TopologyParams& p, const FatTreeShape& s, FatTreeLayout& f) {
  const auto G = static_cast<std::size_t>(s.nics);
  const LeafPlacement& lp = s.placement;
  const int nics = p.node.nics;
  f.nic_leaf.resize(G);
  f.nic_port.resize(G);
  for (std::size_t g = 0; g < G; ++g) {
    const auto node = static_cast<int64_t>(g / static_cast<std::size_t>(nics));
    const auto j = static_cast<int64_t>(g % static_cast<std::size_t>(nics));
    int64_t rail = 0, unit = static_cast<int64_t>(g), offset = 0;
    if (p.rail_optimized) {
      rail = j;
      unit = node;
    } else if (lp.unit_nics > 1) {
      unit = node;
      offset = j;
    }
    const LeafSlot slot = leaf_block(lp, unit);
    f.nic_leaf[g] = static_cast<int>(rail * lp.leaves_per_rail + slot.leaf);
    f.nic_port[g] = static_cast<int>(slot.position * lp.unit_nics + offset);
  }
}

// D-mod-K keys (see FatTreeLayout::nic_key): digit 1 is the leaf port, digit t the index of
// the NIC's tier-(t-1) group within its tier-t group.
void dmodk_keys(const FatTreeShape& s, FatTreeLayout& f) {
  std::vector<uint64_t> weight(s.tier.size(), 1);
  for (std::size_t t = 1; t < s.tier.size(); ++t) {
    const auto range = static_cast<uint64_t>(s.tier[t - 1].fan);
    const auto per_group = static_cast<uint64_t>(s.tier[t].per_group);
    weight[t] = (weight[t - 1] * range + per_group - 1) / per_group * per_group;
  }
  f.nic_key.resize(f.nic_leaf.size());
  for (std::size_t g = 0; g < f.nic_leaf.size(); ++g) {
    uint64_t key = static_cast<uint64_t>(f.nic_port[g]);
    const auto leaf = static_cast<int64_t>(f.nic_leaf[g]);
    for (std::size_t t = 1; t < s.tier.size(); ++t) {
      const int64_t group_below = leaf / s.tier[t - 1].leaves_per_group;
      key += static_cast<uint64_t>(group_below % s.tier[t].fan) * weight[t];
    }
    f.nic_key[g] = key;
  }
}

}  // namespace

namespace {

FabricSize size_of(const FatTreeShape& s) {
  FabricSize out{0, s.nics};
  for (const TierShape& tier : s.tier) {
    out.vertices += tier.groups * tier.per_group;
    out.cables += tier.groups * tier.per_group * tier.up;
  }
  return out;
}

}  // namespace

FabricSize fat_tree_fabric_size(const TopologyParams& p) { return size_of(fat_tree_shape(p)); }

void build_fat_tree(Topology& t, const TopologyParams& p) {
  const FatTreeShape s = fat_tree_shape(p);
  const FabricSize fabric = size_of(s);
  t.reserve(static_cast<std::size_t>(p.nodes * node_vertex_count(p.node) + fabric.vertices),
            static_cast<std::size_t>(p.nodes * node_cable_count(p.node) + fabric.cables));
  const NodeVertices nodes = add_nodes(t, TopologyKind::fat_tree, p.node, p.nodes);

  FatTreeLayout f;
  f.rail_optimized = p.rail_optimized;
  f.tiers = static_cast<int>(s.tier.size());
  f.tiers_requested = p.tiers;
  f.tier.resize(s.tier.size());
  for (std::size_t i = 0; i < s.tier.size(); ++i) {
    const TierShape& shape = s.tier[i];
    FatTreeTier& tier = f.tier[i];
    tier.switches = static_cast<int>(shape.groups * shape.per_group);
    tier.per_group = static_cast<int>(shape.per_group);
    tier.down = shape.down;
    tier.fan = shape.fan;
    tier.up = shape.up;
    tier.parallel = shape.parallel;
    tier.leaves_per_group = shape.leaves_per_group;
    tier.vertex.reserve(static_cast<std::size_t>(tier.switches));
    const int level = static_cast<int>(i) + 1;
    const std::string prefix =
        level <= 3 ? tier_name(level) : tier_name(level) + std::to_string(level) + "_";
    for (int j = 0; j < tier.switches; ++j)
      tier.vertex.push_back(
          t.add_vertex(VertexKind::fabric_switch, -1, j, level, prefix + std::to_string(j)));
  }

  // Tier 0 -> 1: NICs to leaves, in global NIC order.
  place_nics(p, s, f);
  f.nic_up.resize(f.nic_leaf.size());
  for (std::size_t g = 0; g < f.nic_leaf.size(); ++g)
    f.nic_up[g] = t.add_cable(nodes.nics[g],
                              f.tier[0].vertex[static_cast<std::size_t>(f.nic_leaf[g])],
                              p.node.nic_bandwidth_Bps, p.link_latency_s, LinkKind::fabric);

  // Tier t -> t+1, switch by switch, port by port; port p goes to the (p mod reach)-th
  // switch it reaches, as its (p / reach)-th parallel cable.
  for (std::size_t i = 0; i + 1 < f.tier.size(); ++i) {
    FatTreeTier& tier = f.tier[i];
    const FatTreeTier& above = f.tier[i + 1];
    const int reach = tier.up / tier.parallel;
    tier.up_link.reserve(static_cast<std::size_t>(int64_t{tier.switches} * tier.up));
    for (int sw = 0; sw < tier.switches; ++sw) {
      const int group = sw / tier.per_group, local = sw % tier.per_group;
      const int base = group / above.fan * above.per_group + local * reach;
      for (int port = 0; port < tier.up; ++port)
        tier.up_link.push_back(t.add_cable(
            tier.vertex[static_cast<std::size_t>(sw)],
            above.vertex[static_cast<std::size_t>(base + port % reach)],
            p.link_bandwidth_Bps, p.link_latency_s, LinkKind::fabric));
    }
  }
  dmodk_keys(s, f);

  // The 2-tier view.
  f.leaves = f.tier[0].switches;
  f.down_ports = f.tier[0].down;
  f.up_ports = f.tier[0].up;
  f.leaf = f.tier[0].vertex;
  f.leaf_up = f.tier[0].up_link;
  if (f.tiers > 1) {
    f.spines = f.tier[1].switches;
    f.spine = f.tier[1].vertex;
  }
  t.set_fat_tree(std::move(f));
}

}  // namespace cs::topo::detail

namespace cs::topo {

void check_fat_tree(const TopologyParams& params) { detail::fat_tree_shape(params); }

}  // namespace cs::topo
