#include "sim/fleet/job_scheduler.hpp"

#include <climits>
#include <cmath>
#include <optional>
#include <vector>

#include "sim/fleet/easy_backfill.hpp"
#include "sim/fleet/placement.hpp"
#include "sim/fleet/preemption.hpp"

namespace cs::jobs {

JobScheduler::JobScheduler(const SchedulerConfig& config, JobBook& book, ClusterState& cluster,
                           const FairShare& fair_share, SchedulerHost& host)
    : config_(config),
      book_(book),
      cluster_(cluster),
      host_(host),
      order_(make_queue_order(config, fair_share)) {}

bool JobScheduler::waits_for_switches(const Job& job, const Allocation& a, double now_s) {
  if (config_.placement != PlacementPolicy::topology || !(config_.max_switch_wait_s > 0.0)) return false;
  const double until = job.pending_since_s + config_.max_switch_wait_s;
  if (now_s >= until || cluster_.spread(a) <= cluster_.min_spread(job.gpus)) return false;
  host_.pass_at(until);
  return true;
}

int JobScheduler::pass(double now_s) {
  ++passes_;
  if (book_.pending_total() == 0 || (cluster_.free_gpus() == 0 && !config_.preemption)) return 0;
  const auto& queues = config_.queues;
  const std::size_t n = queues.size();
  std::vector<char> blocked(n, 0);
  // Each queue's cursor: the smallest job id not yet examined (started jobs leave the set).
  std::vector<int64_t> next_id(n, INT64_MIN);
  std::optional<Reservation> head;
  int head_queue = -1, head_gpus = 0;
  int examined_after_head = 0, started = 0;
  const auto nothing_more = [&] { return cluster_.free_gpus() == 0 && (head || !config_.preemption); };

  for (const std::vector<int>& group : order_->groups(now_s)) {
    while (true) {
      // The group's next job: the lowest id among its queues' cursors.
      Slot slot = -1;
      int q = -1;
      int64_t id = INT64_MAX;
      for (const int g : group) {
        if (blocked[static_cast<std::size_t>(g)]) continue;
        const JobBook::PendingSet& pending = book_.pending(g);
        const auto it = pending.lower_bound({next_id[static_cast<std::size_t>(g)], INT32_MIN});
        if (it != pending.end() && it->first < id) std::tie(id, slot, q) = std::tuple{it->first, it->second, g};
      }
      if (slot < 0) break;
      next_id[static_cast<std::size_t>(q)] = id + 1;
      ++examined_;
      if (head && ++examined_after_head > config_.bf_max_job_test) return started;
      Job& job = book_.at(slot);
      const QueueConfig& queue = queues[static_cast<std::size_t>(q)];
      if (book_.held_gpus(q) + job.gpus > queue.max_gpus) continue;  // held by its cap

      if (job.gpus <= cluster_.free_gpus()) {
        Allocation a = place(cluster_, job.gpus, config_.placement);
        if (waits_for_switches(job, a, now_s)) continue;
        if (head) {
          const double release = host_.release_if_started(slot, a);
          // A job of the head's queue running past the shadow time must leave the head room
          // under the cap.
          if (q == head_queue && release > head->shadow_s &&
              book_.held_gpus(q) + job.gpus + head_gpus > queue.max_gpus)
            continue;
          if (!admit_backfill(*head, job.gpus, release)) continue;
        }
        host_.start(slot, std::move(a));
        ++started;
        if (nothing_more()) return started;
        continue;
      }
      if (!head && config_.preemption) {
        const std::vector<Slot> victims = choose_victims(q, job.gpus, queues, book_, cluster_);
        if (!victims.empty()) {
          for (const Slot v : victims) host_.preempt(v);
          host_.start(slot, place(cluster_, job.gpus, config_.placement));
          ++started;
          continue;
        }
      }
      if (config_.backfilling()) {
        if (!head) {
          head = reserve(job.gpus, cluster_, book_);
          head_queue = q;
          head_gpus = job.gpus;
          if (std::isnan(job.reserved_start_s)) job.reserved_start_s = head->shadow_s;
          if (nothing_more()) return started;
        }
        continue;
      }
      blocked[static_cast<std::size_t>(q)] = 1;
    }
  }
  return started;
}

}  // namespace cs::jobs
