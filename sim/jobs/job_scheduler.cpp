#include "sim/jobs/job_scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "sim/jobs/easy_backfill.hpp"
#include "sim/jobs/placement.hpp"
#include "sim/jobs/preemption.hpp"

namespace cs::jobs {

JobScheduler::JobScheduler(const SchedulerConfig& config, JobBook& book, ClusterState& cluster,
                           const FairShare& fair_share, SchedulerHost& host)
    : config_(config),
      book_(book),
      cluster_(cluster),
      host_(host),
      order_(make_queue_order(config, fair_share)),
      one_queue_(1, std::vector<int>(1, 0)) {}

bool JobScheduler::waits_for_switches(const Job& job, const Allocation& a, double now_s) {
  if (config_.placement != PlacementPolicy::topology || !(config_.max_switch_wait_s > 0.0)) return false;
  const double until = job.pending_since_s + config_.max_switch_wait_s;
  if (now_s >= until || cluster_.spread(a) <= cluster_.min_spread(job.gpus)) return false;
  host_.pass_at(until);
  return true;
}

const QueueOrder::Groups& JobScheduler::groups(double now_s) {
  // With pending jobs in one queue only, the order of the queues cannot matter (the others'
  // cursors find nothing), and the fair-share order costs a dozen exponentials: skip it.
  // Not with preemption, which may requeue jobs into another queue during the pass.
  if (!config_.preemption) {
    int only = -1;
    for (int q = 0; q < static_cast<int>(config_.queues.size()); ++q) {
      if (book_.pending(q).empty()) continue;
      if (only >= 0) return order_->groups(now_s);
      only = q;
    }
    one_queue_[0][0] = only;
    return one_queue_;
  }
  return order_->groups(now_s);
}

int JobScheduler::walk(double now_s) {
  const auto& queues = config_.queues;
  const std::size_t n = queues.size();
  // Queues blocked by the last pass, if any, unblocked (only a pass without backfilling blocks:
  // clearing the flags every pass was a call to memset per pass).
  std::vector<char>& blocked = blocked_;
  if (any_blocked_ || blocked.size() != n) {
    blocked.assign(n, 0);
    any_blocked_ = false;
  }
  // Each queue's cursor. It moves past a job before the job can start (which erases it from
  // the queue); inserting (a preempted job requeued) leaves cursors valid.
  std::vector<PendingQueue::Cursor>& cursor = cursor_;
  cursor.resize(n);
  std::optional<Reservation> head;
  int head_queue = -1, head_gpus = 0;
  int examined_after_head = 0, started = 0;
  const auto nothing_more = [&] { return cluster_.free_gpus() == 0 && (head || !config_.preemption); };

  for (const std::vector<int>& group : groups(now_s)) {
    for (const int g : group) cursor[static_cast<std::size_t>(g)] = book_.pending(g).begin();
    while (true) {
      // The group's next job: the lowest id among its queues' cursors; and the next lowest.
      int q = -1;
      const PendingQueue::Entry* next = nullptr;
      int64_t after_next = std::numeric_limits<int64_t>::max();
      for (const int g : group) {
        if (blocked[static_cast<std::size_t>(g)]) continue;
        const PendingQueue::Entry* e = book_.pending(g).peek(cursor[static_cast<std::size_t>(g)]);
        if (e == nullptr) continue;
        if (next == nullptr || e->id < next->id) {
          if (next != nullptr) after_next = next->id;
          q = g;
          next = e;
        } else {
          after_next = std::min(after_next, e->id);
        }
      }
      if (q < 0) break;
      if (head) {
        // With a reservation set, a job held by its cap, or that does not fit the free GPUs,
        // or that could backfill only by the extra GPUs and has more than those, is examined
        // and passed over, nothing else (the checks below, in one tight loop): pass over the
        // run of them in this queue before the group's next job from another queue, counting
        // them, up to the job past bf_max_job_test.
        const auto budget = static_cast<std::size_t>(int64_t{config_.bf_max_job_test} - examined_after_head + 1);
        const int room = std::min(cluster_.free_gpus(), queues[static_cast<std::size_t>(q)].max_gpus - book_.held_gpus(q));
        const Reservation& r = *head;
        const std::size_t passed = book_.pending(q).pass_over(
            cursor[static_cast<std::size_t>(q)], after_next, budget, [&](const PendingQueue::Entry& e) {
              // Without branches (sign bits and `|`, `&`): which clause holds is data, and its
              // mispredicted branches were most of this loop's time.
              const unsigned over_room = static_cast<unsigned>(room - e.gpus) >> 31;
              const unsigned over_extra = static_cast<unsigned>(r.extra_gpus - e.gpus) >> 31;
              const unsigned late = now_s + e.remaining_s > r.shadow_s;
              return (over_room | (over_extra & late)) != 0;
            });
        examined_ += passed;
        examined_after_head += static_cast<int>(passed);
        if (examined_after_head > config_.bf_max_job_test) return started;
        if (passed > 0) continue;
      }
      const PendingQueue::Entry entry = *next;
      book_.pending(q).advance(cursor[static_cast<std::size_t>(q)]);
      ++examined_;
      if (head && ++examined_after_head > config_.bf_max_job_test) return started;
      const QueueConfig& queue = queues[static_cast<std::size_t>(q)];
      if (book_.held_gpus(q) + entry.gpus > queue.max_gpus) continue;  // held by its cap
      const bool fits = entry.gpus <= cluster_.free_gpus();
      if (head && !fits) continue;  // only jobs that fit now may backfill
      if (fits) {
        // Backfilling: no placement runs faster than a compact one, so a job whose remaining
        // work alone outlasts the shadow time needs the extra GPUs.
        if (head && entry.gpus > head->extra_gpus && now_s + entry.remaining_s > head->shadow_s) continue;
        // The job's record is at a random place in the book: start fetching it, and place by
        // the entry's GPU count (the job's) meanwhile (the read stalled the pass: a third of it).
        book_.prefetch(entry.slot);
        Allocation& a = placement_;
        place(cluster_, entry.gpus, config_.placement, a);
        Job& job = book_.at(entry.slot);
        if (waits_for_switches(job, a, now_s)) continue;
        if (head) {
          const double release = host_.release_if_started(entry.slot, a);
          // A job of the head's queue running past the shadow time must leave the head room
          // under the cap.
          if (q == head_queue && release > head->shadow_s &&
              book_.held_gpus(q) + job.gpus + head_gpus > queue.max_gpus)
            continue;
          if (!admit_backfill(*head, job.gpus, release)) continue;
        }
        host_.start(entry.slot, a);
        ++started;
        if (nothing_more()) return started;
        continue;
      }
      // The entry's GPU count is the job's: the record is read only to note its reservation.
      if (!head && config_.preemption) {
        const std::vector<Slot> victims = choose_victims(q, entry.gpus, queues, book_, cluster_);
        if (!victims.empty()) {
          for (const Slot v : victims) host_.preempt(v);
          place(cluster_, entry.gpus, config_.placement, placement_);
          host_.start(entry.slot, placement_);
          ++started;
          continue;
        }
      }
      if (config_.backfilling()) {
        if (!head) {
          // The record's reservation field is a miss (a cold line, job.hpp): fetch it while
          // the reservation walks the release index.
          Job& job = book_.at(entry.slot);
          __builtin_prefetch(&job.reserved_start_s, 1);
          head = reserve(entry.gpus, cluster_, book_);
          head_queue = q;
          head_gpus = entry.gpus;
          if (std::isnan(job.reserved_start_s)) job.reserved_start_s = head->shadow_s;
          if (nothing_more()) return started;
        }
        continue;
      }
      blocked[static_cast<std::size_t>(q)] = 1;
      any_blocked_ = true;
    }
  }
  return started;
}

}  // namespace cs::jobs
