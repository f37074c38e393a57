// Fat-trees (folded Clos) of 2 or more tiers: leaves (NIC-facing), then aggregation tiers,
// then the top tier. The shape is computed and checked first (no allocation on bad input),
// then nodes, switches and cables are added tier by tier. The wiring rule is the one stated
// at FatTreeTier (topology.hpp): on a full non-blocking tree of radix k and 3 tiers it gives
// the k-ary fat-tree, k pods of k/2 leaves and k/2 aggregation switches, and (k/2)^2 cores.
#include <cmath>
#include <string>
#include <vector>

#include "topology/build_detail.hpp"

namespace cs::topo::detail {
namespace {

constexpr int kMaxTiers = 6;
constexpr int64_t kMaxSwitches = int64_t{1} << 24;

struct TierShape {
  int down = 0, up = 0;          // ports per switch toward the tier below / above
  int64_t groups = 1;            // groups of switches in this tier
  int64_t per_group = 1;         // switches per group
  int64_t leaves_per_group = 1;  // leaves under one group
  int fan = 0;                   // leaf: down-ports; above: groups below one group (down / P)
};

struct FatTreeShape {
  int64_t nics = 0;              // global NIC count
  int64_t leaves_per_rail = 0;   // rail-optimized only
  std::vector<TierShape> tier;   // the tiers built, leaf first
};

const char* tier_name(int tier) {
  switch (tier) {
    case 1: return "leaf";
    case 2: return "spine";
    case 3: return "core";
    default: return "tier";
  }
}

// Down:up ports of tier t (1-based, below the top) from its oversubscription ratio.
TierShape tier_ports(const TopologyParams& p, int t) {
  const bool leaf = t == 1;
  const auto upper = static_cast<std::size_t>(t - 2);
  const double o = leaf ? p.oversubscription
                        : (upper < p.upper_oversubscription.size() ? p.upper_oversubscription[upper]
                                                                   : 1.0);
  const std::string param = leaf ? "oversubscription" : "oversubscription." + std::to_string(t - 1);
  if (!(o > 0.0) || !std::isfinite(o))
    fail(param, "oversubscription (down:up) must be a finite number > 0");
  const int k = p.switch_radix;
  TierShape s;
  // down:up = o with down + up = k. The epsilon keeps exact ratios (k=8, o=3 -> 6) from
  // rounding down through floating-point error.
  s.down = static_cast<int>(std::floor(k * o / (1.0 + o) + 1e-9));
  s.up = k - s.down;
  if (s.down < 1 || s.up < 1)
    fail(param, "oversubscription " + std::to_string(o) + " with switch_radix " +
                    std::to_string(k) + " leaves " + std::to_string(s.down) + " down and " +
                    std::to_string(s.up) + " up ports per " + (leaf ? "leaf" : "switch of tier " +
                    std::to_string(t)) + "; each needs at least 1");
  const int P = p.parallel_links;
  const std::string where = leaf ? "leaf" : "switch of tier " + std::to_string(t);
  if (s.up % P != 0)
    fail("parallel_links", "each " + where + " has " + std::to_string(s.up) +
                               " up-ports, which do not divide into parallel_links " +
                               std::to_string(P) + " cables per switch above");
  s.fan = leaf ? s.down : s.down / P;
  if (s.fan < 1)
    fail("parallel_links", "each " + where + " has " + std::to_string(s.down) +
                               " down-ports, fewer than parallel_links " + std::to_string(P));
  return s;
}

[[noreturn]] void fail_radix(const TopologyParams& p, const FatTreeShape& s, int64_t max_leaves) {
  const int d = s.tier[0].down, nics = p.node.nics;
  std::string what = "switch_radix too small for a " + std::to_string(p.tiers) +
                     "-tier fat-tree of " + std::to_string(s.nics) + " NICs: at most " +
                     std::to_string(max_leaves * d) + " NICs";
  if (p.rail_optimized)
    what += " (rail-optimized: at most " + std::to_string(max_leaves / nics * d) + " nodes of " +
            std::to_string(nics) + " NICs)";
  fail("switch_radix", what + "; raise switch_radix, tiers or oversubscription");
}

FatTreeShape fat_tree_shape(const TopologyParams& p) {
  if (p.tiers < 2 || p.tiers > kMaxTiers)
    fail("tiers", "a fat_tree has 2 to " + std::to_string(kMaxTiers) + " tiers, got " +
                      std::to_string(p.tiers) +
                      " (a single switch is a fat_tree whose NICs fit on one leaf)");
  const int k = p.switch_radix;
  if (k < 2) fail("switch_radix", "switch_radix must be >= 2, got " + std::to_string(k));
  if (k > kMaxSwitchRadix)
    fail("switch_radix", "switch_radix must be <= " + std::to_string(kMaxSwitchRadix) + ", got " +
                             std::to_string(k));
  if (p.parallel_links < 1 || p.parallel_links > k / 2)
    fail("parallel_links", "parallel_links must be 1 to switch_radix / 2 = " +
                               std::to_string(k / 2) + ", got " +
                               std::to_string(p.parallel_links));
  if (p.upper_oversubscription.size() > static_cast<std::size_t>(p.tiers - 2))
    fail("oversubscription", "a " + std::to_string(p.tiers) + "-tier fat-tree takes " +
                                 std::to_string(p.tiers - 1) +
                                 " oversubscription ratios (one per tier below the top, leaf "
                                 "first), got " +
                                 std::to_string(p.upper_oversubscription.size() + 1));
  FatTreeShape s;
  s.tier.reserve(static_cast<std::size_t>(p.tiers));  // references into it stay valid below
  for (int t = 1; t < p.tiers; ++t) s.tier.push_back(tier_ports(p, t));
  check_bandwidth(p.link_bandwidth_Bps, "link_bandwidth");
  check_latency(p.link_latency_s, "link_latency");

  TierShape& leaf = s.tier[0];
  s.nics = int64_t{p.nodes} * p.node.nics;
  if (p.rail_optimized) {
    s.leaves_per_rail = (p.nodes + leaf.down - 1) / leaf.down;
    leaf.groups = s.leaves_per_rail * p.node.nics;
  } else {
    leaf.groups = (s.nics + leaf.down - 1) / leaf.down;
  }
  // Add tiers while more than one group remains below; the top tier has all k ports down and
  // one group, so it takes at most k / P groups (P parallel cables to each).
  const int P = p.parallel_links, top_fan = k / P;
  int64_t max_leaves = top_fan, switches = leaf.groups;
  for (int t = 2; t < p.tiers; ++t) max_leaves *= s.tier[static_cast<std::size_t>(t - 1)].fan;
  for (std::size_t t = 1; s.tier[t - 1].groups > 1; ++t) {
    const TierShape& below = s.tier[t - 1];
    if (t == static_cast<std::size_t>(p.tiers) - 1) {
      if (below.groups > top_fan) fail_radix(p, s, max_leaves);
      s.tier.push_back(TierShape{k, 0, 1, 1, leaf.groups, top_fan});
    }
    TierShape& tier = s.tier[t];
    tier.groups = (below.groups + tier.fan - 1) / tier.fan;
    tier.per_group = below.per_group * (below.up / P);
    tier.leaves_per_group = tier.groups == 1 ? leaf.groups : below.leaves_per_group * tier.fan;
    if (tier.per_group > kMaxSwitches || (switches += tier.groups * tier.per_group) > kMaxSwitches)
      fail("oversubscription", "this fat-tree would need more than " +
                                   std::to_string(kMaxSwitches) +
                                   " switches; use fewer up-ports (a larger oversubscription)");
  }
  // Drop the designed tiers that are not needed (one group below them holds every NIC).
  while (s.tier.size() > 1 && s.tier[s.tier.size() - 2].groups == 1) s.tier.pop_back();
  s.tier.back().up = 0;
  return s;
}

// NIC -> (leaf, port) placement: rail j holds NIC j of every node in leaves_per_rail
// consecutive leaves; otherwise NICs fill leaves in global order.
void place_nics(const TopologyParams& p, const FatTreeShape& s, FatTreeLayout& f) {
  const auto G = static_cast<std::size_t>(s.nics);
  const int nics = p.node.nics, d = s.tier[0].down;
  f.nic_leaf.resize(G);
  f.nic_port.resize(G);
  for (std::size_t g = 0; g < G; ++g) {
    if (p.rail_optimized) {
      const int n = static_cast<int>(g / static_cast<std::size_t>(nics));
      const int j = static_cast<int>(g % static_cast<std::size_t>(nics));
      f.nic_leaf[g] = static_cast<int>(j * s.leaves_per_rail) + n / d;
      f.nic_port[g] = n % d;
    } else {
      f.nic_leaf[g] = static_cast<int>(g / static_cast<std::size_t>(d));
      f.nic_port[g] = static_cast<int>(g % static_cast<std::size_t>(d));
    }
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

void build_fat_tree(Topology& t, const TopologyParams& p) {
  const FatTreeShape s = fat_tree_shape(p);
  int64_t switches = 0, cables = s.nics;
  for (const TierShape& tier : s.tier) {
    switches += tier.groups * tier.per_group;
    cables += tier.groups * tier.per_group * tier.up;
  }
  t.reserve(static_cast<std::size_t>(p.nodes * node_vertex_count(p.node) + switches),
            static_cast<std::size_t>(p.nodes * node_cable_count(p.node) + cables));
  const NodeVertices nodes = add_nodes(t, TopologyKind::fat_tree, p.node, p.nodes);

  FatTreeLayout f;
  f.rail_optimized = p.rail_optimized;
  f.tiers = static_cast<int>(s.tier.size());
  f.tier.resize(s.tier.size());
  for (std::size_t i = 0; i < s.tier.size(); ++i) {
    const TierShape& shape = s.tier[i];
    FatTreeTier& tier = f.tier[i];
    tier.switches = static_cast<int>(shape.groups * shape.per_group);
    tier.per_group = static_cast<int>(shape.per_group);
    tier.down = shape.down;
    tier.fan = shape.fan;
    tier.up = shape.up;
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
    const int reach = tier.up / p.parallel_links;
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
