#pragma once
// EASY backfilling (Lifka, "The ANL/IBM SP scheduling system", JSSPP 1995; Mu'alem and
// Feitelson, "Utilization, predictability, workloads, and user runtime estimates in scheduling
// the IBM SP2 with backfilling", IEEE TPDS 2001), the aggressive backfilling Slurm's
// sched/backfill generalises (Slurm reserves for every higher-priority job; EASY for the first
// only).
//
// The head job is the first job in the pass's order that cannot start now. It gets a
// reservation: the shadow time, the earliest time at which enough GPUs will be free for it as
// the jobs holding GPUs release them (each at its expected release time), and the extra GPUs,
// those free at the shadow time beyond what the head needs. A later job may jump the queue and
// start now only if its GPUs are free now and it either releases them by the shadow time or
// takes no more than the extra GPUs (which it then uses up). So no backfilled job delays the
// head's start, given exact run-time estimates: here a job's release time is known exactly
// (its work, checkpoints, restore and placement slowdown), which is backfilling's best case; a
// node failure or reclaim can still delay the head, as it would any schedule.
// GPUs on nodes that are out (failed, reclaimed or under notice) are not counted as coming
// back.
#include <limits>

#include "sim/jobs/cluster_state.hpp"
#include "sim/jobs/job_book.hpp"

namespace cs::jobs {

struct Reservation {
  double shadow_s = std::numeric_limits<double>::infinity();  // inf: not within the running jobs
  int extra_gpus = 0;
};

Reservation reserve(int head_gpus, const ClusterState& cluster, const JobBook& book);

// Whether a job of `gpus` GPUs releasing them at `release_s` may start now without delaying
// the head; when it may only by the extra GPUs, takes them from the reservation.
bool admit_backfill(Reservation& r, int gpus, double release_s);

}  // namespace cs::jobs
