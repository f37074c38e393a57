#pragma once
// The order in which a scheduling pass considers pending jobs: a strategy per policy
// (jobs_config.hpp: Policy). Each gives the queues in groups: every pending job of a group
// comes before those of the next group, and within a group jobs go in submission order (so a
// group of several queues interleaves them first come, first served).
//   SubmissionOrder (fifo, backfill): one group of every queue (Slurm's priority/basic: a
//     job's priority falls with its submission).
//   PriorityOrder (priority): by queue priority, highest first (Slurm evaluates partitions
//     by PriorityTier before job priority: priority_sort_part_tier).
//   FairShareOrder (fair_share): by queue priority, then by the queue's classic fair-share
//     factor (fair_share.hpp), highest first; queues with equal factors share a group.
// A pass asks for the groups every time: they come in a buffer the order keeps and refills (no
// allocation per pass), valid until the next call.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "sim/jobs/fair_share.hpp"
#include "sim/jobs/jobs_config.hpp"

namespace cs::jobs {

class QueueOrder {
 public:
  virtual ~QueueOrder() = default;
  using Groups = std::vector<std::vector<int>>;
  virtual const Groups& groups(double now_s) = 0;
};

class SubmissionOrder final : public QueueOrder {
 public:
  explicit SubmissionOrder(int queues);
  const Groups& groups(double) override { return groups_; }

 private:
  Groups groups_;  // fixed
};

class PriorityOrder final : public QueueOrder {
 public:
  explicit PriorityOrder(const std::vector<QueueConfig>& queues);
  const Groups& groups(double) override { return groups_; }

 private:
  Groups groups_;  // fixed: priorities do not change during a run
};

class FairShareOrder final : public QueueOrder {
 public:
  FairShareOrder(std::vector<QueueConfig> queues, const FairShare& fair_share)
      : queues_(std::move(queues)), fair_share_(fair_share) {}
  const Groups& groups(double now_s) override;

 private:
  // groups_ and order_ by (priority, keys_), highest first.
  void group_by_keys();
  // keys_ made the factors (2^exponent), then grouped by them (out of line: rare).
  [[gnu::noinline, gnu::cold]] void group_by_factors();

  std::vector<QueueConfig> queues_;
  const FairShare& fair_share_;
  std::vector<double> keys_;     // scratch: the factors' exponents, or the factors
  std::vector<int> order_;       // scratch
  Groups groups_;
};

// Whether two fair-share factors 2^a and 2^b (std::exp2) order and tie exactly as a and b do:
// true when a == b, or when they differ by more than 1e-12 and neither is NaN or at most -1000
// (-infinity, a factor of exactly 0, is allowed against an exponent above -1000). Why: exp2 is
// within an ulp or so of 2^x (glibc's bound for it is 1 ulp), so exponents more than 1e-12
// apart give factors a factor of at least 1 + 6.9e-13 apart before rounding, which cannot
// round to equal or reversed values; equal exponents give equal factors (-0 and +0 both 1).
// Exponents at or below -1000 give subnormal or zero factors, with fewer bits.
inline bool factors_order_as_exponents(double a, double b) {
  constexpr double kApart = 1e-12, kLowest = -1000.0;
  if (a == b) return true;
  const double low = std::min(a, b), high = std::max(a, b);
  return std::fabs(a - b) > kApart && high > kLowest &&
         (low > kLowest || low == -std::numeric_limits<double>::infinity());
}

// The policy's order; `fair_share` must outlive it.
std::unique_ptr<QueueOrder> make_queue_order(const SchedulerConfig& scheduler, const FairShare& fair_share);

}  // namespace cs::jobs
