// NCCL's tree all_reduce (a chain through each node's GPUs, a double binary tree between the
// nodes), the double binary tree over ranks with no layout, rooted broadcast and reduce.
#include <algorithm>
#include <cstddef>
#include <utility>

#include "workloads/collective_plan_detail.hpp"

namespace cs::work::detail {
namespace {

// --- the shape -------------------------------------------------------------------------------

// NCCL's binary tree over positions [0, n) (the shape of NCCL's src/graph/trees.cc, written
// anew here). Position p > 0 with lowest set bit b hangs under p + b, which moves that bit up
// to 2b, when p has no bit 2b and p + b is in range; otherwise under p - b. So the odd
// positions are the leaves, every even p > 0 has the child p - b/2, and position 0 is the
// root with the single child bit_floor(n - 1). Its depth is ceil(log2 n) + 1 levels: the
// chain 0, bit_floor(n - 1), ..., 2, 1.
struct TreeShape {
  std::vector<int> parent;  // parent position, -1 at the root
  int levels = 0;
};

int parent_position(int p, int n) {
  const int b = p & -p;
  const bool climbs = (p & (2 * b)) == 0 && p + b < n;
  return climbs ? p + b : p - b;
}

TreeShape tree_shape(int n) {
  TreeShape tree{std::vector<int>(static_cast<std::size_t>(n), -1), 1};
  for (int p = 1; p < n; ++p) tree.parent[static_cast<std::size_t>(p)] = parent_position(p, n);
  for (int p = 1; p < n; ++p) {  // each step up the lowest set bit grows: log2 n steps at most
    int levels = 1;
    for (int q = p; q > 0; q = tree.parent[static_cast<std::size_t>(q)]) ++levels;
    tree.levels = std::max(tree.levels, levels);
  }
  return tree;
}

// The second tree of the double binary tree, as the member at each position when the first
// holds first[p] at position p. NCCL mirrors (position p holds first[n-1-p]) when n is even:
// the odd positions, the leaves, then hold exactly the ranks at the first tree's even ones, so
// every rank that relays (has a parent and a child) in one tree is a leaf in the other, and
// sends at most S/2 up and 2 x S/2 down in one and S/2 up in the other: 2S. When n is odd the
// mirror maps odd positions onto odd ones, so NCCL shifts by one (position p holds
// first[p+1]): relays are again leaves in the other tree, and first[0], the first tree's root
// (one child), relays in the second: it sends S/2 + 2 x S/2 = 3S/2.
Members second_tree(const Members& first) {
  const std::size_t n = first.size();
  Members out(n);
  for (std::size_t p = 0; p < n; ++p) out[p] = n % 2 == 0 ? first[n - 1 - p] : first[(p + 1) % n];
  return out;
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

// Up (reduce) and down (broadcast) the tree as one pipeline.
Transfers both_ways(const TreeShape& tree, const Members& at, double share, int32_t chain) {
  Transfers edges = tree_edges(tree, at, share, chain, true);
  Transfers down = tree_edges(tree, at, share, chain, false);
  edges.insert(edges.end(), down.begin(), down.end());
  return edges;
}

// --- plans -----------------------------------------------------------------------------------

// NCCL's tree: in each channel a chain through the node's GPUs from its head (the channel's
// rail) and a binary tree between the nodes' heads. On one node it is the chain alone (NCCL
// 2.16-2.20 src/graph/connect.cc, ncclTopoPreset: a GPU's tree parent and child inside its
// node are the previous and next GPU of the channel's order), not a binary tree over the
// node's GPUs: 2 (n - 1) steps where that would take 2 log2 n. NCCL duplicates every
// channel, one copy per tree of the double binary tree, so each rail carries both trees: a
// head NIC that relays in one tree is a leaf in the other, as on one node. Each of the 2c
// pipelines reduces up its chains and tree and broadcasts back down, with 1/(2c) of the data.
// Nodes may hold different numbers of members: each node's chains start on rails spread over
// its members (rail_member), and the longest chain sets the latency.
std::vector<Stage> chains_and_tree_all_reduce(const GroupLayout& group, const std::vector<Members>& nodes) {
  const std::size_t channels = channel_count(group, nodes), pipelines = 2 * channels;
  const TreeShape tree = tree_shape(static_cast<int>(nodes.size()));
  const double share = 1.0 / static_cast<double>(pipelines);
  Transfers edges;
  std::size_t longest = 0;
  for (std::size_t p = 0; p < pipelines; ++p) {
    const std::size_t channel = p / 2;  // p % 2: which tree
    const auto chain = static_cast<int32_t>(p);
    Members heads;
    for (const Members& node : nodes) {
      const std::size_t m = node.size();
      longest = std::max(longest, m);
      Members local;
      const std::size_t head = rail_member(channel, channels, m);
      for (std::size_t i = 0; i < m; ++i) local.push_back(node[(head + i) % m]);
      heads.push_back(local.front());
      for (bool towards_head : {true, false}) {
        Transfers part = chain_edges(local, share, chain, towards_head);
        edges.insert(edges.end(), part.begin(), part.end());
      }
    }
    Transfers part = both_ways(tree, p % 2 == 0 ? heads : second_tree(heads), share, chain);
    edges.insert(edges.end(), part.begin(), part.end());
  }
  // The critical path: up a chain and the tree, and back down. NCCL's tuner prices it the same
  // way (src/graph/tuning.cc: 2 x ((ranks per node - 1) x intra + log2(nodes) x inter)).
  const int steps = 2 * (static_cast<int>(longest) - 1 + tree.levels - 1);
  Stage s = stage(nodes.size() > 1 ? "tree all_reduce (chains in nodes, trees between)" : "tree all_reduce (a chain)",
                  std::move(edges), std::max(steps, 1));
  s.inter_node_steps = std::min(2 * (tree.levels - 1), s.steps);
  return {std::move(s)};
}

}  // namespace

std::vector<Stage> tree_plan(CollectiveOp op, const GroupLayout& group) {
  const Members& m = group.ranks;
  const TreeShape tree = tree_shape(static_cast<int>(m.size()));
  const int depth_steps = tree.levels - 1;
  if (op == CollectiveOp::all_reduce) {
    // Where the layout places the ranks (one node or several), NCCL's chains; without one, the
    // double binary tree over the ranks, each tree reducing up and broadcasting down half the
    // data as one pipeline.
    const std::vector<Members> nodes = members_by_node(group);
    if (!nodes.empty()) return chains_and_tree_all_reduce(group, nodes);
    const auto half_each = [&tree](const Members& at, int32_t chain) { return both_ways(tree, at, 0.5, chain); };
    return {stage("tree all_reduce", per_group({m, second_tree(m)}, half_each), 2 * depth_steps)};
  }
  // Rooted ops: the first tree, so ranks[0] is at the root, position 0.
  if (op == CollectiveOp::broadcast)
    return {stage("tree broadcast", tree_edges(tree, m, 1, 0, false), depth_steps)};
  if (op == CollectiveOp::reduce)
    return {stage("tree reduce", tree_edges(tree, m, 1, 0, true), depth_steps)};
  throw PlanError(unsupported(CollectiveAlgorithm::tree, op));
}

}  // namespace cs::work::detail
