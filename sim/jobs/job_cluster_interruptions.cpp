// A shared cluster's interruptions of running jobs: preemption, and the fleet's node failures,
// spot reclaim notices (with their emergency checkpoints), reclaims and nodes coming back
// (job_cluster.hpp says what each does to a job).
#include <algorithm>
#include <span>
#include <vector>

#include "sim/jobs/job_cluster.hpp"

namespace cs::jobs {

void JobCluster::interrupt(Slot s, Cause cause) {
  Job& j = book_.at(s);
  if (j.phase == JobPhase::stopping && j.commit_at_release_s >= 0.0 && j.release_s <= sim_.now()) {
    // Its emergency checkpoint is durable as the nodes go (the reclaim, noticed first, runs
    // first at that instant): it leaves with its work saved, not interrupted.
    release_and_requeue(s);
    return;
  }
  if (cause == Cause::preemption) {
    ++j.preemptions;
    ++preempted_[static_cast<std::size_t>(j.queue)];
  } else {
    ++j.interruptions;
    ++interruptions_;
  }
  if (j.phase == JobPhase::stopping) {
    // Already leaving; an emergency checkpoint being written dies with its node.
    j.commit_at_release_s = -1.0;
    if (cause != Cause::failure) release_and_requeue(s);
    return;
  }
  const double now = sim_.now();
  const double work = close_segment(j);
  const double committed = j.run.committed_at(now);
  j.lost_work_s += work - committed;
  lost_gpu_s_ += (work - committed) / j.run.rate * j.gpus;
  j.committed_s = committed;
  if (cause != Cause::failure) {
    release_and_requeue(s);
    return;
  }
  // The job hangs on its GPUs until the failure is detected.
  stalled_gpu_s_ += config_.restore.detection_s * j.gpus;
  unhold(s);
  j.phase = JobPhase::stopping;
  hold(s, now + config_.restore.detection_s);
}

void JobCluster::preempt(Slot s) { interrupt(s, Cause::preemption); }


// The job trains on through the notice; its checkpoint starts as late as it can be durable
// when the nodes go. A notice shorter than the write saves nothing: it runs on and loses its
// work at the reclaim. Of several notices on its nodes the first to end counts.
void JobCluster::plan_emergency_checkpoint(Slot s, double leave_s) {
  Job& j = book_.at(s);
  if (j.phase != JobPhase::running || !config_.checkpoint || !config_.checkpoint->emergency_on_notice) return;
  if (j.notice_event.valid() && j.leave_s <= leave_s) return;
  const double start = leave_s - config_.checkpoint->durable_s(ClusterState::node_count(j.allocation));
  if (start < sim_.now() || start >= j.run.end_s()) return;  // no time to write it, or no need
  sim_.cancel(j.notice_event);
  j.leave_s = leave_s;
  j.notice_event = sim_.schedule_at(start, *this, tag(Tag::emergency_checkpoint, static_cast<uint64_t>(s)));
}

void JobCluster::emergency_checkpoint(Slot s) {
  Job& j = book_.at(s);
  j.notice_event = {};
  const double work = close_segment(j);
  ++emergency_;
  stalled_gpu_s_ += (j.leave_s - sim_.now()) * j.gpus;
  unhold(s);
  j.phase = JobPhase::stopping;
  j.commit_at_release_s = work;
  hold(s, j.leave_s);  // durable as the nodes go, exactly
}

std::vector<int> JobCluster::nodes_of(const fleet::InstancePool& pool, std::span<const int> ids) const {
  std::vector<int> nodes;
  for (const int id : ids) nodes.push_back(first_node_[pool.market()] + id);
  return nodes;
}

std::vector<Slot> JobCluster::jobs_on(const std::vector<int>& nodes) const {
  std::vector<Slot> slots;
  for (const int n : nodes)
    for (const Slot s : book_.jobs_on(n))
      if (std::find(slots.begin(), slots.end(), s) == slots.end()) slots.push_back(s);
  return slots;
}

void JobCluster::on_reclaim_notice(fleet::InstancePool& pool, std::span<const int> ids, double warning_s) {
  if (done_) return;
  const std::vector<int> nodes = nodes_of(pool, ids);
  for (const int n : nodes) cluster_.set_available(n, false);  // draining: nothing new lands there
  available_.set(sim_.now(), cluster_.in_service_gpus());
  for (const Slot s : jobs_on(nodes)) plan_emergency_checkpoint(s, sim_.now() + warning_s);
}

void JobCluster::on_interruption(fleet::InstancePool& pool, std::span<const int> ids,
                                 const fleet::Interruption& event) {
  if (done_) return;
  const std::vector<int> nodes = nodes_of(pool, ids);
  if (event.instances_lost) {
    for (const int n : nodes) cluster_.set_available(n, false);
    available_.set(sim_.now(), cluster_.in_service_gpus());
  }
  const Cause cause = event.kind == fleet::LossKind::spot_reclaim ? Cause::reclaim : Cause::failure;
  for (const Slot s : jobs_on(nodes)) interrupt(s, cause);
}

void JobCluster::on_ready(fleet::InstancePool& pool, std::span<const int> ids) {
  if (done_) return;
  for (const int n : nodes_of(pool, ids)) cluster_.set_available(n, true);
  available_.set(sim_.now(), cluster_.in_service_gpus());
  request_pass();
}

}  // namespace cs::jobs
