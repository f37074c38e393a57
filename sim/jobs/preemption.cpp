#include "sim/jobs/preemption.hpp"

#include <algorithm>
#include <numeric>

namespace cs::jobs {

std::vector<Slot> choose_victims(int queue, int gpus, const std::vector<QueueConfig>& queues,
                                 const JobBook& book, const ClusterState& cluster) {
  int free = cluster.free_gpus();
  if (free >= gpus) return {};
  const int priority = queues[static_cast<std::size_t>(queue)].priority;
  std::vector<int> lower;
  for (int q = 0; q < static_cast<int>(queues.size()); ++q)
    if (queues[static_cast<std::size_t>(q)].priority < priority && !book.running(q).empty()) lower.push_back(q);
  std::stable_sort(lower.begin(), lower.end(), [&](int a, int b) {
    return queues[static_cast<std::size_t>(a)].priority < queues[static_cast<std::size_t>(b)].priority;
  });
  std::vector<Slot> victims;
  for (const int q : lower) {
    const JobBook::RunningSet& running = book.running(q);
    for (auto it = running.rbegin(); it != running.rend() && free < gpus; ++it) {
      const Slot s = std::get<2>(*it);
      for (const NodeShare& n : book.at(s).allocation)
        if (cluster.available(n.node)) free += n.gpus;
      victims.push_back(s);
    }
    if (free >= gpus) return victims;
  }
  return {};
}

}  // namespace cs::jobs
