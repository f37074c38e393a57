#pragma once
// Bisection bandwidth: the minimum, over balanced splits of the nodes into two halves
// (floor(n/2) and ceil(n/2) nodes), of the fabric bandwidth (bytes/s, one direction) that
// must be cut to separate them, i.e. the max-flow from one half's NICs to the other's.
//
// One answer at every size: the same candidate splits are evaluated exactly by one method
// per family, so a fabric's bisection does not jump when it grows past a size limit.
//   - Candidates: every balanced split up to kAllHalvesNodes nodes (node 0 fixed on one side
//     when n is even); beyond, the index halves (for every builder whole leaves, pods and
//     groups on each side), the interleaved halves, a dragonfly's group cut (the middle
//     group split by its routers' global cables), a torus's cut across each dimension, and
//     16 seeded random splits.
//   - Fat-tree: "tree_cut", the exact min cut of each candidate computed on the tree of
//     switch groups (leaves, pods, the top): traffic between a group's halves stays below
//     it, the rest leaves through its up-links, clamped by their capacity. It equals
//     max-flow on every split (tests compare them candidate by candidate), at any size.
//   - Dragonfly, torus, custom: "max_flow" (Boost push-relabel; NICs with one cable to a
//     switch are merged into it) while the fabric has at most kMaxFlowCables switch-to-
//     switch cables; beyond, the family's closed form ("closed_form"), which is the max-flow
//     of its structural cut (group halves, the cut across a dimension; tested). A custom
//     fabric beyond it: max-flow on the index and interleaved halves only.
#include <optional>
#include <string>
#include <vector>

#include "topology/params.hpp"
#include "topology/topology.hpp"

namespace cs::topo {

inline constexpr int kAllHalvesNodes = 12;
inline constexpr int64_t kMaxFlowCables = 1 << 16;

struct Bisection {
  double Bps = 0;
  std::string method;  // "tree_cut", "max_flow", "closed_form", "none" (fewer than 2 nodes)
  int partitions = 0;  // candidate splits evaluated (0 for closed_form and none)
};

Bisection bisection(const Topology& topology, const TopologyParams& params);

// side[node] = true for one half.
using Partition = std::vector<bool>;
// Every balanced split up to kAllHalvesNodes, else index halves, interleaved and 16 random.
std::vector<Partition> balanced_partitions(int nodes);
// balanced_partitions plus the family's structural cuts beyond kAllHalvesNodes.
std::vector<Partition> candidate_partitions(const Topology& topology);
// Degraded fabrics (failed cables, topology/failures.hpp): max-flow over the live cables while
// the fabric has at most kMaxFlowCables switch-to-switch cables; beyond, a fat-tree's tree
// cut over its live up-links (exact when whole switches fail, an upper bound when single
// cables do: it pools a group's up-links), others max-flow on structural_partitions only.
// The index and interleaved halves and the family's structural cuts (no random splits).
std::vector<Partition> structural_partitions(const Topology& topology);
// Minimum over `halves` of the max-flow between the halves' NICs over fabric cables.
double max_flow_bisection(const Topology& topology, const std::vector<Partition>& halves);
// The same on a fat-tree, computed on its tree of groups (needs topology.fat_tree()).
double tree_cut_bisection(const Topology& topology, const std::vector<Partition>& halves);
// Family closed forms (nullopt for custom / single node): fat-tree min(NICs / 2, each tier's
// up-links / 2); dragonfly group halves (one group: router halves); torus the cheapest cut
// across a dimension (2 bundles per ring, 1 when its size is 2); all at most half the NIC
// bandwidth. Exact for balanced designs whose halves hold whole groups; a lower bound
// otherwise (e.g. a rail-optimized fat-tree's pods hold whole rails, so a node split never
// separates pods and its oversubscribed pod up-links do not bind).
std::optional<double> closed_form_bisection(const Topology& topology, const TopologyParams& p);

}  // namespace cs::topo
