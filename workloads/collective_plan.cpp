// Collective algorithms as plans: stages of transfers, shares of the nccl-tests size S.
#include "workloads/collective_plan.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace cs::work {
namespace {

using Members = std::vector<int>;  // ranks in the order an algorithm walks them
using Transfers = std::vector<Transfer>;

constexpr CollectiveAlgorithm kPlanned[] = {
    CollectiveAlgorithm::ring, CollectiveAlgorithm::tree, CollectiveAlgorithm::halving_doubling,
    CollectiveAlgorithm::direct, CollectiveAlgorithm::hierarchical};
constexpr CollectiveOp kOps[] = {
    CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather,
    CollectiveOp::all_to_all, CollectiveOp::broadcast,      CollectiveOp::reduce,
    CollectiveOp::send_recv};

bool supports(CollectiveAlgorithm algorithm, CollectiveOp op) {
  using Op = CollectiveOp;
  const bool rooted = op == Op::broadcast || op == Op::reduce;
  const bool symmetric = op == Op::all_reduce || op == Op::reduce_scatter || op == Op::all_gather;
  switch (algorithm) {
    // No ring or hierarchical all_to_all: NCCL runs it as direct sends.
    case CollectiveAlgorithm::ring:
    case CollectiveAlgorithm::hierarchical: return symmetric || rooted;
    case CollectiveAlgorithm::tree: return op == Op::all_reduce || rooted;
    case CollectiveAlgorithm::halving_doubling: return symmetric;
    case CollectiveAlgorithm::direct: return true;
    case CollectiveAlgorithm::in_network: return op == Op::all_reduce;
    case CollectiveAlgorithm::automatic: return false;
  }
  return false;
}

// "a, b and c"
std::string join(const std::vector<std::string_view>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? " and " : ", ";
    out += words[i];
  }
  return out;
}

std::string unsupported(CollectiveAlgorithm algorithm, CollectiveOp op) {
  std::vector<std::string_view> ops;
  for (CollectiveOp o : kOps)
    if (supports(algorithm, o)) ops.push_back(to_string(o));
  return std::string(to_string(algorithm)) + " supports " + join(ops) + "; not " +
         std::string(to_string(op));
}

// --- Building blocks shared by every algorithm ------------------------------------------------

// A pipelined ring: members[i] -> members[i+1], and the last back to the first.
Transfers ring_edges(const Members& members, double share, int32_t chain) {
  Transfers out;
  for (std::size_t i = 0; i < members.size(); ++i)
    out.push_back({members[i], members[(i + 1) % members.size()], share, chain});
  return out;
}

// A pipelined open chain: away from members[0] (broadcast) or towards it (reduce).
Transfers chain_edges(const Members& members, double share, int32_t chain, bool towards_head) {
  Transfers out;
  for (std::size_t i = 0; i + 1 < members.size(); ++i) {
    const int from = members[i], to = members[i + 1];
    out.push_back(towards_head ? Transfer{to, from, share, chain}
                               : Transfer{from, to, share, chain});
  }
  return out;
}

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

// Every ordered pair, each an independent transfer.
Transfers all_pairs(const Members& members, double share) {
  Transfers out;
  for (int src : members)
    for (int dst : members)
      if (src != dst) out.push_back({src, dst, share, -1});
  return out;
}

// The root (members[0]) and every other member, each an independent transfer.
Transfers star(const Members& members, double share, bool towards_root) {
  Transfers out;
  for (std::size_t i = 1; i < members.size(); ++i) {
    const int root = members[0], leaf = members[i];
    out.push_back(towards_root ? Transfer{leaf, root, share, -1} : Transfer{root, leaf, share, -1});
  }
  return out;
}

Stage stage(std::string name, Transfers transfers, int steps) {
  return Stage{std::move(name), std::move(transfers), steps};
}

// --- ring ------------------------------------------------------------------------------------

