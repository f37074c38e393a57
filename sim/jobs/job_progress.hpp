#pragma once
// One run of a job on its GPUs, from a start to wherever it ends, in closed form: the job
// cluster never ticks through steps or schedules an event per checkpoint, it asks a run
// segment how far the job got at time t and what is safe in a checkpoint.
//
// A segment starts at start_s from work0 (the committed work it restores), first spends
// overhead_s restoring (no progress), then alternates: interval_work_s of work at `rate`
// (work seconds per wall second: 1 on a compact placement, 1 / slowdown on a scattered one),
// then a checkpoint that stops the job for blocking_s. Checkpoint k (k = 1, 2, ...) ends at
//   start_s + overhead_s + k (interval_work_s / rate + blocking_s)
// and is durable lag_s later (0 for a sync write; the background write for an async one), when
// work0 + k interval_work_s becomes committed. No checkpoint is taken at or after the total
// work: the job ends as it reaches it. With interval_work_s infinite the job never checkpoints.
// Units: seconds (of work, or of wall time where it says so).
#include <cstdint>
#include <limits>

namespace cs::jobs {

struct CheckpointPlan {
  double interval_work_s = std::numeric_limits<double>::infinity();
  double blocking_s = 0.0;  // the job's stop per checkpoint
  double lag_s = 0.0;       // from the end of the stop until the checkpoint is durable
};

struct RunSegment {
  double start_s = 0.0;
  double overhead_s = 0.0;  // restore before progress
  double rate = 1.0;        // > 0
  double work0 = 0.0;       // committed work at the start
  double total_work = 0.0;  // the job's whole work (>= work0)
  CheckpointPlan plan;

  // Checkpoints the segment takes before it reaches total_work.
  int64_t checkpoints_planned() const;
  // Wall time at which total_work is reached.
  double end_s() const;
  // Work done by time t (within [start_s, end_s()]); a checkpoint in progress counts its
  // interval as done but not yet safe.
  double work_at(double t) const;
  // Work safe in a durable checkpoint at time t.
  double committed_at(double t) const;
  // Checkpoints completed (the stop over, durable or not) by time t.
  int64_t checkpoints_at(double t) const;
  // work_at(t) and checkpoints_at(t) together, each computed once (a job's end asks for both).
  struct Progress {
    double work = 0.0;
    int64_t checkpoints = 0;
  };
  Progress progress_at(double t) const;

 private:
  double cycle_s() const { return plan.interval_work_s / rate + plan.blocking_s; }
};

}  // namespace cs::jobs
