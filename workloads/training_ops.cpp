#include "workloads/training_ops.hpp"

#include <numeric>

#include "workloads/unfused_attention.hpp"

namespace cs::work {
namespace {

constexpr double kActivationBytes = 2;  // bf16 / fp16 activations and outputs
// Causal attention computes half the s x s score matrix (flash attention skips masked blocks;
// with context parallelism the 2 x cp chunk layout balances that half over the ranks).
constexpr double kCausalShare = 0.5;
// FlashAttention's backward: five matmuls of the forward's size to the forward's two.
constexpr double kAttentionBackwardWork = 2.5;
// An fp8 GEMM's operand cast (Transformer Engine, delayed scaling: the amax is taken in the
// same pass): read the 16-bit tensor, write it in fp8 and its fp8 transpose for the other
// GEMM of the backward pass. Bytes per element.
constexpr double kFp8CastBytes = 2 + 1 + 1;
// Current scaling reads the 16-bit tensor once more before the cast, for its amax: "two tensor
// reads were needed - one to compute the amax, and one to apply the scaling factor"
// (Transformer Engine's documentation, the FP8 Delayed Scaling page, on current scaling).
constexpr double kFp8CurrentScalingAmaxBytes = 2;
// Context parallelism's ring merges (training_ops.hpp), bytes per element of the tensor merged:
// the first step's output read and written, a later step's read beside the running result
// read and written.
constexpr double kCpFirstMergeBytes = 2 * kActivationBytes;
constexpr double kCpMergeBytes = 3 * kActivationBytes;
// Of the cp - 1 later ring steps a rank takes, on average over the ranks, the share of a whole
// block they merge: rank r merges whole blocks at r of them and half blocks (the second half
// of the queries, or the first half of the keys and values) at the other cp - 1 - r, so
// (1 + 1/2) / 2 over r = 0 .. cp - 1.
constexpr double kCpLaterStepShare = 0.75;

// A GEMM as the forward sees it: `rows` tokens times a weight of `in` x `out`.
struct Gemm {
  std::string_view name;
  double rows, in, out;
  double count = 1;          // identical instances (local experts)
  double model_rows = 0;     // rows the FLOP convention counts (0: rows); MoE padding differs
  // Its weight gradient beside its input gradient's tensor-parallel collective (Op's field).
  bool beside_input_collective = false;
};

// What a layer's element-wise work costs: bytes read and written forward and backward.
struct Elementwise {
  std::string_view name;
  double forward_bytes;
  double backward_bytes;
  MemoryKernel kernel = MemoryKernel::streaming;
};

struct Shapes {
  double n;        // tokens per rank per micro-batch (b x s / cp)
  double n_sp;     // tokens of the sequence-parallel region (n / tp with SP, else n)
  double h, t, s, b, kv_rank;  // hidden, tp, seq_len, micro-batch, K/V width a rank holds
  double kv;                     // the model's K/V width (kv_heads x head_dim)
  double cp;                     // context-parallel ranks: ring steps of attention
  double operand_bytes;          // GEMM inputs: 1 under fp8, else 2
  Fp8Recipe fp8_recipe;          // how fp8 casts scale (under fp8)
};

Shapes shapes(const TrainingWorkload& w) {
  const auto& m = w.model;
  const auto& p = w.parallel;
  Shapes s{};
  s.b = w.batch.micro;
  s.s = m.seq_len;
  s.n = rank_tokens(w);
  s.t = p.tp;
  s.n_sp = p.sequence_parallel ? s.n / p.tp : s.n;
  s.h = m.hidden;
  s.kv_rank = m.kv_width_per_rank(p.tp);
  s.kv = double(m.kv_heads_or_default()) * m.head_dim();
  s.cp = p.cp;
  s.operand_bytes = w.precision == Precision::fp8 ? 1 : 2;
  s.fp8_recipe = w.fp8_recipe;
  return s;
}

// Under fp8 a GEMM's 16-bit input is cast before it: the forward's activations X (rows x in),
// the backward's output gradient dY (rows x out); the weight gradient reuses both casts.
void add_fp8_cast(std::vector<Op>& ops, const Gemm& g, Phase phase, Fp8Recipe recipe) {
  if (phase == Phase::backward_weight) return;
  Op op;
  op.name = "fp8_cast";
  op.kind = OpKind::elementwise;
  op.phase = phase;
  op.count = g.count;
  const double per_element = kFp8CastBytes + (recipe == Fp8Recipe::current ? kFp8CurrentScalingAmaxBytes : 0);
  op.bytes = g.count * g.rows * (phase == Phase::forward ? g.in : g.out) * per_element;
  ops.push_back(op);
}

// `operand_bytes` 2 under fp8: a GEMM left in 16 bits (no cast; timed at the 16-bit peak).
void add_gemm(std::vector<Op>& ops, const Gemm& g, Phase phase, double operand_bytes, Fp8Recipe recipe) {
  if (operand_bytes < kActivationBytes) add_fp8_cast(ops, g, phase, recipe);
  Op op;
  op.sixteen_bit = operand_bytes >= kActivationBytes;
  op.name = g.name;
  op.kind = OpKind::gemm;
  op.phase = phase;
  op.count = g.count;
  switch (phase) {
    case Phase::backward_input: op.m = g.rows, op.n = g.in, op.k = g.out; break;   // dX = dY W^T
    case Phase::backward_weight: op.m = g.in, op.n = g.out, op.k = g.rows; break;  // dW = X^T dY
    default: op.m = g.rows, op.n = g.out, op.k = g.in; break;
  }
  const double model_rows = g.model_rows > 0 ? g.model_rows : g.rows;
  op.flops = 2 * model_rows * g.in * g.out * g.count;
  op.work_flops = 2 * g.rows * g.in * g.out * g.count;
  op.beside_input_collective = g.beside_input_collective;
  op.bytes = g.count * (op.m * op.k + op.k * op.n) * operand_bytes;
  if (phase == Phase::backward_weight) op.accumulated = g.count * op.m * op.n;  // into the gradient buffer
  else op.bytes += g.count * op.m * op.n * kActivationBytes;                   // the 16-bit output
  ops.push_back(op);
}

void add_elementwise(std::vector<Op>& ops, const Elementwise& e, Phase phase) {
  if (phase == Phase::backward_weight) return;  // norm weight gradients are negligible
  Op op;
  op.name = e.name;
  op.kind = OpKind::elementwise;
  op.phase = phase;
  op.bytes = phase == Phase::forward ? e.forward_bytes : e.backward_bytes;
  op.memory_kernel = e.kernel;
  ops.push_back(op);
}

Elementwise elementwise(std::string_view name, double forward_bytes, MemoryKernel kernel = MemoryKernel::streaming) {
  return {name, forward_bytes, 2 * forward_bytes, kernel};
}

// Flash attention over the local queries (n) and the whole sequence's keys (b x s).
Op attention_op(const Shapes& s, Phase phase, std::string_view name) {
  Op op;
  op.name = name;
  op.kind = OpKind::attention;
  op.phase = phase;
  op.seq_len = s.n / s.b;
  op.kernels = s.cp;  // one kernel per ring step (context parallelism), else one
  const double forward_flops = 4 * s.n * s.s * s.h / s.t;
  const double forward_bytes =
      (2 * s.n * s.h / s.t + 2 * s.b * s.s * s.kv_rank) * kActivationBytes;
  // Model FLOPs count the causal half too: the work that is timed (an MFU over the whole s x s
  // matrix exceeds 1 at long sequences).
  if (phase == Phase::forward) {
    op.flops = forward_flops * kCausalShare;
    op.work_flops = forward_flops * kCausalShare;
    op.bytes = forward_bytes;
  } else {
    op.flops = 2 * forward_flops * kCausalShare;
    op.work_flops = kAttentionBackwardWork * forward_flops * kCausalShare;
    op.bytes = kAttentionBackwardWork * forward_bytes;
  }
  return op;
}

// Attention without flash attention (Megatron-LM before FlashAttention): per (sequence, local
// head) Q K^T and then the probabilities times V as batched GEMMs over the whole s x s matrix
// (the causal mask is applied to it, not skipped), and between them the scaled, masked softmax
// and the attention dropout, two kernels reading and writing the s x s matrix in HBM (bytes per
// element: workloads/unfused_attention.hpp, which serving's unfused prefill shares). The backward
// runs two GEMMs per forward GEMM. The GEMMs and the softmax are attention-core memory kernels
// (their measured share of HBM bandwidth; on GPUs the GEMMs' arithmetic adds to their bytes'
// time: sim/compute/roofline.hpp); the dropout a streaming pass.
void add_unfused_attention(std::vector<Op>& ops, const TrainingWorkload& w, const Shapes& s, Phase phase) {
  const double instances = s.b * w.model.heads / s.t;
  const double queries = s.n / s.b, keys = s.s, d = w.model.head_dim();
  const double elements = instances * queries * keys;
  const double passes = phase == Phase::forward ? 1 : 2;
  auto batched = [&](std::string_view name, double m, double n, double k) {
    Op op;
    op.name = name;
    op.kind = OpKind::gemm;
    op.phase = phase;
    op.m = m, op.n = n, op.k = k;
    op.sixteen_bit = true;  // the attention core stays in 16 bits under fp8, fused or not
    op.count = instances * passes;
    op.batch = instances;  // one strided-batched kernel per product
    op.flops = 2 * m * n * k * instances * passes * kCausalShare;  // the model needs the causal half
    op.work_flops = 2 * m * n * k * instances * passes;
    op.bytes = op.count * (m * k + k * n + m * n) * kActivationBytes;
    op.memory_kernel = MemoryKernel::attention_core;
    ops.push_back(op);
  };
  batched("attention_scores", queries, keys, d);
  namespace ua = unfused_attention;
  add_elementwise(ops,
                  {"softmax", ua::kSoftmaxBytes * elements, ua::kSoftmaxBackwardBytes * elements,
                   MemoryKernel::attention_core},
                  phase);
  add_elementwise(ops, {"dropout", ua::kDropoutBytes * elements, ua::kDropoutBytes * elements}, phase);
  batched("attention_values", queries, d, keys);
}

// Context parallelism's ring merges of the steps' partial results (training_ops.hpp): forward
// the output (first step, then each later one with its log-sum-exp correction, two kernels),
// backward dQ and the dK, dV passed around the ring.
Op cp_merge_op(const Shapes& s, Phase phase) {
  Op op;
  op.name = "cp_merge";
  op.kind = OpKind::elementwise;
  op.phase = phase;
  const double queries = s.n * s.h / s.t;              // elements of Q, O, dQ on this rank
  const double keys_values = 2 * s.n * s.kv_rank;  // of K and V, dK and dV
  const double later = kCpLaterStepShare * (s.cp - 1);
  if (phase == Phase::forward) {
    op.bytes = (kCpFirstMergeBytes + kCpMergeBytes * later) * queries;
    op.kernels = 1 + 2 * (s.cp - 1);
  } else {
    op.bytes = kCpMergeBytes * later * (queries + keys_values);
    op.kernels = 2 * (s.cp - 1);
  }
  return op;
}

void add_attention(std::vector<Op>& ops, const TrainingWorkload& w, const Shapes& s, Phase phase,
                   std::string_view name) {
  if (!w.flash_attention) return add_unfused_attention(ops, w, s, phase);
  ops.push_back(attention_op(s, phase, name));
  if (s.cp > 1) ops.push_back(cp_merge_op(s, phase));
}

// The dense MLP of FFN width f on n tokens (a model's MLP, or its shared experts).
void add_mlp(std::vector<Op>& ops, const TrainingWorkload& w, const Shapes& s, double f, Phase phase,
             std::string_view fc1, std::string_view act, std::string_view fc2) {
  const bool swiglu = w.model.mlp == MlpKind::swiglu;
  const double f_in = swiglu ? 2 * f : f;  // SwiGLU's gate and up projections run as one GEMM
  add_gemm(ops, {fc1, s.n, s.h, f_in / s.t, 1, 0, true}, phase, s.operand_bytes, s.fp8_recipe);
  add_elementwise(ops, elementwise(act, (swiglu ? 6 : 4) * s.n * f / s.t, MemoryKernel::activation), phase);
  add_gemm(ops, {fc2, s.n, f / s.t, s.h}, phase, s.operand_bytes, s.fp8_recipe);
}

void add_moe_experts(std::vector<Op>& ops, const TrainingWorkload& w, const Shapes& s, Phase phase) {
  const auto& moe = w.model.moe;
  const bool swiglu = w.model.mlp == MlpKind::swiglu;
  const double f = w.model.expert_ffn();
  const double f_in = swiglu ? 2 * f : f;
  const double ep = w.parallel.ep;
  // Balanced routing: the ep ranks' n x top_k token copies spread evenly over the experts;
  // each rank holds experts / ep of them, each padded by the capacity factor.
  const double local_experts = moe.experts / ep;
  const double model_rows = s.n * ep * moe.top_k / moe.experts;
  const double rows = model_rows * moe.capacity_factor;
  add_gemm(ops, {"expert_fc1", rows, s.h, f_in / s.t, local_experts, model_rows}, phase, s.operand_bytes, s.fp8_recipe);
  add_elementwise(ops, elementwise("expert_act", (swiglu ? 6 : 4) * rows * local_experts * f / s.t, MemoryKernel::activation),
                  phase);
  add_gemm(ops, {"expert_fc2", rows, f / s.t, s.h, local_experts, model_rows}, phase, s.operand_bytes, s.fp8_recipe);
  if (moe.shared_experts > 0) add_mlp(ops, w, s, moe.shared_experts * f, phase, "shared_fc1", "shared_act", "shared_fc2");
  add_elementwise(ops, elementwise("unpermute", 4 * s.n_sp * moe.top_k * s.h), phase);
  add_elementwise(ops, elementwise("residual", 6 * s.n_sp * s.h), phase);
}

}  // namespace

double rank_tokens(const TrainingWorkload& w) {
  return double(w.batch.micro) * w.model.seq_len / w.parallel.cp;
}

std::vector<Op> block_ops(const TrainingWorkload& w, Block block, Phase phase) {
  const Shapes s = shapes(w);
  const auto& m = w.model;
  std::vector<Op> ops;
  switch (block) {
    case Block::embedding:
      add_elementwise(ops, elementwise("embedding", 4 * s.n * s.h), phase);
      break;
    case Block::attention_in: {
      add_elementwise(ops, elementwise("norm", 4 * s.n_sp * s.h), phase);
      // Replicated KV heads (tp > kv_heads) are computed on every rank that holds them; the model
      // FLOPs count each once (the rows the convention counts scale by the unique share).
      const double width = s.h / s.t + 2 * s.kv_rank, unique = (s.h + 2 * s.kv) / s.t;
      add_gemm(ops, {"qkv", s.n, s.h, width, 1, s.n * unique / width, true}, phase, s.operand_bytes, s.fp8_recipe);
      // Rotary position embedding: queries and keys read and written, forward and backward alike.
      if (!m.learned_positions) {
        const double rope_bytes = 2 * kActivationBytes * s.n * (s.h / s.t + s.kv_rank);
        add_elementwise(ops, {"rope", rope_bytes, rope_bytes}, phase);
      }
      break;
    }
    case Block::attention_out:
      if (phase != Phase::backward_weight) add_attention(ops, w, s, phase, "attention");
      if (phase == Phase::backward_input && w.recompute == Recompute::selective)
        add_attention(ops, w, s, Phase::forward, "attention_recompute");
      add_gemm(ops, {"proj", s.n, s.h / s.t, s.h}, phase, s.operand_bytes, s.fp8_recipe);
      add_elementwise(ops, elementwise("residual", 6 * s.n_sp * s.h), phase);
      break;
    case Block::mlp:
      add_elementwise(ops, elementwise("norm", 4 * s.n_sp * s.h), phase);
      add_mlp(ops, w, s, m.ffn_or_default(), phase, "fc1", "act", "fc2");
      add_elementwise(ops, elementwise("residual", 6 * s.n_sp * s.h), phase);
      break;
    case Block::moe_router:
      add_elementwise(ops, elementwise("norm", 4 * s.n_sp * s.h), phase);
      // Without sequence parallelism every tensor-parallel rank routes the same n tokens: the
      // FLOP convention counts that work once.
      add_gemm(ops, {"router", s.n_sp, s.h, double(m.moe.experts), 1, s.n / s.t}, phase, s.operand_bytes, s.fp8_recipe);
      add_elementwise(ops, elementwise("permute", 4 * s.n_sp * m.moe.top_k * s.h), phase);
      break;
    case Block::moe_experts:
      add_moe_experts(ops, w, s, phase);
      break;
    case Block::head: {
      const double v = m.vocab / s.t;  // vocabulary-parallel LM head
      add_elementwise(ops, elementwise("final_norm", 4 * s.n_sp * s.h), phase);
      // In 16 bits even under fp8: Megatron-Core's output layer is not a Transformer Engine
      // module, so fp8 autocast leaves it alone.
      add_gemm(ops, {"lm_head", s.n, s.h, v, 1, 0, true}, phase, kActivationBytes, s.fp8_recipe);
      // fp32 logits: softmax and loss read and write them; the backward writes their gradient.
      add_elementwise(ops, {"loss", 12 * s.n * v, 8 * s.n * v, MemoryKernel::loss}, phase);
      break;
    }
  }
  return ops;
}

double optimizer_bytes_per_updated_param(const OptimizerStep& s) {
  const double g = s.gradient_bytes;
  if (s.kind == OptimizerKind::fused) {
    const double adam = g + 12 + 12 + 2;
    return adam + g + (s.loss_scaled ? 2 * g : 0);
  }
  // fp32 main gradient copy (none when the buffer is fp32), unscale, norm, FusedAdam, weight copy.
  const double to_fp32 = g < 4 ? g + 4 : 0;
  return to_fp32 + (s.loss_scaled ? 8 : 0) + 4 + 28 + 6;
}

double optimizer_bytes_per_buffer_param(const OptimizerStep& s) {
  return s.kind == OptimizerKind::megatron ? s.gradient_bytes : 0;
}

Op optimizer_op(const OptimizerStep& s, double updated_params, double buffer_params) {
  Op op;
  op.name = "adam";
  op.kind = OpKind::elementwise;
  op.phase = Phase::optimizer;
  op.bytes = updated_params * optimizer_bytes_per_updated_param(s) + buffer_params * optimizer_bytes_per_buffer_param(s);
  return op;
}

Op host_optimizer_op(double local_params, double gradient_bytes, bool loss_scaled) {
  // DeepSpeed's CPU Adam: one fused loop over the host's copies.
  Op op = optimizer_op({OptimizerKind::fused, gradient_bytes, loss_scaled}, local_params, 0);
  op.kind = OpKind::host_memory;
  op.phase = Phase::host;
  return op;
}

Op host_copy_op(std::string_view name, double bytes) {
  Op op;
  op.name = name;
  op.kind = OpKind::pcie;
  op.phase = Phase::host;
  op.bytes = bytes;
  return op;
}

double total_flops(const std::vector<Op>& ops) {
  return std::accumulate(ops.begin(), ops.end(), 0.0, [](double a, const Op& o) { return a + o.flops; });
}

double total_work_flops(const std::vector<Op>& ops) {
  return std::accumulate(ops.begin(), ops.end(), 0.0, [](double a, const Op& o) { return a + o.work_flops; });
}

}  // namespace cs::work
