#include "sim/jobs/easy_backfill.hpp"

namespace cs::jobs {
namespace {

// GPUs a job gives back to the free pool when it releases them: those on nodes in service.
int returning_gpus(const Job& j, const ClusterState& cluster) {
  int n = 0;
  for (const NodeShare& s : j.allocation)
    if (cluster.available(s.node)) n += s.gpus;
  return n;
}

}  // namespace

Reservation reserve(int head_gpus, const ClusterState& cluster, const JobBook& book) {
  Reservation r;
  int free = cluster.free_gpus();
  // While no allocated GPU sits on a node that is out, every job gives back all it holds.
  const bool all_return = cluster.allocated_unavailable_gpus() == 0;
  book.by_release().walk([&](const ReleaseIndex::Entry& e) {
    if (free >= head_gpus) return false;
    free += all_return ? e.gpus : returning_gpus(book.at(e.slot), cluster);
    r.shadow_s = e.release_s;
    return true;
  });
  if (free < head_gpus) {
    // Not enough GPUs come back (nodes are out): no reservation holds; backfill freely.
    r.shadow_s = std::numeric_limits<double>::infinity();
    r.extra_gpus = cluster.free_gpus();
    return r;
  }
  r.extra_gpus = free - head_gpus;
  return r;
}

bool admit_backfill(Reservation& r, int gpus, double release_s) {
  if (release_s <= r.shadow_s) return true;
  if (gpus <= r.extra_gpus) {
    r.extra_gpus -= gpus;
    return true;
  }
  return false;
}

}  // namespace cs::jobs
