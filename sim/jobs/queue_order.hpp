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
#include <memory>
#include <vector>

#include "sim/jobs/fair_share.hpp"
#include "sim/jobs/jobs_config.hpp"

namespace cs::jobs {

class QueueOrder {
 public:
  virtual ~QueueOrder() = default;
  virtual std::vector<std::vector<int>> groups(double now_s) const = 0;
};

class SubmissionOrder final : public QueueOrder {
 public:
  explicit SubmissionOrder(int queues) : queues_(queues) {}
  std::vector<std::vector<int>> groups(double now_s) const override;

 private:
  int queues_;
};

class PriorityOrder final : public QueueOrder {
 public:
  explicit PriorityOrder(std::vector<QueueConfig> queues) : queues_(std::move(queues)) {}
  std::vector<std::vector<int>> groups(double now_s) const override;

 private:
  std::vector<QueueConfig> queues_;
};

class FairShareOrder final : public QueueOrder {
 public:
  FairShareOrder(std::vector<QueueConfig> queues, const FairShare& fair_share)
      : queues_(std::move(queues)), fair_share_(fair_share) {}
  std::vector<std::vector<int>> groups(double now_s) const override;

 private:
  std::vector<QueueConfig> queues_;
  const FairShare& fair_share_;
};

// The policy's order; `fair_share` must outlive it.
std::unique_ptr<QueueOrder> make_queue_order(const SchedulerConfig& scheduler, const FairShare& fair_share);

}  // namespace cs::jobs
