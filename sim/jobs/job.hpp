#pragma once
// One job of a shared cluster, from submission to completion.
//
// Phases: pending (in its queue) -> running (holding its GPUs: restoring, working and
// checkpointing, all in its RunSegment) -> done; a preemption or a reclaim sends a running job
// back to pending at once, a node failure after `stopping` (it holds its GPUs, making no
// progress, until the failure is detected), as does an emergency checkpoint (stopping while
// it is written, in the last moments of a reclaim notice, until its nodes go). Work is in seconds at the speed of a compact placement; committed work
// survives an interruption, the rest is lost.
#include <cmath>
#include <cstdint>
#include <limits>

#include "sim/engine/event_queue.hpp"
#include "sim/jobs/cluster_state.hpp"
#include "sim/jobs/job_progress.hpp"

namespace cs::jobs {

enum class JobPhase : unsigned char { pending, running, stopping, done };

inline constexpr double kNever = std::numeric_limits<double>::quiet_NaN();

struct Job {
  int64_t id = 0;        // submission order, from 0
  int job_class = -1;    // -1: a trace job without a class
  int queue = 0;
  int gpus = 1;
  double submit_s = 0.0;
  double work_s = 0.0;   // its duration on a compact placement
  double committed_s = 0.0;

  JobPhase phase = JobPhase::pending;
  double pending_since_s = 0.0;
  double wait_s = 0.0;            // time pending, every wait added up
  double first_start_s = kNever;
  double end_s = kNever;
  double lost_work_s = 0.0;       // work done and lost (at compact speed)
  double lost_gpu_s = 0.0;        // GPU-seconds spent on that work
  int preemptions = 0;
  int interruptions = 0;          // node failures and reclaims that hit it
  double reserved_start_s = kNever;  // its first EASY reservation as the head job

  // While holding GPUs.
  RunSegment run;
  Allocation allocation;
  int nodes = 0;                  // nodes of the current (last) allocation
  int spread = 0;                 // domains of the current (last) allocation
  double slowdown = 1.0;
  double release_s = 0.0;         // when its GPUs are released: end of run or of the stop
  double commit_at_release_s = -1.0;  // an emergency checkpoint's work, committed at release
  engine::EventId event;          // the release event
  // A reclaim notice's emergency checkpoint, started as late as it can be written before the
  // nodes go (the job trains until then), and that instant.
  engine::EventId notice_event;
  double leave_s = kNever;

  bool holds_gpus() const { return phase == JobPhase::running || phase == JobPhase::stopping; }
};

}  // namespace cs::jobs
