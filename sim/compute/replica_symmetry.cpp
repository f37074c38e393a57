#include "sim/compute/replica_symmetry.hpp"

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

}  // namespace cs::compute
