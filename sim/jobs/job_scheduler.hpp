#pragma once
// One scheduling pass of a shared cluster: which pending jobs start now, on which GPUs, and
// which running jobs are preempted for them. The policy's parts are strategy objects:
// the order (queue_order.hpp), EASY backfilling (easy_backfill.hpp), preemption
// (preemption.hpp), placement (placement.hpp).
//
// A pass walks the pending jobs in the policy's order. For each job:
//   1. Its queue's cap: a job whose GPUs would take its queue over max_gpus is skipped (held
//      by a limit, as a Slurm job pending on a GrpTRES limit: it blocks nothing).
//   2. Gang scheduling: it starts only if all its GPUs are free now, placed by the placement
//      policy. With topology placement and max_switch_wait, a job whose placement would span
//      more domains than it needs is skipped until it has waited that long (a pass is asked
//      for then). With a head reservation set (backfilling), only if it does not delay the head
//      (easy_backfill.hpp; a job of the head's queue must also leave the head room under the
//      cap unless it is done by the shadow time).
//   3. Otherwise, before any reservation is set, with preemption: it takes the GPUs of
//      lower-priority queues' running jobs if they suffice.
//   4. Otherwise, backfilling: the first such job becomes the head and gets the reservation;
//      later ones are skipped. Without backfilling, the job blocks the rest of its queue for
//      this pass (Slurm's sched/builtin: "once any job in a partition is left pending, no other
//      jobs in that partition will be scheduled"), while other queues go on.
// A pass examines at most bf_max_job_test jobs after the reservation is set, and stops early
// when nothing more could start (no free GPUs, and nothing left to preempt for).
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/jobs/cluster_state.hpp"
#include "sim/jobs/fair_share.hpp"
#include "sim/jobs/job_book.hpp"
#include "sim/jobs/jobs_config.hpp"
#include "sim/jobs/queue_order.hpp"

namespace cs::jobs {

// What a pass needs from the cluster that runs the jobs.
class SchedulerHost {
 public:
  virtual ~SchedulerHost() = default;
  // When job s would release `allocation` if it started on it now (its run's end).
  virtual double release_if_started(Slot s, const Allocation& allocation) = 0;
  // Starts pending job s on `allocation` (all of its GPUs, free now; copied: the pass reuses
  // its buffer).
  virtual void start(Slot s, const Allocation& allocation) = 0;
  // Preempts running job s: it loses its work since its last checkpoint and is requeued.
  virtual void preempt(Slot s) = 0;
  // Asks for a pass at time t (later than now).
  virtual void pass_at(double t) = 0;
};

class JobScheduler {
 public:
  JobScheduler(const SchedulerConfig& config, JobBook& book, ClusterState& cluster,
               const FairShare& fair_share, SchedulerHost& host);

  // One pass at now_s; returns the jobs it started. (Inline up to the walk: nearly half the
  // passes find nothing pending or no free GPU, and the walk's frame was most of their cost.)
  int pass(double now_s) {
    ++passes_;
    if (book_.pending_total() == 0 || (cluster_.free_gpus() == 0 && !config_.preemption)) return 0;
    return walk(now_s);
  }
  uint64_t passes() const { return passes_; }
  uint64_t jobs_examined() const { return examined_; }

 private:
  // The pass past its first test: the pending jobs in the policy's order.
  int walk(double now_s);
  // Whether `job`, placed on `a`, should wait for a placement in fewer domains (asks for a
  // pass when its wait ends).
  bool waits_for_switches(const Job& job, const Allocation& a, double now_s);
  // The policy's groups of queues for a pass at now_s (one_queue_ when one queue has pending
  // jobs and no preemption can requeue any).
  const QueueOrder::Groups& groups(double now_s);

  const SchedulerConfig& config_;
  JobBook& book_;
  ClusterState& cluster_;
  SchedulerHost& host_;
  std::unique_ptr<QueueOrder> order_;
  QueueOrder::Groups one_queue_;
  // A pass's per-queue state, kept between passes so that a pass allocates nothing.
  std::vector<char> blocked_;
  bool any_blocked_ = false;  // some flag of blocked_ set
  std::vector<PendingQueue::Cursor> cursor_;
  Allocation placement_;  // the placement being tried
  uint64_t passes_ = 0;
  uint64_t examined_ = 0;
};

}  // namespace cs::jobs
