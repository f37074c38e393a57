#pragma once
// Where a simulated step's time went, per worker, read off the executed timeline (never a
// formula): every moment of a worker's compute stream is compute, optimizer, exposed
// communication or pipeline bubble, so per worker
//   compute_s + optimizer_s + exposed_s.total() + bubble_s = step_time_s.
//
// Idle time is attributed by walking back from the task the compute stream waited for: while
// that is a communication task, the part of the wait after it became ready (queued on its
// stream, then moving bytes) is exposed communication of its group type, and the part before
// is attributed to what it waited for in turn; once the chain reaches compute (another stage's,
// or nothing), the rest is bubble. With CPU offload, waiting for the host's optimizer step is
// optimizer time and waiting for a copy over the host link exposed "offload" communication. After a worker's last compute task, the wait for its last
// communication is exposed communication and the rest (other workers still busy) is bubble.
#include <array>
#include <vector>

#include "sim/compute/training_executor.hpp"

namespace cs::compute {

// Seconds by group type: tp, cp, ep, pp, dp, and CPU offload's copies over the host link
// (Stream::host).
struct ExposedComm {
  std::array<double, 6> seconds{};
  double& operator[](work::Stream type);
  double operator[](work::Stream type) const;
  double total() const;
};

struct WorkerBreakdown {
  int stage = 0;
  int replica = 0;
  double compute_s = 0;    // forward, backward and recompute tasks as run
  double optimizer_s = 0;
  ExposedComm exposed_s;   // idle, waiting for communication
  double bubble_s = 0;     // idle, waiting for other stages
  double slowdown_s = 0;   // part of compute_s + optimizer_s lost to overlapping communication
};

struct StepAnalysis {
  double step_time_s = 0;
  std::vector<WorkerBreakdown> workers;
  // Means over workers (every GPU of a worker is alike).
  double compute_s = 0, optimizer_s = 0, bubble_s = 0, slowdown_s = 0;
  ExposedComm exposed_s;
  double bubble_fraction = 0;  // bubble_s / step_time_s
};

// `executor` must have run `graph` to completion.
StepAnalysis analyze_step(const work::TaskGraph& graph, const TrainingExecutor& executor);

}  // namespace cs::compute
