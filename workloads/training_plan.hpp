#pragma once
// How a model is trained (workload.parallel, .batch, .precision, .recompute), as data, and the
// rules a plan must satisfy on a cluster. Keys follow docs/scenarios.md.
//
// Conventions (Megatron-LM's): the cluster's GPUs = tp x cp x dp x pp; expert parallelism is
// carved out of data parallelism (ep divides dp; dense weights are replicated over dp, expert
// weights over dp / ep, the "expert data-parallel" replicas). Batches are in sequences:
// micro-batches per step = global / (micro x dp).
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/enum_table.hpp"
#include "workloads/training_model.hpp"

namespace cs::work {

enum class Precision : uint8_t { bf16, fp16, fp8 };
enum class Schedule : uint8_t { gpipe, one_f_one_b, interleaved, zb_h1 };
enum class Recompute : uint8_t { none, selective, full };
// How an fp8 run scales a tensor before casting it (Transformer Engine's recipes): delayed, from
// the amax history of earlier steps, taken in the cast's own pass; current (tensorwise), from the
// tensor's own amax, which a pass of its own reads first.
enum class Fp8Recipe : uint8_t { delayed, current };
// Where the optimizer lives: on the GPUs, or (ZeRO-Offload, Ren et al. 2021) its fp32 states and
// its step on the host CPU, with gradients copied to the host and updated weights back over PCIe.
enum class Offload : uint8_t { none, optimizer };

// workload.precision: the number format of the GEMMs (mixed precision, fp32 master weights).
inline constexpr auto kPrecisionNames = std::to_array<EnumName<Precision>>({
    {"bf16", Precision::bf16, "bfloat16: 2 bytes per value, the GPU's 16-bit tensor peak"},
    {"fp16", Precision::fp16, "IEEE half: 2 bytes per value, the GPU's 16-bit tensor peak"},
    {"fp8", Precision::fp8, "8-bit floats: 1 byte per value, the GPU's FP8 tensor peak"},
});
static_assert(names_every_value<kPrecisionNames>());
// Precisions the scenario contract names but nothing builds yet: a training workload that asks
// for one is refused as "not implemented yet".
inline constexpr std::array<std::string_view, 1> kPlannedPrecisionNames{"fp32"};
// workload.parallel.schedule: the pipeline schedule.
inline constexpr auto kScheduleNames = std::to_array<EnumName<Schedule>>({
    {"gpipe", Schedule::gpipe, "all forwards, then all backwards"},
    {"1f1b", Schedule::one_f_one_b, "one forward, one backward in the steady state"},
    {"interleaved", Schedule::interleaved, "1F1B over virtual_stages model chunks per stage"},
    {"zb_h1", Schedule::zb_h1, "zero bubble ZB-H1: backward split into input and weight gradients"},
});
static_assert(names_every_value<kScheduleNames>());
// workload.recompute: activation recomputation.
inline constexpr auto kRecomputeNames = std::to_array<EnumName<Recompute>>({
    {"none", Recompute::none, "activations kept for the backward pass"},
    {"selective", Recompute::selective, "the attention core recomputed (Korthikanti et al.)"},
    {"full", Recompute::full, "every layer's forward run again in the backward pass"},
});
static_assert(names_every_value<kRecomputeNames>());
// workload.fp8_recipe.
inline constexpr auto kFp8RecipeNames = std::to_array<EnumName<Fp8Recipe>>({
    {"delayed", Fp8Recipe::delayed, "scales from the amax history of earlier steps (Transformer Engine's DelayedScaling)"},
    {"current", Fp8Recipe::current, "scales from each tensor's own amax, read in a pass before the cast (Float8CurrentScaling; Megatron's tensorwise)"},
});
static_assert(names_every_value<kFp8RecipeNames>());
// workload.parallel.offload.
inline constexpr auto kOffloadNames = std::to_array<EnumName<Offload>>({
    {"none", Offload::none, "the optimizer's states and step on the GPUs"},
    {"optimizer", Offload::optimizer, "the optimizer's states and step on the host (ZeRO-Offload)"},
});
static_assert(names_every_value<kOffloadNames>());

std::string_view to_string(Precision p);
std::string_view to_string(Schedule s);
std::string_view to_string(Recompute r);
std::string_view to_string(Offload o);

struct ParallelPlan {
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1;
  int zero = 0;                    // ZeRO stage 0-3 (3 = FSDP)
  bool sequence_parallel = false;  // Megatron sequence parallelism (tp > 1)
  Schedule schedule = Schedule::one_f_one_b;
  int virtual_stages = 1;          // model chunks per pipeline stage (interleaved)
  // Dimensions from fastest- to slowest-varying over the GPUs: tensor-parallel peers are
  // neighbours by default, so they share a node. "ep" and "dp" must be adjacent.
  std::string order = "tp-cp-ep-dp-pp";
  // Layers per model chunk in pipeline order (pp x virtual_stages entries summing to layers);
  // empty: an even split.
  std::vector<int> layer_split;
  Offload offload = Offload::none;
  // The overlaps NVIDIA's performance recipes turn on (NeMo / Megatron-Bridge: tp_comm_overlap,
  // the distributed optimizer's overlap_grad_reduce, overlap_p2p_comm), on by default as there.
  // They change the task graph, not a formula (training_graph.hpp).
  // With sequence parallelism, each tensor-parallel all-gather and reduce-scatter is pipelined
  // with chunks of the compute next to it (Transformer Engine's userbuffers).
  bool tp_comm_overlap = true;
  // Data-parallel gradient buckets reduced as backward completes them; false: after the
  // stage's whole backward.
  bool overlap_grad_reduce = true;
  // Pipeline sends on their own stream while compute goes on; false: compute waits for each.
  bool overlap_p2p = true;
  // Without tp_comm_overlap: a backward input gradient's tensor-parallel all-reduce (or
  // reduce-scatter) runs beside the weight gradient GEMM after it (Megatron-LM's asynchronous
  // tensor-parallel all-reduce, since August 2021); false: after it, as Megatron-LM ran before.
  bool overlap_tp_wgrad = true;
  // Hybrid sharding: the data-parallel ranks (of each ep rank) form zero_replicas groups of
  // dp / ep / zero_replicas consecutive replicas; ZeRO shards its states over one group (its
  // gathers stay inside it) and each shard's gradients are reduce-scattered inside the group,
  // then all-reduced across the groups (PyTorch's HSDP; MaxText's ici_fsdp_parallelism inside a
  // TPU slice with dcn_data_parallelism across slices). 1: ZeRO over every data-parallel rank.
  // Needs zero >= 1 and zero_replicas dividing dp / ep.
  int zero_replicas = 1;
};

struct BatchSpec {
  int global = 0;  // sequences per optimizer step; 0: micro x dp (one micro-batch per replica)
  int micro = 1;   // sequences per micro-batch
};

struct TrainingWorkload {
  TransformerSpec model;
  ParallelPlan parallel;
  BatchSpec batch;
  Precision precision = Precision::bf16;
  Recompute recompute = Recompute::none;
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;  // under fp8 only
  // Attention as one fused flash-attention kernel (causal: the masked half skipped); false: as
  // Megatron ran it before FlashAttention, two batched GEMMs over the whole s x s score matrix
  // with a fused softmax and dropout between them, materialized in HBM.
  bool flash_attention = true;
};

// What a plan is checked against.
struct ClusterShape {
  int gpus = 1;
  int gpus_per_node = 8;
  // Tensor parallelism across nodes is refused unless allowed (its all-reduces would cross the
  // fabric on every layer).
  bool allow_tp_across_nodes = false;
};

// A plan that cannot run. key() is relative to `workload` ("parallel.tp", "batch.global",
// "model.heads"); the scenario layer prefixes it with the workload's path.
class TrainingError : public std::invalid_argument {
 public:
  TrainingError(std::string key, const std::string& what, std::string hint = "")
      : std::invalid_argument(what), key_(std::move(key)), hint_(std::move(hint)) {}
  const std::string& key() const noexcept { return key_; }
  const std::string& hint() const noexcept { return hint_; }

