#pragma once
// The operations of a training step on one rank, per micro-batch, as FLOPs and bytes: what
// the roofline times (sim/compute) and what the FLOP accounting sums. One source for both.
//
// A layer is cut into blocks at its communication points (tensor-parallel collectives, the
// context-parallel KV gather, the MoE all-to-alls); each block is a list of ops. Shapes are
// per rank: a micro-batch of b sequences gives each rank n = b x seq_len / cp tokens; GEMM
// weights are split tp ways (experts also ep ways); with sequence parallelism the norms and
// residual adds run on n / tp tokens.
//
// FLOPs: `flops` follow the MFU convention (Megatron, PaLM) for GEMMs, 2 m n k each, and count
// the attention score and value products over the causal half of the s x s matrix that is
// computed (2 n s h / tp forward; PaLM's full-matrix 4 n s h would put the MFU of long
// sequences above 1), backward twice forward, no element-wise FLOPs. `work_flops` is what a
// kernel performs: flash attention's backward does 2.5x its forward (five matmuls to two, Dao
// 2023, FlashAttention-2), and MoE experts process capacity-factor-padded tokens.
// Element-wise kernels: norms, activations, residual adds, rotary embeddings (models without
// learned positions), the loss over the vocabulary, under fp8 each GEMM input's cast (the
// LM head's excepted: it runs in 16 bits, Op::sixteen_bit), and with context parallelism the
// ring attention's merges of its steps' partial results ("cp_merge").
//
// Context parallelism (cp > 1) runs flash attention as Transformer Engine's ring
// (AttnFuncWithCPAndKVP2P, Megatron-Core's default "p2p" communication type): the sequence in
// 2 cp chunks, rank r holding chunks r and 2 cp - 1 - r, and cp steps, each a flash-attention
// kernel over the keys and values the ring has brought (the first the local causal block, the
// later ones a half block each: all queries against the first half of the arrived chunks, or
// the second half of the queries against all of them). Every step's output is merged into the
// running one by its softmax log-sum-exp (flash_attn_fwd_out_correction: read the step's
// output, read and write the running one; the first step a read and a write), and backward
// adds every later step's partial dQ into dQ and its partial dK, dV into the dK, dV passed
// around the ring (read, read, write). The steps' FLOPs sum to the causal half as without
// context parallelism; what the ring adds is these merges' HBM traffic and its kernels'
// launches (Op::kernels).
// Bytes: HBM traffic, 2 bytes per bf16/fp16 element (GEMM operands 1 byte under fp8).
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/enum_table.hpp"
#include "workloads/training_plan.hpp"