// NCCL's channels: with several NIC rails per node, NCCL runs one ring per rail, each leaving
// every node on a different GPU and so through a different NIC, and splits the data among
// them. Ring j visits node q's members from offset s_q = (j - q) mod m on and leaves it from
// offset s_q - 1, which is where it enters node q+1: every node-to-node edge joins two GPUs of
// one rail. One ring when channels <= 1 or the group is not m >= 2 members on each of >= 2
// nodes.
// The group's members node by node (nodes in order of first appearance, members in group
// order), when every one of >= 2 nodes holds the same number of them; empty otherwise.
std::vector<Members> uniform_nodes(const GroupLayout& group) {
  const Members& ranks = group.ranks;
  if (group.node_of.size() != ranks.size()) return {};
  std::vector<Members> nodes;
  std::unordered_map<int, std::size_t> index;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const auto [it, fresh] = index.try_emplace(group.node_of[i], nodes.size());
    if (fresh) nodes.emplace_back();
    nodes[it->second].push_back(ranks[i]);
  }
  if (nodes.size() < 2) return {};
  for (const Members& node : nodes)
    if (node.size() != nodes.front().size()) return {};
  return nodes;
}

// The number of NCCL channels a layout gets: min(channels, members per node) on uniform
// multi-node groups, else 1.
std::size_t channel_count(const GroupLayout& group, const std::vector<Members>& nodes) {
  if (group.channels <= 1 || nodes.empty()) return 1;
  return std::min<std::size_t>(group.channels, nodes.front().size());
}

std::vector<Members> channel_rings(const GroupLayout& group) {
  const std::vector<Members> nodes = uniform_nodes(group);
  const std::size_t c = channel_count(group, nodes);
  if (c <= 1) return {group.ranks};
  const std::size_t m = nodes.front().size(), k = nodes.size();
  std::vector<Members> rings(c);
  for (std::size_t j = 0; j < c; ++j)
    for (std::size_t q = 0; q < k; ++q) {
      const std::size_t start = ((j + m * k - q) % m);
      for (std::size_t i = 0; i < m; ++i) rings[j].push_back(nodes[q][(start + i) % m]);
    }
  return rings;
}

std::vector<Stage> ring_plan(CollectiveOp op, const GroupLayout& group) {
  const Members& m = group.ranks;
  const int n = static_cast<int>(m.size());
  const double fn = n;
  // Closed rings (all_reduce, reduce_scatter, all_gather) run one per channel.
  const std::vector<Members> rings = channel_rings(group);
  const double per_ring = 1.0 / static_cast<double>(rings.size());
  auto closed = [&](double share) {
    return per_group(rings, [&](const Members& ring, int32_t chain) { return ring_edges(ring, share * per_ring, chain); });
  };
  switch (op) {
    // Reduce-scatter then all-gather around the ring: 2(n-1) steps of S/n each.
    case CollectiveOp::all_reduce:
      return {stage("ring all_reduce", closed(2 * (fn - 1) / fn), 2 * (n - 1))};
    case CollectiveOp::reduce_scatter:
      return {stage("ring reduce_scatter", closed((fn - 1) / fn), n - 1)};
    case CollectiveOp::all_gather:
      return {stage("ring all_gather", closed((fn - 1) / fn), n - 1)};
    // NCCL's rooted ring is an open chain from the root: the last member sends nothing.
    case CollectiveOp::broadcast:
      return {stage("ring broadcast", chain_edges(m, 1, 0, false), n - 1)};
    case CollectiveOp::reduce:
      return {stage("ring reduce", chain_edges(m, 1, 0, true), n - 1)};
    default: break;
  }
  throw PlanError(unsupported(CollectiveAlgorithm::ring, op));
}

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

// --- halving_doubling (Rabenseifner) ---------------------------------------------------------

// One exchange round among members[0, p): member i and member i ^ distance swap `share`.
Stage exchange(std::string name, const Members& m, int p, int distance, double share) {
  Transfers out;
  for (int i = 0; i < p; ++i)
    out.push_back({m[static_cast<std::size_t>(i)], m[static_cast<std::size_t>(i ^ distance)],
                   share, -1});
  return stage(std::move(name), std::move(out), 1);
}

