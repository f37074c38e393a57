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
#include <cstddef>
#include <cstdint>
#include <limits>

#include "sim/engine/event_queue.hpp"
#include "sim/jobs/cluster_state.hpp"
#include "sim/jobs/job_progress.hpp"

namespace cs::jobs {

enum class JobPhase : unsigned char { pending, running, stopping, done };

inline constexpr double kNever = std::numeric_limits<double>::quiet_NaN();

// The record is four cache lines, 64-byte aligned: the fields a pass, a start and a release
// read or write come first, in the first three (kHotBytes: what JobBook::prefetch fetches), the
// fields read only at an interruption, a reservation or in the job's result row last. Each
// line's fields are listed together; keep a new field with the paths that use it. Every field
// has a default (JobBook::add default-initializes a reused slot's record in place).
struct alignas(64) Job {
  // Line 0: who it is and its handles. Read by every index (queue, id, GPUs) and every event.
  int64_t id = 0;        // submission order, from 0
  int gpus = 1;
  int queue = 0;
  int job_class = -1;    // -1: a trace job without a class
  JobPhase phase = JobPhase::pending;
  int nodes = 0;                  // nodes of the current (last) allocation
  int spread = 0;                 // domains of the current (last) allocation
  uint64_t hold_seq = 0;          // the cluster's count of holds when it last held: ties of release_s
  // A reclaim notice's emergency checkpoint, started as late as it can be written before the
  // nodes go (the job trains until then); its instant is leave_s.
  engine::EventId notice_event;
  double release_s = 0.0;         // when its GPUs are released: end of run or of the stop
  double pending_since_s = 0.0;

  // Line 1: its work and waits (a start and a completion), and where it runs.
  double work_s = 0.0;   // its duration on a compact placement
  double committed_s = 0.0;
  double wait_s = 0.0;            // time pending, every wait added up
  double first_start_s = kNever;
  double slowdown = 1.0;
  Allocation allocation;          // while holding GPUs

  // Line 2: the current (last) run, while holding GPUs.
  RunSegment run;

  // Line 3: cold.
  double submit_s = 0.0;
  double end_s = kNever;
  double lost_work_s = 0.0;       // work done and lost (at compact speed)
  double reserved_start_s = kNever;  // its first EASY reservation as the head job
  double commit_at_release_s = -1.0;  // an emergency checkpoint's work, committed at release
  double leave_s = kNever;
  int preemptions = 0;
  int interruptions = 0;          // node failures and reclaims that hit it

  bool holds_gpus() const { return phase == JobPhase::running || phase == JobPhase::stopping; }
};
// The bytes a pass, a start and a release touch: the first three lines.
inline constexpr std::size_t kJobHotBytes = 192;
static_assert(sizeof(Job) == 256, "Job: four cache lines (see the layout above)");
static_assert(sizeof(RunSegment) == 64, "Job: the run is line 2");


}  // namespace cs::jobs
