#pragma once
// Inside the collective plans (not for callers: they use collective_plan.hpp): the building
// blocks every algorithm shares, and one plan function per algorithm family, each in its own
// file: collective_plan.cpp (blocks, halving_doubling, direct, checks), collective_plan_rings.cpp
// (rings and NCCL channels, hierarchical, in_network), collective_plan_tree.cpp (NCCL's tree:
// chains in nodes, binary trees between them), collective_plan_torus.cpp (XLA's per-dimension
// rings on a torus).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/collective_plan.hpp"

namespace cs::work::detail {

using Members = std::vector<int>;  // ranks in the order an algorithm walks them
using Transfers = std::vector<Transfer>;

// "ring supports all_reduce, ...; not all_to_all"
std::string unsupported(CollectiveAlgorithm algorithm, CollectiveOp op);

// A pipelined ring: members[i] -> members[i+1], and the last back to the first.
Transfers ring_edges(const Members& members, double share, int32_t chain);

// A pipelined open chain: away from members[0] (broadcast) or towards it (reduce).
Transfers chain_edges(const Members& members, double share, int32_t chain, bool towards_head);

// The same pattern over several disjoint groups at once, one pipeline per group (chain = index).
template <class Edges>
Transfers per_group(const std::vector<Members>& groups, Edges edges) {
  Transfers out;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    Transfers part = edges(groups[g], static_cast<int32_t>(g));
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

Stage stage(std::string name, Transfers transfers, int steps);

// Plans by family. Each throws PlanError for an op it does not support or a layout it cannot
// use; make_plan has checked the group itself (size, duplicates, node_of's length).
std::vector<Stage> ring_plan(CollectiveOp op, const GroupLayout& group);
std::vector<Stage> hierarchical_plan(CollectiveOp op, const GroupLayout& group);
std::vector<Stage> in_network_plan(const GroupLayout& group);
std::vector<Stage> tree_plan(CollectiveOp op, const GroupLayout& group);
std::vector<Stage> torus_plan(CollectiveOp op, const GroupLayout& group);

// Shared by rings and trees (collective_plan_rings.cpp): the group's members node by node
// (nodes in order of first appearance, members in group order; empty without node_of), and
// how many NCCL channels the group gets.
std::vector<Members> members_by_node(const GroupLayout& group);
std::size_t channel_count(const GroupLayout& group, const std::vector<Members>& nodes);
// The member of a node of `members` where channel `channel` of `channels` leaves or enters it:
// channels spread evenly over the members, so over the NICs too (GPU i of a node uses NIC
// floor(i x nics / gpus)): with 8 GPUs and 4 NICs, 4 channels start on GPUs 0, 2, 4, 6.
inline std::size_t rail_member(std::size_t channel, std::size_t channels, std::size_t members) {
  return channel * members / channels % members;
}

}  // namespace cs::work::detail
