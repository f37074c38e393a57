#pragma once
// Memory per GPU of a training plan, before anything runs. A plan that does not fit is a
// result (fits = false, with the breakdown), not an error.
//
// - Model states by ZeRO stage as the ZeRO paper accounts them (Rajbhandari et al. 2020,
//   section 3.1 and Figure 1): 2 bytes of 16-bit weights, 2 of gradients and K = 12 of fp32
//   optimizer state (master weights, Adam momentum and variance) per parameter; stage 1 shards
//   the optimizer state, stage 2 also the gradients, stage 3 also the weights, over the
//   data-parallel ranks (dp x cp for dense weights, dp / ep x cp for experts).
// - Activations per layer and micro-batch by Korthikanti et al. 2022 ("Reducing Activation
//   Recomputation in Large Transformer Models", section 4): s b h (34 + 5 a s / h) bytes for a
//   GPT layer; with tensor parallelism s b h (10 + 24 / t + 5 a s / (h t)); with sequence
//   parallelism s b h (34 / t + 5 a s / (h t)); selective recomputation drops the 5 a s / h
//   term; full recomputation keeps the layer input only (2 s b h, / t with sequence
//   parallelism). Generalised term by term to grouped-query attention, SwiGLU, FFN sizes other
//   than 4h, MoE and context parallelism (s b -> b s / cp). Flash attention (the default) never
//   stores the s x s matrices, so it drops the 5 a s / h term whatever the recomputation.
// - Micro-batches in flight per stage come from the schedule itself (a forward is held until
//   its backward, under zb_h1 until its weight pass): 1f1b keeps p - s on stage s, gpipe m.
// - Framework overhead: a stated constant (CUDA context, cuBLAS / NCCL workspaces, allocator
//   fragmentation), 2 GB by default.
// - Headroom: a plan fits when its worst GPU's bytes stay within (1 - headroom) of the GPU's
//   memory (5% kept free by default; for comparison, vLLM's default
//   gpu_memory_utilization of 0.9 keeps 10% of a serving GPU free): an estimate a few percent
//   short of the capacity is no promise that the allocator's peak stays under it.
// - CPU offload (ZeRO-Offload, Ren et al. 2021, section 4): the optimizer states (and the
//   gradients the host accumulates, with ZeRO 2 and 3) live in host memory; the GPU keeps its
//   16-bit weights, and with ZeRO 2 one bucket of full-size gradients before they are reduced
//   and copied out (ZeRO 3's per-layer gradient buffer is in zero_buffers); ZeRO 0 and 1 keep
//   their gradients on the GPU as without offload. Host bytes per GPU: its shard's optimizer
//   state and gradients.
// Units: bytes.
#include <vector>

#include "workloads/training_plan.hpp"

namespace cs::work {

struct MemoryOptions {
  double parameter_bytes = 2;   // 16-bit weights
  double gradient_bytes = 2;    // the ZeRO paper's fp16 gradients (Megatron keeps fp32: 4)
  double optimizer_bytes = 12;  // K: fp32 master weights + Adam momentum and variance
  bool flash_attention = true;  // no s x s attention matrices stored
  double framework_overhead_bytes = 2e9;
  double headroom = 0.05;       // share of the GPU's memory a fitting plan leaves free, [0, 0.5]
  // Gradient bucket (parameters) ZeRO-2 keeps on the GPU under CPU offload; 0: the graph's
  // default (gradient_bucket_params).
  double bucket_params = 0;
};

// Model-state bytes of `params` parameters under ZeRO `stage` over `shards` data-parallel ranks.
struct ModelStates {
  double parameters = 0, gradients = 0, optimizer = 0;
  double total() const { return parameters + gradients + optimizer; }
};
ModelStates model_state_bytes(double params, int zero_stage, int shards, const MemoryOptions& options = {});

// The bytes a checkpoint of the model holds: every parameter's weights and optimizer state
// (16-bit weights + K = 12 bytes of fp32 master weights and Adam moments: 14 bytes per
// parameter by default), whatever the sharding; gradients are not saved.
double checkpoint_bytes(const TransformerSpec& model, const MemoryOptions& options = {});

struct MemoryBreakdown {
  double parameters = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;    // in-flight micro-batches' stored activations
  double zero_buffers = 0;   // ZeRO-3: gathered weights of the current and prefetched layer
  double logits = 0;         // last stage: the LM head's output and the loss's fp32 copy
  double recompute = 0;      // full recomputation: one layer's activations, rebuilt
  double overhead = 0;       // framework
  int in_flight = 0;         // peak micro-batches held (summed over local chunks)
  double host = 0;           // CPU offload: bytes in host memory for this GPU (not in total())
  double total() const {
    return parameters + gradients + optimizer + activations + zero_buffers + logits + recompute + overhead;
  }
};

struct MemoryReport {
  std::vector<MemoryBreakdown> per_stage;  // every GPU of a pipeline stage holds the same
  int worst_stage = 0;
  double max_bytes = 0;                    // per_stage[worst_stage].total()
  double max_host_bytes = 0;               // CPU offload: the most host memory a GPU needs
  double capacity_bytes = 0;
  double usable_bytes = 0;                 // capacity_bytes x (1 - headroom)
  bool fits = false;                       // max_bytes <= usable_bytes
  bool within_capacity = false;            // max_bytes <= capacity_bytes (fits, or in the headroom)
};

// Bytes of activations layer `layer` stores for one micro-batch on one rank.
double layer_activation_bytes(const TrainingWorkload& w, int layer, const MemoryOptions& options = {});

// `w` must be valid (validate()).
MemoryReport memory_per_gpu(const TrainingWorkload& w, double gpu_memory_bytes, const MemoryOptions& options = {});

// Parameters held by a GPU of pipeline stage `stage` (before ZeRO sharding): dense (replicated
// over dp x cp) and expert (replicated over dp / ep x cp).
struct StageParams {
  double dense = 0;
  double expert = 0;
  double largest_layer = 0;  // the stage's largest layer, as this GPU holds it
};
StageParams stage_params(const TrainingWorkload& w, int stage);

}  // namespace cs::work
