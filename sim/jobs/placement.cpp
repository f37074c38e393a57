#include "sim/jobs/placement.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

#include "sim/jobs/sort_descending.hpp"

namespace cs::jobs {
namespace {

// Packs `need` GPUs into domain d (-1: the whole cluster), which has at least that many free:
// whole free nodes first, then the fullest node that holds the rest (best fit), or else the
// emptiest nodes first (the fewest nodes). Buckets are read, never changed: `used[k]` counts
// the nodes already taken from the front of bucket k.
void pack(const ClusterState& c, int d, int need, Allocation& out) {
  if (d < 0 && !c.has_cluster_buckets())
    throw std::logic_error("place: pack placement needs the cluster-wide buckets (ClusterState's cluster_buckets)");
  const int g = c.gpus_per_node();
  // The counts on the stack for nodes of up to 16 GPUs, on the heap past that: every start
  // packs, and this buffer was half of a run's allocations.
  std::array<int, 17> on_stack{};
  std::vector<int> on_heap;
  if (static_cast<std::size_t>(g) >= on_stack.size()) on_heap.assign(static_cast<std::size_t>(g) + 1, 0);
  int* const used = on_heap.empty() ? on_stack.data() : on_heap.data();
  const auto take = [&](int k, int gpus) {
    const int node = c.nodes_with_free(d, k)[static_cast<std::size_t>(used[static_cast<std::size_t>(k)]++)];
    out.push_back({node, gpus});
    need -= gpus;
  };
  const auto left = [&](int k) {
    return static_cast<int>(c.nodes_with_free(d, k).size()) - used[static_cast<std::size_t>(k)];
  };
  while (need >= g && left(g) > 0) take(g, g);
  if (need == 0) return;
  for (int k = need; k <= g; ++k)
    if (left(k) > 0) {
      take(k, need);
      return;
    }
  for (int k = g; k >= 1 && need > 0; --k)
    while (need > 0 && left(k) > 0) take(k, std::min(k, need));
  if (need > 0) throw std::logic_error("place: fewer free GPUs than the caller checked");
}

void first_fit(const ClusterState& c, int need, Allocation& out) {
  for (int d = 0; d < c.domains() && need > 0; ++d) {
    if (c.free_in_domain(d) == 0) continue;
    for (const int node : c.nodes_of_domain(d)) {
      const int gpus = std::min(c.free_on(node), need);
      if (gpus == 0) continue;
      out.push_back({node, gpus});
      need -= gpus;
      if (need == 0) break;
    }
  }
  if (need > 0) throw std::logic_error("place: fewer free GPUs than the caller checked");
}

void topology_aware(const ClusterState& c, int need, Allocation& out) {
  // The fullest domain that holds the whole job (best fit, lowest index on a tie).
  const int best = c.best_fit_domain(need);
  if (best >= 0) {
    pack(c, best, need, out);
    return;
  }
  // No domain holds it: the emptiest domains first, the fewest spanned.
  std::vector<int> order;
  for (int d = 0; d < c.domains(); ++d)
    if (c.free_in_domain(d) > 0) order.push_back(d);
  sort_descending_stable(order, [&](int d) { return c.free_in_domain(d); });
  for (const int d : order) {
    if (need == 0) break;
    const int here = std::min(need, c.free_in_domain(d));
    pack(c, d, here, out);
    need -= here;
  }
}

}  // namespace

void place(const ClusterState& cluster, int gpus, PlacementPolicy policy, Allocation& out) {
  if (gpus < 1 || gpus > cluster.free_gpus())
    throw std::logic_error("place: asked for " + std::to_string(gpus) + " GPUs with " +
                           std::to_string(cluster.free_gpus()) + " free");
  out.clear();
  switch (policy) {
    case PlacementPolicy::any: first_fit(cluster, gpus, out); break;
    case PlacementPolicy::pack: pack(cluster, -1, gpus, out); break;
    case PlacementPolicy::topology: topology_aware(cluster, gpus, out); break;
  }
}

Allocation place(const ClusterState& cluster, int gpus, PlacementPolicy policy) {
  Allocation out;
  place(cluster, gpus, policy, out);
  return out;
}

}  // namespace cs::jobs
