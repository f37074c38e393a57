#pragma once
// Internal to the fat-tree builder: the configurator that sizes a fat-tree from its
// parameters before anything is allocated, as a vendor's configurator would: the smallest
// fabric (fewest switches) that delivers the asked-for oversubscription at every tier.
//
// Rules (k = switch_radix, o_t = tier t's down:up ratio, P = parallel cables per bundle):
//   - Leaves: at most d = floor(k o_1 / (1 + o_1)) NICs each (then ceil(d / o_1) up-ports
//     fit), as few leaves per rail as hold the rail's NICs, the NICs spread evenly over them
//     (whole nodes per leaf when not rail-optimized and a node's NICs fit one leaf), and
//     ceil(NICs on the fullest leaf / o_1) up-ports.
//   - A tier above is the top when its switches can reach every group below through one bundle
//     each (groups x P <= k); otherwise (and below the asked-for top) it gathers the groups
//     below into as few groups as fit its down-ports at its ratio (d_t = floor(k o_t /
//     (1 + o_t)) / P groups each), and its up-ports are ceil(ports in use below / o_t).
//     At a non-blocking tier (o_t = 1), more groups than the fewest are taken where that
//     gives fewer switches, or as many and fewer cables: groups that divide evenly waste no
//     up-ports on the fullest group's count, and a top switch reached from more groups in
//     smaller bundles can use more of its ports (16K GPUs of 2:1 rail leaves: 14 pods of 28
//     leaves, spines at exactly 1:1 and 147 cores, not 13 pods of 30-31, spines at 0.942 and
//     168 cores). A tapered tier keeps the fewest, largest groups, which keep the most
//     traffic inside.
//   - Bundles: unless the parameters fix P for a tier boundary, the switches below reach the
//     fewest switches above: the smallest r with P = ceil(up / r) such that the switch above
//     has room for a bundle from each of its groups below (fan x P) and the switch below for
//     r x P up-ports; up then becomes r x P (never fewer ports than the ratio asks for).
// On the full k-ary trees (2 tiers: k^2/2 NICs, 3 tiers: k^3/4) this is the textbook tree;
// at 1,024-16,384 GPUs of 8 x 400G NICs with radix 64 it gives the DGX SuperPOD's counts
// (topology/fat_tree_shape.cpp cites them).
#include <cstdint>
#include <vector>

#include "topology/params.hpp"

namespace cs::topo::detail {

struct TierShape {
  int down = 0, up = 0;          // ports per switch in use toward the tier below / above
  int parallel = 1;              // cables per bundle toward the tier above
  int64_t groups = 1;            // groups of switches in this tier
  int64_t per_group = 1;         // switches per group
  int64_t leaves_per_group = 1;  // leaves under one group
  int fan = 0;                   // leaf: down; above: groups below one group
};

// How NICs fill the leaves: `rails` sets of leaves (node.nics with rail_optimized, else 1),
// each holding `units` units of `unit_nics` NICs (rail: one NIC of each node; otherwise a
// whole node, or single NICs when a node's NICs exceed a leaf) in leaves_per_rail leaves,
// spread in balanced blocks (see leaf_block).
struct LeafPlacement {
  int rails = 1;
  int64_t units = 0;
  int unit_nics = 1;
  int64_t leaves_per_rail = 0;
};

struct FatTreeShape {
  int64_t nics = 0;              // global NIC count
  LeafPlacement placement;
  std::vector<TierShape> tier;   // the tiers built, leaf first
};

// Sizes the tree, or throws BuildError naming the parameter ("switch_radix", "tiers",
// "oversubscription", "oversubscription.1", "parallel_links", "parallel_links.1").
FatTreeShape fat_tree_shape(const TopologyParams& p);

// Leaf (within its rail) of unit u, and u's position among the leaf's units: units are cut
// into leaves_per_rail consecutive blocks whose sizes differ by at most one, larger first.
struct LeafSlot {
  int64_t leaf = 0, position = 0;
};
LeafSlot leaf_block(const LeafPlacement& placement, int64_t unit);

}  // namespace cs::topo::detail
