#pragma once
// A decoder-only transformer as data (workload.model): shapes, MLP kind, MoE, and the
// parameter counts that follow from them. Presets cite their source.
//
// Invariants (checked by validate_model, training_plan.hpp): hidden % heads == 0,
// heads % kv_heads == 0, every size >= 1; for MoE experts >= top_k >= 1.
// Units: counts (parameters, tokens); no bytes here.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/enum_table.hpp"

namespace cs::work {

enum class MlpKind : uint8_t { gelu, swiglu };
// workload.model.mlp.
inline constexpr auto kMlpKindNames = std::to_array<EnumName<MlpKind>>({
    {"gelu", MlpKind::gelu, "GELU: two GEMMs"},
    {"swiglu", MlpKind::swiglu, "SwiGLU: gate and up projections, then down"},
});
static_assert(names_every_value<kMlpKindNames>());

// Mixture of experts in the MLP of every layer after the first `dense_layers`.
struct MoeSpec {
  int experts = 0;               // routed experts; 0: a dense model
  int top_k = 1;                 // routed experts per token
  double capacity_factor = 1.0;  // tokens an expert processes / its balanced share (>= 1 pads)
  int shared_experts = 0;        // experts every token goes through (DeepSeek)
  int expert_ffn_hidden = 0;     // FFN size of one expert; 0: the model's ffn_hidden
  int dense_layers = 0;          // leading layers with a dense MLP of ffn_hidden (DeepSeek-V3: 3)
  bool enabled() const { return experts > 0; }
};

struct TransformerSpec {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;        // 0: heads (multi-head attention); fewer: grouped-query attention
  int ffn_hidden = 0;      // 0: 4 x hidden
  MlpKind mlp = MlpKind::gelu;
  int seq_len = 0;         // tokens per sequence
  int vocab = 0;
  bool tied_embeddings = false;
  // GPT-style: biases on every linear layer and LayerNorm (weight + bias); otherwise none and
  // RMSNorm (weight only), as Llama.
  bool bias = false;
  bool learned_positions = false;  // a learned position embedding of seq_len x hidden (GPT-3)
  MoeSpec moe;
  std::string source;      // where the shapes come from

  int kv_heads_or_default() const { return kv_heads > 0 ? kv_heads : heads; }
  int ffn_or_default() const { return ffn_hidden > 0 ? ffn_hidden : 4 * hidden; }
  int expert_ffn() const { return moe.expert_ffn_hidden > 0 ? moe.expert_ffn_hidden : ffn_or_default(); }
  int head_dim() const { return hidden / heads; }
  // The K and V width (KV heads x head_dim) one of `tp` tensor-parallel ranks holds: its share
  // of the KV heads, or one whole head when tp exceeds them (tp a multiple of kv_heads: each
  // rank keeps a copy of its group's head, as NeuronX Distributed's kv_replicator and vLLM
  // replicate KV heads; Megatron-Core requires the query groups to divide over tp).
  double kv_width_per_rank(int tp) const {
    const int kv = kv_heads_or_default();
    return double(tp > kv ? 1 : kv / tp) * head_dim();
  }
  bool moe_layer(int layer) const { return moe.enabled() && layer >= moe.dense_layers; }
};

// Parameters of one layer, split the way tensor and expert parallelism shard them.
struct LayerParams {
  double attention = 0;      // QKV and output projection weights (+ biases)
  double mlp = 0;            // dense MLP, or the shared experts of an MoE layer
  double experts = 0;        // all routed experts of an MoE layer (sharded by expert parallelism)
  double router = 0;         // MoE gate
  double norms = 0;          // the layer's two norms
  double total() const { return attention + mlp + experts + router + norms; }
};

struct ParamCounts {
  LayerParams dense_layer;   // a layer with a dense MLP
  LayerParams moe_layer;     // a layer with an MoE MLP (zero for a dense model)
  double embedding = 0;      // vocab x hidden (+ learned positions)
  double lm_head = 0;        // vocab x hidden when not tied, else 0
  double final_norm = 0;
  double total = 0;          // every parameter
  double routed_experts = 0; // of total: routed expert weights (sharded by ep)
  // Per token: the parameters a token's GEMMs touch (top_k of the routed experts, the router,
  // every other weight matrix, the LM head whether tied or not), excluding the embedding
  // lookup, norms and biases: 6 x this x tokens are the step's GEMM FLOPs.
  double active_matmul = 0;
};

ParamCounts parameter_counts(const TransformerSpec& model);

// Well-known models, each citing its source; names are lower-case ("llama3-70b").
std::vector<TransformerSpec> model_presets();
std::optional<TransformerSpec> find_model_preset(std::string_view name);

}  // namespace cs::work
