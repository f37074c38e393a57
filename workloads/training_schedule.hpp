#pragma once
// Pipeline schedules as data: the order in which one pipeline stage runs the forward and
// backward passes of its micro-batches and model chunks. Dependencies between stages (a
// forward needs the previous chunk's activations, a backward the next chunk's gradients) are
// the task graph's; these orders are what each stage's compute stream follows.
//
// - gpipe: every forward, then every backward (Huang et al. 2019).
// - 1f1b: p - s - 1 warm-up forwards on stage s, then one forward / one backward, then the
//   remaining backwards (Narayanan et al. 2021, PipeDream-Flush).
// - interleaved: Megatron-LM's interleaved 1F1B over v model chunks per stage: stage s holds
//   model chunks s, s + p, ..., and runs micro-batches in groups of p per chunk (Narayanan et
//   al. 2021, section 2.2; Megatron-Core's forward_backward_pipelining_with_interleaving).
//   Needs micro-batches % p == 0.
// - zb_h1: the backward split into B (input gradient) and W (weight gradient); 1F1B's order of
//   F and B, with stage s deferring up to s weight passes to fill the cool-down bubble, so no
//   stage holds more micro-batches than stage 0 does under 1F1B (Qi et al. 2024, Zero Bubble
//   Pipeline Parallelism, ZB-H1).
#include <cstdint>
#include <vector>

#include "workloads/training_plan.hpp"

namespace cs::work {

enum class PassKind : uint8_t {
  forward,
  backward,          // input and weight gradients together
  backward_input,    // zb_h1's B
  backward_weight,   // zb_h1's W
};

struct PipelinePass {
  PassKind kind = PassKind::forward;
  int micro = 0;  // micro-batch
  int chunk = 0;  // local model chunk (0 .. virtual_stages - 1); model chunk chunk x pp + stage
};

// The passes of stage `stage` (0 .. pp - 1) in execution order.
std::vector<PipelinePass> stage_schedule(Schedule schedule, int stage, int pp, int micro_batches,
                                         int virtual_stages);

// The model chunk (pipeline order) of local chunk `chunk` on stage `stage`.
inline int model_chunk_of(int stage, int chunk, int pp) { return chunk * pp + stage; }

}  // namespace cs::work
