#pragma once
// FLOP accounting of one optimizer step, summed from the ops of training_ops.hpp over every
// layer, micro-batch and rank. A dense model's model FLOPs are 6 x (active GEMM parameters) x
// tokens plus 6 x layers x hidden x seq_len x tokens for causal attention (PaLM's MFU
// convention, Chowdhery et al. 2022, appendix B, with the causal half of the s x s matrix that
// is computed); recomputation adds executed FLOPs, not model FLOPs.
#include <vector>

#include "workloads/training_ops.hpp"
#include "workloads/training_plan.hpp"

namespace cs::work {

struct StepFlops {
  double tokens = 0;    // global batch x seq_len
  double model = 0;     // FLOPs the model needs per step (no recomputation), whole cluster
  double executed = 0;  // FLOPs run per step: model + recomputed forward work, whole cluster
};

StepFlops step_flops(const TrainingWorkload& w);

// The blocks of layer `layer` in execution order (attention_in, attention_out, then mlp or
// moe_router + moe_experts).
std::vector<Block> layer_blocks(const TransformerSpec& model, int layer);

}  // namespace cs::work