// Recursive halving: round j swaps half of what is left, 1/2^(j+1), at distance p/2^(j+1).
std::vector<Stage> halving(const Members& m, int p) {
  const int rounds = std::countr_zero(static_cast<unsigned>(p));
  std::vector<Stage> out;
  for (int j = 0; j < rounds; ++j) {
    const std::string name = "halving " + std::to_string(j + 1) + "/" + std::to_string(rounds);
    out.push_back(exchange(name, m, p, p >> (j + 1), 1.0 / (1 << (j + 1))));
  }
  return out;
}

// Recursive doubling, halving in reverse: round j swaps all it holds, 2^j/p, at distance 2^j.
std::vector<Stage> doubling(const Members& m, int p) {
  const int rounds = std::countr_zero(static_cast<unsigned>(p));
  std::vector<Stage> out;
  for (int j = 0; j < rounds; ++j) {
    const std::string name = "doubling " + std::to_string(j + 1) + "/" + std::to_string(rounds);
    out.push_back(exchange(name, m, p, 1 << j, static_cast<double>(1 << j) / p));
  }
  return out;
}

std::vector<Stage> halving_doubling_plan(CollectiveOp op, const Members& m) {
  const int n = static_cast<int>(m.size());
  if (op == CollectiveOp::reduce_scatter || op == CollectiveOp::all_gather) {
    // Without all_reduce's fold the pieces cannot be split evenly among a non-power-of-two.
    if (!std::has_single_bit(static_cast<unsigned>(n)))
      throw PlanError("halving_doubling " + std::string(to_string(op)) +
                      " needs a power-of-two group; got " + std::to_string(n));
    return op == CollectiveOp::reduce_scatter ? halving(m, n) : doubling(m, n);
  }
  if (op != CollectiveOp::all_reduce)
    throw PlanError(unsupported(CollectiveAlgorithm::halving_doubling, op));
  // The r members past the largest power of two p fold their data into the first r, sit out
  // the exchanges, and get the result back at the end.
  const int p = static_cast<int>(std::bit_floor(static_cast<unsigned>(n)));
  const Members extra(m.begin() + p, m.end());
  const Members partners(m.begin(), m.begin() + (n - p));
  Transfers fold, unfold;
  for (std::size_t i = 0; i < extra.size(); ++i) {
    fold.push_back({extra[i], partners[i], 1, -1});
    unfold.push_back({partners[i], extra[i], 1, -1});
  }
  std::vector<Stage> out;
  if (!fold.empty()) out.push_back(stage("fold", std::move(fold), 1));
  for (std::vector<Stage> rounds : {halving(m, p), doubling(m, p)})
    for (Stage& s : rounds) out.push_back(std::move(s));
  if (!unfold.empty()) out.push_back(stage("unfold", std::move(unfold), 1));
  return out;
}

// --- direct ----------------------------------------------------------------------------------

std::vector<Stage> direct_plan(CollectiveOp op, const Members& m) {
  const double piece = 1.0 / static_cast<double>(m.size());
  switch (op) {
    case CollectiveOp::all_to_all: return {stage("direct all_to_all", all_pairs(m, piece), 1)};
    case CollectiveOp::reduce_scatter:
      return {stage("direct reduce_scatter", all_pairs(m, piece), 1)};
    case CollectiveOp::all_gather: return {stage("direct all_gather", all_pairs(m, piece), 1)};
    case CollectiveOp::all_reduce:
      return {stage("direct reduce_scatter", all_pairs(m, piece), 1),
              stage("direct all_gather", all_pairs(m, piece), 1)};
    case CollectiveOp::broadcast: return {stage("direct broadcast", star(m, 1, false), 1)};
    case CollectiveOp::reduce: return {stage("direct reduce", star(m, 1, true), 1)};
    case CollectiveOp::send_recv:
      return {stage("send_recv", {Transfer{m[0], m[1], 1, -1}}, 1)};
  }
  throw PlanError(unsupported(CollectiveAlgorithm::direct, op));
}

// --- hierarchical (NCCL's multi-node pattern) ------------------------------------------------

// nodes[x]: node x's members in group order, nodes in order of first appearance (so nodes[0][0]
// is ranks[0], the root). rails[j]: the member with local index j on every node, in node order.
struct NodeSplit {
  std::vector<int> node_ids;  // node_of value of nodes[x]
  std::vector<Members> nodes, rails;
};

