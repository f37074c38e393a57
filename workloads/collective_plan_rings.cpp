// Rings: the pipelined ring and NCCL's channels, the hierarchical pattern, in-network reduction.
#include <algorithm>
#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>

#include "workloads/collective_plan_detail.hpp"

namespace cs::work::detail {

// --- ring ------------------------------------------------------------------------------------

// The group's members node by node: nodes in order of first appearance (so nodes[0][0] is
// ranks[0]), members in group order. Empty when node_of is not given.
std::vector<Members> members_by_node(const GroupLayout& group) {
  const Members& ranks = group.ranks;
  if (group.node_of.size() != ranks.size()) return {};
  std::vector<Members> nodes;
  std::unordered_map<int, std::size_t> index;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const auto [it, fresh] = index.try_emplace(group.node_of[i], nodes.size());
    if (fresh) nodes.emplace_back();
    nodes[it->second].push_back(ranks[i]);
  }
  return nodes;
}

// NCCL gives a group over >= 2 nodes min(channels, the most members on one node) channels;
// one on a single node, where rails do not matter.
std::size_t channel_count(const GroupLayout& group, const std::vector<Members>& nodes) {
  if (group.channels <= 1 || nodes.size() < 2) return 1;
  std::size_t most = 0;
  for (const Members& node : nodes) most = std::max(most, node.size());
  return std::min<std::size_t>(static_cast<std::size_t>(group.channels), most);
}

namespace {

// NCCL's channels: with several NIC rails per node, NCCL runs one ring per rail, each leaving
// every node on a different GPU and so through a different NIC, and splits the data among
// them. Ring j enters node q at local member e_q, walks its m_q members in order and leaves
// from the one before, x_q = (e_q - 1) mod m_q (the same member when m_q = 1), and enters node
// q+1 on that rail, e_{q+1} = x_q mod m_{q+1}; e_0 = rail_member(j, c, m_0), the channels
// spread over node 0's members and so over its NICs (j itself when c = m_0). With m members
// on every node and c = m, e_q = (j - q) mod m: every node-to-node edge but the closing one
// joins two GPUs of one rail; with fewer channels than members the entries stay spread.
// On uneven nodes a smaller node's members each carry several rings, but every NIC carries
// its part instead of one ring using one NIC. One ring (the group's order) with one channel.
std::vector<Members> channel_rings(const GroupLayout& group) {
  const std::vector<Members> nodes = members_by_node(group);
  const std::size_t c = channel_count(group, nodes);
  if (c <= 1) return {group.ranks};
  std::vector<Members> rings(c);
  for (std::size_t j = 0; j < c; ++j) {
    std::size_t enter = rail_member(j, c, nodes.front().size());
    for (const Members& node : nodes) {
      const std::size_t m = node.size();
      enter %= m;
      for (std::size_t i = 0; i < m; ++i) rings[j].push_back(node[(enter + i) % m]);
      enter = (enter + m - 1) % m;  // the member it leaves from: the next node's entry rail
    }
  }
  return rings;
}

// The ring's members from `first` on, round to the one before it.
Members starting_at(Members ring, int first) {
  std::rotate(ring.begin(), std::find(ring.begin(), ring.end(), first), ring.end());
  return ring;
}

}  // namespace

std::vector<Stage> ring_plan(CollectiveOp op, const GroupLayout& group) {
  const Members& m = group.ranks;
  const int n = static_cast<int>(m.size());
  const double fn = n;
  // One ring per channel, each with its part of the data.
  const std::vector<Members> rings = channel_rings(group);
  const double per_ring = 1.0 / static_cast<double>(rings.size());
  auto closed = [&](double share) {
    return per_group(rings, [&](const Members& ring, int32_t chain) { return ring_edges(ring, share * per_ring, chain); });
  };
  // NCCL's rooted ring is an open chain from the root, and NCCL stripes it over its channels:
  // each channel's ring turned to start at the root (ranks[0]) and opened (the edge back to
  // the root dropped, so the last member sends nothing) carries 1/c of S.
  auto from_root = [&](bool towards_root) {
    return per_group(rings, [&](const Members& ring, int32_t chain) {
      return chain_edges(starting_at(ring, m[0]), per_ring, chain, towards_root);
    });
  };
  switch (op) {
    // Reduce-scatter then all-gather around the ring: 2(n-1) steps of S/n each.
    case CollectiveOp::all_reduce:
      return {stage("ring all_reduce", closed(2 * (fn - 1) / fn), 2 * (n - 1))};
    case CollectiveOp::reduce_scatter:
      return {stage("ring reduce_scatter", closed((fn - 1) / fn), n - 1)};
    case CollectiveOp::all_gather:
      return {stage("ring all_gather", closed((fn - 1) / fn), n - 1)};
    case CollectiveOp::broadcast: return {stage("ring broadcast", from_root(false), n - 1)};
    case CollectiveOp::reduce: return {stage("ring reduce", from_root(true), n - 1)};
    default: break;
  }
  throw PlanError(unsupported(CollectiveAlgorithm::ring, op));
}

// --- hierarchical (NCCL's multi-node pattern) ------------------------------------------------

