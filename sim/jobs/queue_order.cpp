#include "sim/jobs/queue_order.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

namespace cs::jobs {
namespace {

// Queues sorted by key, highest first (index order on a tie), cut into groups of equal keys.
template <class Key>
std::vector<std::vector<int>> grouped(int queues, Key key) {
  std::vector<int> order(static_cast<std::size_t>(queues));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) > key(b); });
  std::vector<std::vector<int>> groups;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || key(order[i]) != key(order[i - 1])) groups.emplace_back();
    groups.back().push_back(order[i]);
  }
  return groups;
}

}  // namespace

std::vector<std::vector<int>> SubmissionOrder::groups(double) const {
  std::vector<int> all(static_cast<std::size_t>(queues_));
  std::iota(all.begin(), all.end(), 0);
  return {all};
}

std::vector<std::vector<int>> PriorityOrder::groups(double) const {
  return grouped(static_cast<int>(queues_.size()),
                 [&](int q) { return queues_[static_cast<std::size_t>(q)].priority; });
}

std::vector<std::vector<int>> FairShareOrder::groups(double now_s) const {
  const std::vector<double> f = fair_share_.factors(now_s);
  return grouped(static_cast<int>(queues_.size()), [&](int q) {
    return std::pair{queues_[static_cast<std::size_t>(q)].priority, f[static_cast<std::size_t>(q)]};
  });
}

std::unique_ptr<QueueOrder> make_queue_order(const SchedulerConfig& s, const FairShare& fair_share) {
  switch (s.policy) {
    case Policy::fifo:
    case Policy::backfill: return std::make_unique<SubmissionOrder>(static_cast<int>(s.queues.size()));
    case Policy::priority: return std::make_unique<PriorityOrder>(s.queues);
    case Policy::fair_share: return std::make_unique<FairShareOrder>(s.queues, fair_share);
  }
  return nullptr;
}

}  // namespace cs::jobs