namespace cs::work {

// pcie and host_memory: CPU offload's work off the GPU (copies over the GPU's host link, the
// optimizer step streaming the host's DRAM), in the host phase.
enum class OpKind : uint8_t { gemm, attention, elementwise, pcie, host_memory };
enum class Phase : uint8_t { forward, backward_input, backward_weight, optimizer, host };
// Which kind of memory-bound kernel an element-wise op is, for the share of HBM bandwidth it
// reaches (sim/compute/roofline.hpp): a streaming pass (norms, residual adds, casts, copies,
// the optimizer), the MLP's activation (GeLU, SwiGLU: Megatron's fused bias-activation
// kernels), the loss over the vocabulary (Megatron's fused cross-entropy), or a pass over the
// score matrix of attention without flash attention (its softmax, and the batched GEMMs that
// write and read the matrix: their bytes move at this share too).
enum class MemoryKernel : uint8_t { streaming, activation, loss, attention_core };
// The phases as workload.measured's keys ("<phase>/<op>") and the reports name them.
inline constexpr auto kPhaseNames = std::to_array<EnumName<Phase>>({
    {"forward", Phase::forward, "the forward pass"},
    {"backward_input", Phase::backward_input, "the backward pass's input gradients"},
    {"backward_weight", Phase::backward_weight, "the backward pass's weight gradients"},
    {"optimizer", Phase::optimizer, "the optimizer step"},
    {"host", Phase::host, "CPU offload's work off the GPU (host-link copies, the host's optimizer)"},
});
static_assert(names_every_value<kPhaseNames>());

struct Op {
  std::string_view name;     // "qkv", "attention", "proj", "fc1", "act", "fc2", "norm", ...
  OpKind kind = OpKind::elementwise;
  Phase phase = Phase::forward;
  double m = 0, n = 0, k = 0;  // GEMM C[m x n] = A[m x k] B[k x n] of one instance
  double count = 1;            // identical instances (local experts)
  // Instances one batched GEMM kernel runs together (the unfused attention's sequences x local
  // heads): their tiles share the SMs' waves (sim/compute/roofline.hpp).
  double batch = 1;
  double flops = 0;            // model FLOPs, all instances
  double work_flops = 0;       // FLOPs performed, all instances
  double bytes = 0;            // HBM bytes, all instances
  // The share of the op's micro-batch work this is: below 1 for the chunks tensor-parallel
  // communication overlap cuts it into (a measured time scales by it).
  double share = 1;
  // Attention: the sequence length one kernel call runs over, a sequence's queries on this
  // rank (seq_len / cp: context parallelism runs attention in cp steps of that many keys);
  // flash attention's rate depends on it (sim/compute/roofline.hpp). 0: not known (long).
  double seq_len = 0;
  // GPU kernels the op launches, each paying the launch gap (sim/compute/roofline.hpp): 1 but
  // for context parallelism's ring attention, one kernel per ring step, and its merges. In a
  // tensor-parallel overlap chunk: a GEMM's chunks each launch; other ops' launches are shared.
  double kernels = 1;
  // A GEMM whose operands are 16-bit: in fp8 runs, one left in 16 bits (the LM head:
  // Megatron-Core's output layer is a plain ColumnParallelLinear, outside Transformer Engine's
  // fp8 autocast), timed at the 16-bit peak and ceiling.
  bool sixteen_bit = false;
  // A weight-gradient GEMM that Megatron runs beside its input gradient's tensor-parallel
  // collective: a column-parallel linear's (qkv, fc1, the shared experts' fc1, the LM head;
  // LinearWithGradAccumulationAndAsyncCommunication issues the collective, then the weight
  // gradient). Every other GEMM computes its weight gradient right after its input gradient, in
  // the same backward step: the row-parallel linears (proj, fc2), the experts' (their linears
  // leave the communication to the token dispatcher) and the replicated router's
  // (workloads/training_graph_passes.cpp).
  bool beside_input_collective = false;
  MemoryKernel memory_kernel = MemoryKernel::streaming;  // memory-bound work: its kernel's kind
  // A weight-gradient GEMM: the elements of the weight gradient it adds into the gradient
  // buffer (count x m x n; its share of them in a tensor-parallel overlap chunk). `bytes`
  // holds its operands alone; the roofline times the buffer's read and write
  // (sim/compute/roofline.hpp).
  double accumulated = 0;
};

// Where a layer is cut.
enum class Block : uint8_t {
  embedding,       // token (and position) embedding lookup: first model chunk
  attention_in,    // norm + QKV projection
  attention_out,   // attention core + output projection + residual
  mlp,             // norm + dense MLP + residual
  moe_router,      // norm + router + token permutation (before the dispatch all-to-all)
  moe_experts,     // local experts, shared experts, combine + residual (after dispatch)
  head,            // final norm + LM head + cross-entropy: last model chunk
};

// The ops of `block` in `phase` (forward, backward_input or backward_weight) for one
// micro-batch on one rank. Selective recomputation adds the attention core's forward to
// attention_out's backward_input; full recomputation is the caller's (it reruns forward).
std::vector<Op> block_ops(const TrainingWorkload& w, Block block, Phase phase);

// The optimizer step's passes over HBM, as each optimizer runs them (bytes per parameter, g =
// gradient_bytes; Adam with fp32 master weights and moments, 16-bit model weights).
// - megatron: Megatron's mixed-precision optimizer, Megatron-Core's DistributedOptimizer and
//   Float16OptimizerWithFloat16Params alike (megatron/core/optimizer/optimizer.py and
//   distrib_optimizer.py at core_r0.10.0, 7ee599a; Megatron-LM's megatron/optimizer/ at 6985e58):
//   per updated (under ZeRO-1, the rank's shard of) parameter, the fp32 copy of the gradient
//   (`main_grad.float()`: g read, 4 written; none when g is 4, as .float() of fp32 is the tensor
//   itself), under a loss scale the unscale and inf check in place (8), the clipping norm
//   (multi_tensor_l2norm: 4), apex/Transformer Engine FusedAdam in one multi_tensor_apply pass
//   (p, g, m, v read, p, m, v written: 28), the master weights copied to the 16-bit ones (4 read,
//   2 written); and per parameter of the rank's contiguous gradient buffer (all its local
//   parameters) the buffer zeroed for the next step (zero_grad_buffer: g written).
// - megatron_no_grad_buffer: the same passes with the gradients held per parameter, not in a
//   contiguous buffer (Megatron-LM at 6985e58: --DDP-impl torch, or local without
//   --use-contiguous-buffers-in-ddp, then off by default): zero_grad(set_to_none=True) drops
//   them after the step, nothing is zeroed.
// - fused: one fused update that reads the 16-bit gradient and writes the 16-bit weights itself
//   (g + 12 read, 12 + 2 written), after the clipping norm's read (g) and, under a loss scale,
//   the unscale's read and write of the gradient (2 g).
// The clipping scale pass runs only when the norm exceeds the threshold: not counted.
enum class OptimizerKind : uint8_t { megatron, megatron_no_grad_buffer, fused };
// workload.optimizer.
inline constexpr auto kOptimizerNames = std::to_array<EnumName<OptimizerKind>>({
    {"megatron", OptimizerKind::megatron,
     "Megatron's mixed-precision or distributed optimizer: fp32 gradient copy, unscale (fp16), norm, fused Adam, weight copy, gradient buffer zeroed"},
    {"megatron_no_grad_buffer", OptimizerKind::megatron_no_grad_buffer,
     "the same passes with per-parameter gradients (Megatron-LM 2021): dropped after the step, not zeroed"},
    {"fused", OptimizerKind::fused, "one fused update reading the 16-bit gradient and writing the 16-bit weights"},
});
static_assert(names_every_value<kOptimizerNames>());

struct OptimizerStep {
  OptimizerKind kind = OptimizerKind::megatron;
  double gradient_bytes = 2;  // bytes per gradient element in the gradient buffer
  bool loss_scaled = false;   // fp16: unscaled and checked for inf and NaN before the step
};

// HBM bytes per updated parameter and per parameter of the gradient buffer (see above).
double optimizer_bytes_per_updated_param(const OptimizerStep& s);
double optimizer_bytes_per_buffer_param(const OptimizerStep& s);

// The optimizer step ("adam") updating `updated_params` (the rank's ZeRO shard, or all its
// local parameters) with a gradient buffer of `buffer_params` (the rank's local parameters).
Op optimizer_op(const OptimizerStep& s, double updated_params, double buffer_params);

// CPU offload (ZeRO-Offload): the host's Adam step over `local_params` (the fused kind's bytes,
// from the host's DRAM), and a copy of `bytes` over the GPU's host link
// ("gradients_d2h", "weights_h2d").
Op host_optimizer_op(double local_params, double gradient_bytes, bool loss_scaled = false);
Op host_copy_op(std::string_view name, double bytes);

// Tokens one rank processes per micro-batch (b x seq_len / cp).
double rank_tokens(const TrainingWorkload& w);

// Sums over ops.
double total_flops(const std::vector<Op>& ops);
double total_work_flops(const std::vector<Op>& ops);

}  // namespace cs::work