NodeSplit split_by_node(const GroupLayout& group) {
  NodeSplit split;
  std::unordered_map<int, std::size_t> index;
  for (std::size_t i = 0; i < group.ranks.size(); ++i) {
    const auto [it, fresh] = index.try_emplace(group.node_of[i], split.nodes.size());
    if (fresh) {
      split.node_ids.push_back(group.node_of[i]);
      split.nodes.emplace_back();
    }
    split.nodes[it->second].push_back(group.ranks[i]);
  }
  if (split.nodes.size() < 2)
    throw PlanError("hierarchical needs at least 2 nodes; all " +
                    std::to_string(group.ranks.size()) + " ranks are on node " +
                    std::to_string(group.node_of[0]));
  const std::size_t m = split.nodes[0].size();
  for (std::size_t x = 1; x < split.nodes.size(); ++x)
    if (split.nodes[x].size() != m)
      throw PlanError("hierarchical needs the same number of ranks on every node; node " +
                      std::to_string(split.node_ids[x]) + " has " +
                      std::to_string(split.nodes[x].size()) + ", node " +
                      std::to_string(split.node_ids[0]) + " has " + std::to_string(m));
  split.rails.resize(m);
  for (const Members& node : split.nodes)
    for (std::size_t j = 0; j < m; ++j) split.rails[j].push_back(node[j]);
  return split;
}

std::vector<Stage> hierarchical_plan(CollectiveOp op, const GroupLayout& group) {
  const NodeSplit s = split_by_node(group);
  const int m = static_cast<int>(s.rails.size()), k = static_cast<int>(s.nodes.size());
  const double fm = m, fk = k;
  const auto rings = [](const std::vector<Members>& groups, double share) {
    return per_group(groups,
                     [share](const Members& g, int32_t c) { return ring_edges(g, share, c); });
  };
  const auto chains = [](const std::vector<Members>& groups, bool towards_head) {
    return per_group(groups, [towards_head](const Members& g, int32_t c) {
      return chain_edges(g, 1, c, towards_head);
    });
  };
  // With one rank per node there is nothing to do inside a node.
  std::vector<Stage> out;
  const auto intra = [&](std::string name, Transfers t, int steps) {
    if (m > 1) out.push_back(stage(std::move(name), std::move(t), steps));
  };
  const auto inter = [&](std::string name, Transfers t, int steps) {
    out.push_back(stage(std::move(name), std::move(t), steps));
  };
  // Inside a node the ring moves (m-1)/m of S; each rail then carries only its 1/m of S.
  switch (op) {
    case CollectiveOp::all_reduce:
      intra("intra-node reduce_scatter", rings(s.nodes, (fm - 1) / fm), m - 1);
      inter("inter-node all_reduce (rail)", rings(s.rails, 2 * (fk - 1) / fk / fm), 2 * (k - 1));
      intra("intra-node all_gather", rings(s.nodes, (fm - 1) / fm), m - 1);
      return out;
    case CollectiveOp::reduce_scatter:
      intra("intra-node reduce_scatter", rings(s.nodes, (fm - 1) / fm), m - 1);
      inter("inter-node reduce_scatter (rail)", rings(s.rails, (fk - 1) / fk / fm), k - 1);
      return out;
    case CollectiveOp::all_gather:
      inter("inter-node all_gather (rail)", rings(s.rails, (fk - 1) / fk / fm), k - 1);
      intra("intra-node all_gather", rings(s.nodes, (fm - 1) / fm), m - 1);
      return out;
    // The root is nodes[0][0], so its rail is rails[0] with the root first, and every node's
    // chain starts at its rail member, nodes[x][0].
    case CollectiveOp::broadcast:
      inter("inter-node broadcast (rail)", chain_edges(s.rails[0], 1, 0, false), k - 1);
      intra("intra-node broadcast", chains(s.nodes, false), m - 1);
      return out;
    case CollectiveOp::reduce:
      intra("intra-node reduce", chains(s.nodes, true), m - 1);
      inter("inter-node reduce (rail)", chain_edges(s.rails[0], 1, 0, true), k - 1);
      return out;
    default: break;
  }
  throw PlanError(unsupported(CollectiveAlgorithm::hierarchical, op));
}

