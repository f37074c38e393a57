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
// kernels), or the loss over the vocabulary (Megatron's fused cross-entropy).
enum class MemoryKernel : uint8_t { streaming, activation, loss };
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
  MemoryKernel memory_kernel = MemoryKernel::streaming;  // element-wise ops: their kernel's kind
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

// The optimizer step over `local_params` parameters (Adam, mixed precision: reads the
// gradient and the fp32 master weights and moments, writes them and the 16-bit weights),
// after the gradient norm for clipping reads every gradient once more (Megatron's
// clip_grad_norm_fp32; its recipes clip at 1.0) and, under fp16 (`loss_scaled`), the loss
// scale's unscaling reads and writes every gradient, checking for inf and NaN (Megatron's
// _unscale_main_grads_and_check_for_nan).
Op optimizer_op(double local_params, double gradient_bytes, bool loss_scaled = false);

// CPU offload (ZeRO-Offload): the host's Adam step over `local_params` (the same bytes as
// optimizer_op, from the host's DRAM), and a copy of `bytes` over the GPU's host link
// ("gradients_d2h", "weights_h2d").
Op host_optimizer_op(double local_params, double gradient_bytes, bool loss_scaled = false);
Op host_copy_op(std::string_view name, double bytes);

// Tokens one rank processes per micro-batch (b x seq_len / cp).
double rank_tokens(const TrainingWorkload& w);

// Sums over ops.
double total_flops(const std::vector<Op>& ops);
double total_work_flops(const std::vector<Op>& ops);

}  // namespace cs::work
