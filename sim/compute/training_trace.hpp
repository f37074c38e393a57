#pragma once
// A simulated step's timeline as a Chrome / Perfetto trace, one span per task: names say what
// ran: "F L12 mb3" (forward of layer 12, micro-batch 3), "B", "W", "R" (recompute), "opt", for
// communication the op and group type ("all_reduce tp L12 mb3", "send_recv pp mb3"), and for
// CPU offload the copy or step ("gradients_d2h L12 mb3", "host adam").
//
// Tracks: with `gpu_of_rank` (RankLayout::gpu_of_rank), one process per GPU of the simulated
// workers (pid = GPU index + pid_base, named after its node, stage, replica and coordinates)
// and one thread per stream the step used (compute, tp, cp, ep, pp, dp, dp_gather, host); a
// worker's tasks appear on each of its GPUs, which run them in lockstep. When that would
// exceed `max_spans` spans, or without `gpu_of_rank`, one process per worker (pid = worker
// index + pid_base, named after its GPUs) instead.
#include <cstddef>
#include <vector>

#include "sim/compute/training_executor.hpp"
#include "sim/engine/recorder.hpp"

namespace cs::compute {

struct TraceOptions {
  int pid_base = 0;
  int gpus_per_node = 0;             // > 0: name each GPU's node
  std::size_t max_spans = 2'000'000;  // per-GPU tracks only up to this many spans
};

// The recorder must have tracing enabled for the spans to be kept (names are kept
// regardless). Returns true when the tracks are per GPU, false when per worker.
bool record_trace(const work::TaskGraph& graph, const std::vector<TaskTiming>& timings, engine::Recorder& recorder,
                  const std::vector<int>& gpu_of_rank = {}, const TraceOptions& options = {});

}  // namespace cs::compute
