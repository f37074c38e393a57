#pragma once
// Every valid parallel plan of a model on a cluster (for `clustersim plan`): tp, pp, dp, cp,
// ep, micro-batch, ZeRO stage, schedule and recomputation, each checked by validate() and
// sized by the memory model. Which of them to simulate, and ranking by tokens/s, is the
// caller's.
//
// The space: tp divides the node's GPU count; pp splits the layers evenly; cp is a power of two
// up to max_cp dividing seq_len / 2; dp takes the rest of the GPUs; ep (MoE only) divides both
// dp and the experts; interleaved takes each virtual_stages that splits the layers evenly and
// needs micro-batches % pp == 0. With one pipeline stage only 1f1b is listed (the schedules
// coincide). Sequence parallelism is on whenever tp > 1 unless both settings are asked for (it
// moves the same bytes and stores less).
#include <vector>

#include "workloads/training_memory.hpp"

namespace cs::work {

struct PlanSpace {
  std::vector<int> micro_batches{1, 2, 4, 8};
  std::vector<int> zero_stages{0, 1, 2, 3};
  std::vector<Schedule> schedules{Schedule::gpipe, Schedule::one_f_one_b, Schedule::interleaved, Schedule::zb_h1};
  std::vector<Recompute> recompute{Recompute::none, Recompute::selective, Recompute::full};
  std::vector<int> virtual_stages{2, 4};  // for interleaved
  int max_cp = 8;
  bool both_sequence_parallel = false;    // also list tp > 1 without sequence parallelism
  bool only_fitting = false;              // drop plans whose memory does not fit
  Precision precision = Precision::bf16;
};

struct PlanCandidate {
  TrainingWorkload workload;
  MemoryReport memory;
};

// In a deterministic order (tp, pp, cp, ep, micro, zero, schedule, v, recompute, sp).
std::vector<PlanCandidate> enumerate_plans(const TransformerSpec& model, int global_batch, const ClusterShape& cluster,
                                           double gpu_memory_bytes, const PlanSpace& space = {},
                                           const MemoryOptions& memory = {});

}  // namespace cs::work
