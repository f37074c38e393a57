#include "workloads/training_model.hpp"

namespace cs::work {
namespace {

// Weights (and biases) of one MLP of FFN size f: GELU has fc1 (h x f) and fc2 (f x h); SwiGLU
// has gate and up (h x f each) and down (f x h).
double mlp_params(const TransformerSpec& m, double f, bool with_bias) {
  const double h = m.hidden;
  if (m.mlp == MlpKind::swiglu) return 3 * h * f + (with_bias ? 2 * f + h : 0);
  return 2 * h * f + (with_bias ? f + h : 0);
}

double attention_weights(const TransformerSpec& m) {
  const double h = m.hidden, kv = double(m.kv_heads_or_default()) * m.head_dim();
  return 2 * h * h + 2 * h * kv;  // Q and O are h x h; K and V are h x (kv_heads x head_dim)
}

LayerParams layer_params(const TransformerSpec& m, bool moe) {
  const double h = m.hidden, kv = double(m.kv_heads_or_default()) * m.head_dim();
  LayerParams p;
  p.attention = attention_weights(m) + (m.bias ? (h + 2 * kv) + h : 0);
  p.norms = 2 * (m.bias ? 2 * h : h);  // LayerNorm has weight and bias, RMSNorm a weight
  if (!moe) {
    p.mlp = mlp_params(m, m.ffn_or_default(), m.bias);
    return p;
  }
  const double f = m.expert_ffn();
  p.mlp = m.moe.shared_experts * mlp_params(m, f, m.bias);
  p.experts = m.moe.experts * mlp_params(m, f, m.bias);
  p.router = h * m.moe.experts;
  return p;
}

}  // namespace

ParamCounts parameter_counts(const TransformerSpec& m) {
  ParamCounts c;
  const double h = m.hidden, v = m.vocab;
  c.dense_layer = layer_params(m, false);
  if (m.moe.enabled()) c.moe_layer = layer_params(m, true);
  const int moe_layers = m.moe.enabled() ? m.layers - m.moe.dense_layers : 0;
  const int dense_layers = m.layers - moe_layers;
  c.embedding = v * h + (m.learned_positions ? double(m.seq_len) * h : 0);
  c.lm_head = m.tied_embeddings ? 0 : v * h;
  c.final_norm = m.bias ? 2 * h : h;
  c.total = dense_layers * c.dense_layer.total() + moe_layers * c.moe_layer.total() + c.embedding + c.lm_head +
            c.final_norm;
  c.routed_experts = moe_layers * c.moe_layer.experts;

  // GEMM weights a token passes through (no biases: a bias add is not a GEMM FLOP).
  const double dense_mlp = mlp_params(m, m.ffn_or_default(), false);
  double active_layers = dense_layers * (attention_weights(m) + dense_mlp);
  if (moe_layers > 0) {
    const double expert = mlp_params(m, m.expert_ffn(), false);
    active_layers += moe_layers * (attention_weights(m) + (m.moe.top_k + m.moe.shared_experts) * expert +
                                   h * m.moe.experts);
  }
  c.active_matmul = active_layers + v * h;  // the LM head's GEMM runs whether tied or not
  return c;
}

std::vector<TransformerSpec> model_presets() {
  std::vector<TransformerSpec> presets;
  auto add = [&](TransformerSpec s) { presets.push_back(std::move(s)); };

  TransformerSpec gpt3{.name = "gpt3-175b", .layers = 96, .hidden = 12288, .heads = 96, .kv_heads = 96,
                       .ffn_hidden = 4 * 12288, .mlp = MlpKind::gelu, .seq_len = 2048, .vocab = 50257,
                       .tied_embeddings = true, .bias = true, .learned_positions = true, .moe = {},
                       .source = "Brown et al. 2020, Language Models are Few-Shot Learners, Table 2.1 (96 layers, "
                                 "d_model 12288, 96 heads, context 2048); GPT-2 BPE vocabulary of 50257"};
  add(gpt3);

  auto llama = [](std::string name, int layers, int hidden, int heads, int kv, int ffn, int seq, int vocab,
                  std::string source) {
    return TransformerSpec{.name = std::move(name), .layers = layers, .hidden = hidden, .heads = heads,
                           .kv_heads = kv, .ffn_hidden = ffn, .mlp = MlpKind::swiglu, .seq_len = seq,
                           .vocab = vocab, .tied_embeddings = false, .bias = false, .learned_positions = false,
                           .moe = {}, .source = std::move(source)};
  };
  const std::string llama2 = "Touvron et al. 2023, Llama 2, Table 1 and Meta's config.json (";
  add(llama("llama2-7b", 32, 4096, 32, 32, 11008, 4096, 32000, llama2 + "Llama-2-7b-hf)"));
  add(llama("llama2-70b", 80, 8192, 64, 8, 28672, 4096, 32000, llama2 + "Llama-2-70b-hf: GQA with 8 KV heads)"));
  const std::string llama3 = "Dubey et al. 2024, The Llama 3 Herd of Models, Table 3 (";
  add(llama("llama3-8b", 32, 4096, 32, 8, 14336, 8192, 128256, llama3 + "8B; vocabulary 128,256)"));
  add(llama("llama3-70b", 80, 8192, 64, 8, 28672, 8192, 128256, llama3 + "70B; vocabulary 128,256)"));
  add(llama("llama3-405b", 126, 16384, 128, 8, 53248, 8192, 128256, llama3 + "405B; vocabulary 128,256)"));

  TransformerSpec mixtral = llama("mixtral-8x7b", 32, 4096, 32, 8, 14336, 32768, 32000,
                                  "Jiang et al. 2024, Mixtral of Experts, Table 1 (8 experts, top 2, context "
                                  "32,768; vocabulary 32,000)");
  mixtral.moe = MoeSpec{.experts = 8, .top_k = 2};
  add(mixtral);

  // Multi-head latent attention is approximated by plain multi-head attention of the same
  // width (128 heads of 56): about 205 M attention parameters per layer against MLA's ~187 M.
  TransformerSpec deepseek = llama("deepseek-v3-like", 61, 7168, 128, 128, 18432, 4096, 129280,
                                   "DeepSeek-AI 2024, DeepSeek-V3 Technical Report, section 4.2 (61 layers, "
                                   "hidden 7168, 128 heads, first 3 layers dense with FFN 18432, 1 shared + "
                                   "256 routed experts of FFN 2048, 8 routed per token, 4K pre-training "
                                   "sequences); MLA replaced by multi-head attention");
  deepseek.moe = MoeSpec{.experts = 256, .top_k = 8, .shared_experts = 1, .expert_ffn_hidden = 2048,
                         .dense_layers = 3};
  add(deepseek);
  return presets;
}

std::optional<TransformerSpec> find_model_preset(std::string_view name) {
  for (auto& preset : model_presets())
    if (preset.name == name) return preset;
  return std::nullopt;
}

}  // namespace cs::work
