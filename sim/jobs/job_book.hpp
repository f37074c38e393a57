#pragma once
// The jobs a cluster knows of (submitted, not done) and the indexes its scheduler reads:
//   - pending jobs per queue, in submission order (a requeued job keeps its place:
//     pending_queue.hpp);
//   - jobs holding GPUs, by the time they release them (EASY's reservation);
//   - running jobs per queue, by when their current run started (preemption takes the
//     youngest first), when `track_running` (a cluster without preemption never reads it,
//     and keeping it cost two ordered-set updates per run);
//   - GPUs held per queue (caps, fair share), and the jobs on each node (failures).
// Jobs live in slots that are reused once a job is done, so memory follows the jobs in the
// system, not every job ever submitted. Not thread-safe.
#include <cstdint>
#include <set>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/jobs/job.hpp"
#include "sim/jobs/pending_queue.hpp"
#include "sim/jobs/release_index.hpp"

namespace cs::jobs {

using Slot = int32_t;

class JobBook {
 public:
  JobBook(int queues, int nodes, int gpus_per_node, bool track_running = true);

  // A new job in a free slot, every field at its default (job.hpp), for the caller to fill in
  // (built in place: a job built aside and moved in was copied twice, 256 bytes each time).
  Slot add();
  Job& at(Slot s) { return jobs_[static_cast<std::size_t>(s)]; }
  const Job& at(Slot s) const { return jobs_[static_cast<std::size_t>(s)]; }
  // Starts fetching the hot lines of job s's record (job.hpp) into the cache (a hint; reads nothing).
  void prefetch(Slot s) const {
    const char* p = reinterpret_cast<const char*>(&jobs_[static_cast<std::size_t>(s)]);
    for (std::size_t line = 0; line < kJobHotBytes; line += 64) __builtin_prefetch(p + line);
  }
  // Starts fetching the nodes of job s's allocation (reads its record: a miss unless it was
  // prefetched a while ago).
  void prefetch_allocation(Slot s) const { __builtin_prefetch(jobs_[static_cast<std::size_t>(s)].allocation.data()); }
  // Forgets a done job (its slot is reused); it must hold nothing and be in no index.
  void remove(Slot s);
  std::size_t size() const { return jobs_.size() - free_.size(); }
  template <class F>
  void for_each(F f) const {
    for (std::size_t s = 0; s < jobs_.size(); ++s)
      if (live_[s]) f(jobs_[s]);
  }

  // Pending, per queue, by id; an entry carries the job's GPUs and remaining work so that a
  // pass can skip the jobs that cannot start without reading them. A pending job's work and
  // committed work do not change until it starts.
  void enqueue(Slot s);
  void dequeue(Slot s);
  const PendingQueue& pending(int queue) const { return pending_[static_cast<std::size_t>(queue)]; }
  std::size_t pending_total() const { return pending_total_; }

  // Holding GPUs (running or stopping), by (release time, id), with the slot and the GPUs
  // held (so that EASY's reservation sums them without reading the jobs). Call hold() after
  // setting the job's allocation and release_s, unhold() before changing them.
  void hold(Slot s);
  void unhold(Slot s);
  const ReleaseIndex& by_release() const { return by_release_; }
  // Running (preemptible), per queue, by (start of the current run, id, slot); empty unless
  // track_running.
  using RunningSet = std::set<std::tuple<double, int64_t, Slot>>;
  const RunningSet& running(int queue) const { return running_[static_cast<std::size_t>(queue)]; }
  // A running job stops being preemptible (it is stopping); done by unhold() too.
  void stop_running(Slot s);
  int held_gpus(int queue) const { return held_gpus_[static_cast<std::size_t>(queue)]; }
  // The jobs holding GPUs on a node, at most its GPU count (each holds at least one there).
  std::span<const Slot> jobs_on(int node) const {
    const std::size_t at = static_cast<std::size_t>(node) * on_node_stride_;
    return {on_node_.data() + at + 1, static_cast<std::size_t>(on_node_[at])};
  }

 private:
  std::vector<Job> jobs_;
  std::vector<unsigned char> live_;
  std::vector<Slot> free_;
  std::vector<PendingQueue> pending_;
  std::size_t pending_total_ = 0;
  ReleaseIndex by_release_;
  bool track_running_;
  std::vector<RunningSet> running_;
  std::vector<int> held_gpus_;
  // Per node, one row of gpus_per_node + 1: the count, then the jobs (a flat table: a node's
  // row is one cache line or two, where a vector per node cost a pointer chase per job start
  // and end).
  std::size_t on_node_stride_;
  std::vector<Slot> on_node_;
};

}  // namespace cs::jobs