namespace {

// nodes[x]: node x's members (members_by_node). rails[j]: the member with local index j on
// every node, in node order.
struct NodeSplit {
  std::vector<Members> nodes, rails;
};

NodeSplit split_by_node(const GroupLayout& group) {
  NodeSplit split{members_by_node(group), {}};
  const auto node_id = [&](std::size_t x) {  // node_of of nodes[x], for messages
    const auto first = std::find(group.ranks.begin(), group.ranks.end(), split.nodes[x][0]);
    return std::to_string(group.node_of[static_cast<std::size_t>(first - group.ranks.begin())]);
  };
  if (split.nodes.size() < 2)
    throw PlanError("hierarchical needs at least 2 nodes; all " +
                    std::to_string(group.ranks.size()) + " ranks are on node " + node_id(0));
  const std::size_t m = split.nodes[0].size();
  for (std::size_t x = 1; x < split.nodes.size(); ++x)
    if (split.nodes[x].size() != m)
      throw PlanError("hierarchical needs the same number of ranks on every node; node " +
                      node_id(x) + " has " + std::to_string(split.nodes[x].size()) +
                      ", node " + node_id(0) + " has " + std::to_string(m));
  split.rails.resize(m);
  for (const Members& node : split.nodes)
    for (std::size_t j = 0; j < m; ++j) split.rails[j].push_back(node[j]);
  return split;
}

}  // namespace

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

namespace {

// The group with its members in node id order, group order within a node (stable).
GroupLayout by_node_id(const GroupLayout& group) {
  const std::size_t n = group.ranks.size();
  if (group.node_of.size() != n) return group;
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return group.node_of[a] < group.node_of[b]; });
  GroupLayout out{{}, {}, group.channels, group.torus_dims, group.torus_slices};
  for (std::size_t i : order) {
    out.ranks.push_back(group.ranks[i]);
    out.node_of.push_back(group.node_of[i]);
  }
  return out;
}

}  // namespace

// The switches reduce. A ring whose edge i -> i+1 runs up from i and down to i+1 through a
// switch loads every link below it with the ring's share each way, in one step: that is how
// these plans put traffic on the links (routes join ranks; the switch is on the way).
//
// NVLS in a node of m members: the NVSwitch reads and reduces each GPU's shard from all m
// (multimem ld_reduce: each GPU sends its whole S up, gets its reduced S/m back), then
// multicasts the shards (each GPU sends S/m up, gets S back): S (m+1)/m each way on every GPU
// link. So one ring per node with that share.
//
// SHARP across nodes, after NVLS inside them: on every node each member holds one reduced
// shard of S/m, and rail j (the j-th member of every node, through its NIC) reduces its shard
// in the fabric's switches and back: a ring over the nodes' j-th members with share 1/m, which
// crosses each NIC and switch boundary once up and once down. With one member per node, that
// is one ring of all the group with share 1. The node rings and the rail rings run at once
// (NCCL pipelines them), each a pipeline of its own; the stage ends with the last.
//
// Rings walk the nodes in node id order, whatever the group's order (fabrics number their
// nodes switch by switch): with 1-GPU nodes 0 and 1 on one switch and 2 and 3 on another, the
// group [0, 2, 1, 3] in its own order would cross between the switches twice each way. Nodes
// holding different numbers of members have no common shard size: there one ring per channel
// over the whole group with share 1 (every link S each way, NVLS's extra S/m aside). Whether
// the fabric can reduce is the caller's to check.
std::vector<Stage> in_network_plan(const GroupLayout& group) {
  const GroupLayout sorted = by_node_id(group);
  std::vector<Members> nodes = members_by_node(sorted);
  if (nodes.empty()) nodes = {sorted.ranks};  // no layout: one node
  const std::size_t m = nodes.front().size();
  const bool uniform = std::all_of(nodes.begin(), nodes.end(), [m](const Members& node) { return node.size() == m; });
  if (!uniform) {
    const std::vector<Members> rings = channel_rings(sorted);
    const double per_ring = 1.0 / static_cast<double>(rings.size());
    return {stage("in_network all_reduce (rings through the switches)",
                  per_group(rings, [&](const Members& ring, int32_t chain) { return ring_edges(ring, per_ring, chain); }),
                  1)};
  }
  std::vector<Members> rings;  // node rings (NVLS), then rail rings (SHARP)
  std::vector<double> shares;
  if (m >= 2)
    for (const Members& node : nodes) {
      rings.push_back(node);
      shares.push_back((static_cast<double>(m) + 1) / static_cast<double>(m));
    }
  if (nodes.size() >= 2)
    for (std::size_t j = 0; j < m; ++j) {
      Members rail;
      for (const Members& node : nodes) rail.push_back(node[j]);
      rings.push_back(std::move(rail));
      shares.push_back(1.0 / static_cast<double>(m));
    }
  Transfers edges;
  for (std::size_t r = 0; r < rings.size(); ++r) {
    Transfers part = ring_edges(rings[r], shares[r], static_cast<int32_t>(r));
    edges.insert(edges.end(), part.begin(), part.end());
  }
  return {stage("in_network all_reduce", std::move(edges), 1)};
}

}  // namespace cs::work::detail
