#include "workloads/training_memory.hpp"

#include <algorithm>

#include "workloads/training_ops.hpp"
#include "workloads/training_schedule.hpp"

namespace cs::work {
namespace {

// First layer of each model chunk, and one past the last.
std::vector<int> chunk_starts(const TrainingWorkload& w) {
  const auto layers = chunk_layers(w);
  std::vector<int> starts{0};
  for (int n : layers) starts.push_back(starts.back() + n);
  return starts;
}

// Korthikanti et al.'s terms, per rank, for n tokens: the parts outside the tensor-parallel
// region are replicated over tp unless sequence parallelism splits them.
struct ActivationTerms {
  double n, h, t, s, a, kv_rank;  // kv_rank: the K/V width a rank holds
  bool sp;
  double masks;  // dropout masks: 1 byte per element for GPT-style models (dropout), else 0
  double replicated(double bytes) const { return sp ? bytes / t : bytes; }
  double mlp_width_bytes(double tokens, double f, MlpKind mlp) const {
    // GELU keeps its input and output (fc2's input); SwiGLU the gate and up outputs and their
    // product.
    return tokens * f * (mlp == MlpKind::swiglu ? 6 : 4) / t;
  }
};

}  // namespace

ModelStates model_state_bytes(double params, int zero_stage, int shards, const MemoryOptions& o) {
  ModelStates m;
  const double n = std::max(1, shards);
  m.parameters = params * o.parameter_bytes / (zero_stage >= 3 ? n : 1);
  m.gradients = params * o.gradient_bytes / (zero_stage >= 2 ? n : 1);
  m.optimizer = params * o.optimizer_bytes / (zero_stage >= 1 ? n : 1);
  return m;
}

double checkpoint_bytes(const TransformerSpec& model, const MemoryOptions& o) {
  return parameter_counts(model).total * (o.parameter_bytes + o.optimizer_bytes);
}

double layer_activation_bytes(const TrainingWorkload& w, int layer, const MemoryOptions& o) {
  const auto& m = w.model;
  const auto& p = w.parallel;
  ActivationTerms x{rank_tokens(w), double(m.hidden), double(p.tp), double(m.seq_len), double(m.heads),
                    m.kv_width_per_rank(p.tp), p.sequence_parallel, m.bias ? 1.0 : 0.0};
  const double nh = x.n * x.h;
  if (w.recompute == Recompute::full) return x.replicated(2 * nh);  // the layer's input only

  // Attention: norm input, QKV input and the dropout mask outside the TP region; Q, K, V and
  // the projection's input inside; the s x s softmax, its dropout mask and output unless
  // flash attention or selective recomputation leaves them out.
  double bytes = x.replicated(2 * nh + 2 * nh + x.masks * nh) + (2 * nh + 2 * nh) / x.t + 4 * x.n * x.kv_rank;
  if (o.flash_attention)
    bytes += 4 * x.n * x.a / x.t;  // fp32 log-sum-exp per query and head
  else if (w.recompute == Recompute::none)
    bytes += 5 * x.a * x.n * x.s / x.t;

  // MLP: norm input, fc1 input and the dropout mask outside the TP region; the widths inside.
  bytes += x.replicated(2 * nh + 2 * nh + x.masks * nh);
  if (!m.moe_layer(layer)) return bytes + x.mlp_width_bytes(x.n, m.ffn_or_default(), m.mlp);
  const double copies = x.n * m.moe.top_k * m.moe.capacity_factor;
  bytes += 2 * copies * x.h + x.mlp_width_bytes(copies, m.expert_ffn(), m.mlp);  // permuted tokens
  if (m.moe.shared_experts > 0) bytes += x.mlp_width_bytes(x.n, double(m.moe.shared_experts) * m.expert_ffn(), m.mlp);
  return bytes;
}

StageParams stage_params(const TrainingWorkload& w, int stage) {
  const auto& m = w.model;
  const auto& p = w.parallel;
  const ParamCounts counts = parameter_counts(m);
  const auto starts = chunk_starts(w);
  const int last_chunk = model_chunks(p) - 1;
  // tp > kv_heads: each rank keeps a whole copy of its group's K and V heads (weights and
  // biases), more than the tp-th of the model's the counts divide below.
  const double kv_copied =
      2 * (m.kv_width_per_rank(p.tp) - double(m.kv_heads_or_default()) * m.head_dim() / p.tp) * (m.hidden + (m.bias ? 1 : 0));
  StageParams sp;
  for (int c = 0; c < p.virtual_stages; ++c) {
    const int j = model_chunk_of(stage, c, p.pp);
    for (int layer = starts[j]; layer < starts[j + 1]; ++layer) {
      const LayerParams& lp = m.moe_layer(layer) ? counts.moe_layer : counts.dense_layer;
      const double dense = (lp.attention + lp.mlp) / p.tp + kv_copied + lp.router + lp.norms;
      const double expert = lp.experts / (double(p.tp) * p.ep);
      sp.dense += dense;
      sp.expert += expert;
      sp.largest_layer = std::max(sp.largest_layer, dense + expert);
    }
    if (j == 0) sp.dense += counts.embedding / p.tp;
    if (j == last_chunk) {
      sp.dense += counts.final_norm;
      if (!m.tied_embeddings)
        sp.dense += counts.lm_head / p.tp;
      else if (p.pp > 1)
        sp.dense += double(m.vocab) * m.hidden / p.tp;  // the last stage's copy of the tied weight
    }
  }
  return sp;
}

MemoryReport memory_per_gpu(const TrainingWorkload& w, double gpu_memory_bytes, const MemoryOptions& o) {
  const auto& p = w.parallel;
  const int zero = p.zero;
  const int dense_shards = dense_zero_shards(p);
  const int expert_shards = expert_zero_shards(p);
  const auto starts = chunk_starts(w);
  const int m = micro_batches(w);
  TrainingWorkload no_recompute = w;
  no_recompute.recompute = Recompute::none;

  MemoryReport report;
  report.capacity_bytes = gpu_memory_bytes;
  for (int s = 0; s < p.pp; ++s) {
    MemoryBreakdown b;
    const StageParams sp = stage_params(w, s);
    const ModelStates dense = model_state_bytes(sp.dense, zero, dense_shards, o);
    const ModelStates expert = model_state_bytes(sp.expert, zero, expert_shards, o);
    b.parameters = dense.parameters + expert.parameters;
    b.gradients = dense.gradients + expert.gradients;
    b.optimizer = dense.optimizer + expert.optimizer;
    if (zero == 3) b.zero_buffers = sp.largest_layer * (2 * o.parameter_bytes + o.gradient_bytes);
    if (p.offload == Offload::optimizer) {
      b.host = b.optimizer;
      b.optimizer = 0;
      if (zero >= 2) {  // the host accumulates the gradients; the GPU keeps a bucket (ZeRO 2)
        b.host += b.gradients;
        const double bucket = gradient_bucket_params(p, o.bucket_params);
        b.gradients = zero == 2 ? std::min(sp.dense + sp.expert, bucket) * o.gradient_bytes : 0;
      }
      report.max_host_bytes = std::max(report.max_host_bytes, b.host);
    }

    // Activations held per local chunk, replayed along the stage's schedule.
    std::vector<double> chunk_bytes(static_cast<std::size_t>(p.virtual_stages), 0.0);
    double largest_layer_full = 0;
    for (int c = 0; c < p.virtual_stages; ++c) {
      const int j = model_chunk_of(s, c, p.pp);
      for (int layer = starts[j]; layer < starts[j + 1]; ++layer) {
        chunk_bytes[static_cast<std::size_t>(c)] += layer_activation_bytes(w, layer, o);
        largest_layer_full = std::max(largest_layer_full, layer_activation_bytes(no_recompute, layer, o));
      }
      if (j == model_chunks(p) - 1) b.logits = 6 * rank_tokens(w) * w.model.vocab / p.tp;
    }
    const bool split = p.schedule == Schedule::zb_h1;
    double held = 0;
    int alive = 0;
    for (const PipelinePass& pass : stage_schedule(p.schedule, s, p.pp, m, p.virtual_stages)) {
      const double bytes = chunk_bytes[static_cast<std::size_t>(pass.chunk)];
      if (pass.kind == PassKind::forward) {
        held += bytes, ++alive;
      } else if (pass.kind == (split ? PassKind::backward_weight : PassKind::backward)) {
        held -= bytes, --alive;
      }
      if (held > b.activations) b.activations = held, b.in_flight = alive;
    }
    if (w.recompute == Recompute::full) b.recompute = largest_layer_full;
    b.overhead = o.framework_overhead_bytes;
    report.per_stage.push_back(b);
    if (b.total() > report.max_bytes) report.max_bytes = b.total(), report.worst_stage = s;
  }
  report.usable_bytes = gpu_memory_bytes * (1 - o.headroom);
  report.fits = report.max_bytes <= report.usable_bytes;
  report.within_capacity = report.max_bytes <= gpu_memory_bytes;
  return report;
}

}  // namespace cs::work
