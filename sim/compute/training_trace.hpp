#pragma once
// A simulated step's timeline as a Chrome / Perfetto trace: one process per worker (a pipeline
// stage of one replica, standing for its tp x cp x ep GPUs), one thread per stream (compute,
// tp, cp, ep, pp, dp, dp_gather), one span per task. Names say what ran: "F L12 mb3"
// (forward of layer 12, micro-batch 3), "B", "W", "R" (recompute), "opt", and for
// communication the op and group type ("all_reduce tp L12 mb3", "send pp mb3").
#include <vector>

#include "sim/compute/training_executor.hpp"
#include "sim/engine/recorder.hpp"

namespace cs::compute {

// pid = worker index + pid_base; tid = stream index. `gpu_of_rank` (RankLayout::gpu_of_rank)
// names each process after its GPUs when given. The recorder must have tracing enabled for the
// spans to be kept (names are kept regardless).
void record_trace(const work::TaskGraph& graph, const std::vector<TaskTiming>& timings, engine::Recorder& recorder,
                  const std::vector<int>& gpu_of_rank = {}, int pid_base = 0);

}  // namespace cs::compute
