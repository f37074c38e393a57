#pragma once
// A step's steady state in its micro-batches, used to simulate long steps short. With identical
// micro-batches every schedule repeats itself once warm-up is behind (1F1B, gpipe and ZB-H1
// every micro-batch, interleaved 1F1B every pp), and what comes once per step (the pipeline's
// fill and drain, the last gradient reductions, the optimizer, ZeRO's gathers) does not grow
// with the step. So each time a simulation reports (the step, compute, optimizer, exposed
// communication per group type, bubble, slowdown, and each op's seconds) is affine in the
// number of micro-batches m beyond a = max(2, pp) micro-batches (2 pp for interleaved 1F1B):
//   T(m) = T(a) + (T(b) - T(a)) (m - a) / (b - a),   b = a + pp.
// Two simulations, of a and b micro-batches, give the step of m. Exact (to 1e-9) where the
// simulated times are periodic after a: gpipe, 1F1B and interleaved 1F1B at every ZeRO stage,
// contention-free and on the flow network (where the step-level reductions wait for the
// stage's last backward: gpipe's is micro-batch 0's). Measured elsewhere (tests/cpp/compute/
// test_extrapolation.cpp): ZB-H1 0.6% (its deferred weight gradients fill the drain), both ways;
// gpipe with context parallelism 0.05% (its first added micro-batch costs 0.15% less). plan
// search uses it only to screen, with a margin (plan_search.hpp). The memory model and FLOPs are
// the full step's.
#include <optional>

#include "sim/compute/training_step.hpp"

namespace cs::compute {

struct MicroBatchPoints {
  int a = 0, b = 0;
};

// The two micro-batch counts to simulate, or nullopt when the step has at most b micro-batches
// per replica (simulate it whole).
std::optional<MicroBatchPoints> extrapolation_points(const work::TrainingWorkload& w);

// `w` with m micro-batches per replica (its global batch m x micro x dp).
work::TrainingWorkload with_micro_batches(work::TrainingWorkload w, int m);

// The step of `w` from steps `at_a` and `at_b` of with_micro_batches(w, points.a / .b).
// tasks and events are the two simulations' sums; no timeline is kept.
TrainingResult extrapolate_step(const work::TrainingWorkload& w, const MicroBatchPoints& points,
                                const TrainingResult& at_a, const TrainingResult& at_b, const GpuSpec& gpu,
                                const TrainingStepOptions& options);

}  // namespace cs::compute
