#include "sim/jobs/queue_order.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "sim/jobs/sort_descending.hpp"

namespace cs::jobs {
namespace {

// Queues sorted by key, highest first (index order on a tie), cut into groups of equal keys,
// into `groups` (its vectors' capacity reused). `order`: scratch.
template <class Key>
void grouped(int queues, Key key, std::vector<int>& order, QueueOrder::Groups& groups) {
  order.resize(static_cast<std::size_t>(queues));
  std::iota(order.begin(), order.end(), 0);
  sort_descending_stable(order, key);
  std::size_t used = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || key(order[i]) != key(order[i - 1])) {
      if (used == groups.size()) groups.emplace_back();
      groups[used++].clear();
    }
    groups[used - 1].push_back(order[i]);
  }
  groups.resize(used);
}

}  // namespace

SubmissionOrder::SubmissionOrder(int queues) : groups_(1, std::vector<int>(static_cast<std::size_t>(queues))) {
  std::iota(groups_[0].begin(), groups_[0].end(), 0);
}

PriorityOrder::PriorityOrder(const std::vector<QueueConfig>& queues) {
  std::vector<int> order;
  grouped(static_cast<int>(queues.size()), [&](int q) { return queues[static_cast<std::size_t>(q)].priority; },
          order, groups_);
}

const QueueOrder::Groups& FairShareOrder::groups(double now_s) {
  // The factors F = 2^x order and tie as their exponents x do when no two exponents are close
  // without being equal (factors_order_as_exponents): a pass skips the exponentials (four of
  // them per pass with four queues' jobs pending).
  fair_share_.factor_exponents(now_s, keys_);
  group_by_keys();
  // Sorted, the neighbours decide: if each pair of them orders as its factors would, every pair
  // does (two unequal exponents have an unequal neighbour pair between them). Else the factors.
  for (std::size_t i = 1; i < order_.size(); ++i)
    if (!factors_order_as_exponents(keys_[static_cast<std::size_t>(order_[i - 1])],
                                    keys_[static_cast<std::size_t>(order_[i])])) [[unlikely]] {
      group_by_factors();
      break;
    }
  return groups_;
}

void FairShareOrder::group_by_keys() {
  grouped(static_cast<int>(queues_.size()), [&](int q) {
    return std::pair{queues_[static_cast<std::size_t>(q)].priority, keys_[static_cast<std::size_t>(q)]};
  }, order_, groups_);
}

void FairShareOrder::group_by_factors() {
  for (double& x : keys_) x = std::exp2(x);
  group_by_keys();
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