 private:
  std::string key_, hint_;
};

// Throws TrainingError naming the first key that is wrong.
void validate_model(const TransformerSpec& model);
void validate(const TrainingWorkload& workload, const ClusterShape& cluster);

// Derived quantities of a validated workload.
int global_batch(const TrainingWorkload& w);    // batch.global, or micro x dp when 0
int micro_batches(const TrainingWorkload& w);   // per replica per step
int model_chunks(const ParallelPlan& p);        // pp x virtual_stages
// Parameters per data-parallel gradient bucket: `requested`, or when it is 0 Megatron-Core's
// default max(40e6, 1e6 x dp x cp).
double gradient_bucket_params(const ParallelPlan& p, double requested);
// The data-parallel ranks ZeRO shards a dense parameter's states over: dp x cp / zero_replicas.
int dense_zero_shards(const ParallelPlan& p);
// ... and an expert parameter's: dp / ep x cp / zero_replicas.
int expert_zero_shards(const ParallelPlan& p);
// Layers of each model chunk in pipeline order (layer_split, or the even split).
std::vector<int> chunk_layers(const TrainingWorkload& w);
// The dimension names of parallel.order, fastest first; throws TrainingError("parallel.order").
std::vector<std::string> order_dimensions(std::string_view order);

}  // namespace cs::work