// --- in_network (NVLS in an NVSwitch node, SHARP in fabric switches) -------------------------

// The switches reduce: every rank sends its S up once and receives the reduced S down once,
// so every GPU (and NIC) link carries S each way, and each switch-to-switch link of the
// aggregation tree S each way. A ring whose edge i -> i+1 runs up from i and down to i+1
// through the switches loads every link exactly so (ranks sorted by switch cross each switch
// boundary once up and once down), in one step; with channels, each NIC rail carries its
// part. Whether the fabric can reduce is the caller's to check.
std::vector<Stage> in_network_plan(const GroupLayout& group) {
  const std::vector<Members> rings = channel_rings(group);
  const double per_ring = 1.0 / static_cast<double>(rings.size());
  return {stage("in_network all_reduce",
                per_group(rings, [&](const Members& ring, int32_t chain) { return ring_edges(ring, per_ring, chain); }),
                1)};
}

// --- checks ----------------------------------------------------------------------------------

void check_request(CollectiveOp op, CollectiveAlgorithm algorithm, const GroupLayout& group) {
  if (algorithm == CollectiveAlgorithm::automatic)
    throw PlanError("auto is not a plan: the analytical model picks an algorithm per size");
  if (op == CollectiveOp::send_recv && algorithm != CollectiveAlgorithm::direct)
    throw PlanError("send_recv accepts only algorithm direct; got " +
                    std::string(to_string(algorithm)));
  if (!supports(algorithm, op)) throw PlanError(unsupported(algorithm, op));

  const std::size_t n = group.ranks.size();
  if (op == CollectiveOp::send_recv && n != 2)
    throw PlanError("send_recv needs exactly 2 ranks; got " + std::to_string(n));
  if (n < 2)
    throw PlanError("a collective needs a group of at least 2 ranks; got " + std::to_string(n));
  const bool needs_nodes = algorithm == CollectiveAlgorithm::hierarchical;
  if ((needs_nodes || !group.node_of.empty()) && group.node_of.size() != n)
    throw PlanError("ranks and node_of sizes differ: " + std::to_string(n) + " ranks, " +
                    std::to_string(group.node_of.size()) + " node_of entries");
  std::unordered_set<int> seen;
  for (int r : group.ranks)
    if (!seen.insert(r).second)
      throw PlanError("rank " + std::to_string(r) + " appears twice in the group");
}

}  // namespace

CollectivePlan make_plan(CollectiveOp op, CollectiveAlgorithm algorithm, const GroupLayout& group) {
  check_request(op, algorithm, group);
  CollectivePlan plan{op, algorithm, group.ranks, {}};
  const Members& m = group.ranks;
  switch (algorithm) {
    case CollectiveAlgorithm::ring: plan.stages = ring_plan(op, group); break;
    case CollectiveAlgorithm::tree: plan.stages = tree_plan(op, group); break;
    case CollectiveAlgorithm::halving_doubling: plan.stages = halving_doubling_plan(op, m); break;
    case CollectiveAlgorithm::direct: plan.stages = direct_plan(op, m); break;
    case CollectiveAlgorithm::hierarchical: plan.stages = hierarchical_plan(op, group); break;
    case CollectiveAlgorithm::automatic:
    case CollectiveAlgorithm::in_network: plan.stages = in_network_plan(group); break;
  }
  return plan;
}

std::vector<CollectiveAlgorithm> algorithms_for(CollectiveOp op) {
  std::vector<CollectiveAlgorithm> out;
  for (CollectiveAlgorithm a : kPlanned)
    if (supports(a, op)) out.push_back(a);
  return out;
}

double bytes_sent_share(const CollectivePlan& plan, int rank) {
  double total = 0;
  for (const Stage& s : plan.stages)
    for (const Transfer& t : s.transfers)
      if (t.src == rank) total += t.share;
  return total;
}

}  // namespace cs::work
