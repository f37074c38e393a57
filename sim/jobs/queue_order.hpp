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
  std::vector<QueueConfig> queues_;
  const FairShare& fair_share_;
  std::vector<double> factors_;  // scratch
  std::vector<int> order_;       // scratch
  Groups groups_;
};

// The policy's order; `fair_share` must outlive it.
std::unique_ptr<QueueOrder> make_queue_order(const SchedulerConfig& scheduler, const FairShare& fair_share);

}  // namespace cs::jobs
