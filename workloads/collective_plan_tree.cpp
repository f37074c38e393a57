// NCCL's double binary tree: all_reduce on one node and across nodes, rooted broadcast and reduce.
#include <algorithm>
#include <cstddef>
#include <utility>

#include "workloads/collective_plan_detail.hpp"

namespace cs::work::detail {
namespace {

// --- tree (NCCL's double binary tree) --------------------------------------------------------

// A balanced in-order binary tree over positions [0, n): the middle position is the root and
// each half is bisected the same way, so the depth is ceil(log2(n + 1)) levels.
struct TreeShape {
  std::vector<int> parent;  // parent position, -1 at the root
  int levels = 0;
};

void bisect(int lo, int hi, int parent, int level, TreeShape& tree) {
  if (lo >= hi) return;
  const int mid = lo + (hi - lo) / 2;
  tree.parent[static_cast<std::size_t>(mid)] = parent;
  tree.levels = std::max(tree.levels, level);
  bisect(lo, mid, mid, level + 1, tree);
  bisect(mid + 1, hi, mid, level + 1, tree);
}

TreeShape tree_shape(int n) {
  TreeShape tree{std::vector<int>(static_cast<std::size_t>(n), -1), 0};
  bisect(0, n, -1, 1, tree);
  return tree;
}

// The tree's edges with at[p] the member at position p: child -> parent (up) or the reverse.
Transfers tree_edges(const TreeShape& tree, const Members& at, double share, int32_t chain,
                     bool up) {
  Transfers out;
  for (std::size_t p = 0; p < at.size(); ++p) {
    const int parent = tree.parent[p];
    if (parent < 0) continue;
    const int child = at[p], above = at[static_cast<std::size_t>(parent)];
    out.push_back(up ? Transfer{child, above, share, chain} : Transfer{above, child, share, chain});
  }
  return out;
}

// NCCL's tree across nodes: in each channel a chain through the node's GPUs from its head
// (the channel's rail) and a binary tree between the nodes' heads; channels alternate between
// the two trees of the double binary tree (two pipelines at least, so both trees carry half
// the data even with one channel). Each pipeline reduces up its chains and tree and
// broadcasts back down, with 1/P of the data.
std::vector<Stage> multi_node_tree_all_reduce(const GroupLayout& group, const std::vector<Members>& nodes) {
  const std::size_t m = nodes.front().size(), k = nodes.size();
  const std::size_t channels = channel_count(group, nodes), pipelines = std::max<std::size_t>(channels, 2);
  const TreeShape tree = tree_shape(static_cast<int>(k));
  const double share = 1.0 / static_cast<double>(pipelines);
  Transfers edges;
  for (std::size_t p = 0; p < pipelines; ++p) {
    const std::size_t head = p % channels;
    const auto chain = static_cast<int32_t>(p);
    Members heads;
    for (std::size_t q = 0; q < k; ++q) {
      Members local;
      for (std::size_t i = 0; i < m; ++i) local.push_back(nodes[q][(head + i) % m]);
      heads.push_back(local.front());
      for (bool towards_head : {true, false}) {
        Transfers part = chain_edges(local, share, chain, towards_head);
        edges.insert(edges.end(), part.begin(), part.end());
      }
    }
    if (p % 2 == 1) std::rotate(heads.begin(), heads.begin() + 1, heads.end());  // tree B
    for (bool up : {true, false}) {
      Transfers part = tree_edges(tree, heads, share, chain, up);
      edges.insert(edges.end(), part.begin(), part.end());
    }
  }
  const int steps = 2 * (static_cast<int>(m) - 1 + tree.levels - 1);
  return {stage("tree all_reduce (chains in nodes, trees between)", std::move(edges), std::max(steps, 1))};
}

}  // namespace

std::vector<Stage> tree_plan(CollectiveOp op, const GroupLayout& group) {
  const Members& m = group.ranks;
  const int n = static_cast<int>(m.size());
  const TreeShape tree = tree_shape(n);
  const int depth_steps = tree.levels - 1;
  if (op == CollectiveOp::all_reduce) {
    const std::vector<Members> nodes = uniform_nodes(group);
    if (!nodes.empty()) return multi_node_tree_all_reduce(group, nodes);
    // Tree B holds member i+1 where tree A holds member i. In the in-order shape the leaves
    // sit at every other position, so the shift turns most of A's leaves into B's interior
    // ranks (a mirror n-1-i would map A's leaves onto themselves when n is odd, e.g. n = 7).
    // Each tree reduces up and broadcasts down half the data as one pipeline.
    Members shifted(m.size());
    for (std::size_t i = 0; i < m.size(); ++i) shifted[i] = m[(i + 1) % m.size()];
    const auto both_ways = [&tree](const Members& at, int32_t chain) {
      Transfers edges = tree_edges(tree, at, 0.5, chain, true);
      Transfers down = tree_edges(tree, at, 0.5, chain, false);
      edges.insert(edges.end(), down.begin(), down.end());
      return edges;
    };
    return {stage("tree all_reduce", per_group({m, shifted}, both_ways), 2 * depth_steps)};
  }
  // Rooted ops: one tree with ranks[0] at the root position, the others in group order.
  Members at;
  const std::size_t root = static_cast<std::size_t>(n / 2);
  for (std::size_t p = 0; p < m.size(); ++p)
    at.push_back(p == root ? m[0] : m[p < root ? p + 1 : p]);
  if (op == CollectiveOp::broadcast)
    return {stage("tree broadcast", tree_edges(tree, at, 1, 0, false), depth_steps)};
  if (op == CollectiveOp::reduce)
    return {stage("tree reduce", tree_edges(tree, at, 1, 0, true), depth_steps)};
  throw PlanError(unsupported(CollectiveAlgorithm::tree, op));
}

}  // namespace cs::work::detail
