#include "sim/compute/replica_symmetry.hpp"

#include <unordered_map>

#include "workloads/training_placement.hpp"

namespace cs::compute {

ShortcutVerdict one_replica_exact(const work::TrainingWorkload& w, const std::vector<int>& gpu_of_rank,
                                  NodeShape node) {
  const work::RankLayout layout(w.parallel);
  const int replicas = layout.size(work::Dim::edp);
  if (replicas == 1) return {true, "one data-parallel replica: nothing to mirror"};
  if (!node.star)
    return {false, "the node fabric is not a star (an NVLink mesh or PCIe switches): replicas may contend unevenly"};
  const auto node_of = [&](int rank) { return gpu_of_rank[std::size_t(rank)] / node.gpus_per_node; };
  for (int r = 0; r < layout.ranks(); ++r) {
    work::RankCoords first = layout.coords(r);
    first.tp = first.cp = first.ep = first.pp = 0;
    if (node_of(r) != node_of(layout.rank(first)))
      return {false, "a replica's GPUs span nodes: its tensor or pipeline traffic crosses the fabric, "
                     "where replicas may contend unevenly"};
  }
  return {true, "each replica's GPUs share a star-fabric node: replicas run alike"};
}

std::vector<uint8_t> isolated_mirrored_groups(const work::TrainingWorkload& w, const work::TaskGraph& g,
                                              const std::vector<int>& gpu_of_rank, NodeShape node) {
  std::vector<uint8_t> isolated(g.groups.size(), 0);
  if (!node.star || g.replicas_built == g.replicas) return isolated;
  std::vector<uint8_t> built(std::size_t(g.ranks), 0);
  for (const auto& worker : g.workers)
    for (int r : worker.ranks) built[std::size_t(r)] = 1;
  const auto node_of = [&](int rank) { return gpu_of_rank[std::size_t(rank)] / node.gpus_per_node; };
  // Per rank: the groups that have it and another member on its node (the all-ranks group aside).
  std::vector<int> node_sharing(std::size_t(g.ranks), 0);
  std::unordered_map<int, int> per_node;
  for (const auto& group : g.groups) {
    if (int(group.size()) == g.ranks && g.ranks > 2) continue;  // the gradient-norm all-reduce
    per_node.clear();
    for (int r : group) ++per_node[node_of(r)];
    for (int r : group)
      if (per_node[node_of(r)] > 1) ++node_sharing[std::size_t(r)];
  }
  const work::RankLayout layout(w.parallel);
  const auto counterpart = [&](int rank) {
    work::RankCoords c = layout.coords(rank);
    c.edp = 0;
    return layout.rank(c);
  };
  for (std::size_t i = 0; i < g.groups.size(); ++i) {
    const auto& group = g.groups[i];
    bool ok = true;
    for (int r : group)
      ok = ok && !built[std::size_t(r)] && node_sharing[std::size_t(r)] == 1 &&  // this group only
           node_of(r) == node_of(group.front()) && node_of(counterpart(r)) == node_of(counterpart(group.front()));
    isolated[i] = ok;
  }
  return isolated;
}

}  // namespace cs::compute
