// workload.model: a preset (workloads/training_model.hpp, each citing its source) with the
// file's overrides, or the shape itself. The one parser of a model, for training, training_run
// and serving workloads alike.
#include "sim/scenario/parse_model.hpp"

#include "sim/scenario/suggest.hpp"
#include "workloads/training_plan.hpp"

namespace cs::scenario::detail {

work::TransformerSpec parse_transformer(const json& m, const std::string& at) {
  if (!m.is_object()) throw InputError(at, "expected an object {preset, ...} or the model's shape; got " + describe_value(m));
  work::TransformerSpec spec;
  if (const json* p = member(m, "preset")) {
    std::vector<std::string> names;
    for (const auto& preset : work::model_presets()) names.push_back(preset.name);
    const std::string path = join_path(at, "preset");
    if (!p->is_string()) throw InputError(path, "expected one of " + quoted_list(names));
    const auto found = work::find_model_preset(p->get<std::string>());
    if (!found)
      throw InputError(path, "unknown model \"" + p->get<std::string>() + "\"; the presets are " + quoted_list(names),
                       nearest(p->get<std::string>(), names) ? did_you_mean(p->get<std::string>(), names)
                                                             : "or give the shape: layers, hidden, heads, ...");
    spec = *found;
  } else {
    for (const char* key : {"layers", "hidden", "heads", "vocab"})
      if (!member(m, key))
        throw InputError(join_path(at, key), "required without a preset: the model's shape (layers, hidden, heads, vocab)",
                         "or give a preset such as \"llama3-8b\"");
    spec.name = "custom";
    spec.seq_len = 4096;
    spec.mlp = work::MlpKind::swiglu;
  }
  constexpr int64_t kMax = 1 << 24;
  const auto count = [&](const char* key, int def, int64_t min) {
    return static_cast<int>(get_int(m, key, at, def, min, kMax));
  };
  spec.layers = count("layers", spec.layers, 1);
  spec.hidden = count("hidden", spec.hidden, 1);
  spec.heads = count("heads", spec.heads, 1);
  spec.kv_heads = count("kv_heads", spec.kv_heads, 1);
  spec.ffn_hidden = count("ffn_hidden", spec.ffn_hidden, 1);
  spec.seq_len = count("seq_len", spec.seq_len, 1);
  spec.vocab = count("vocab", spec.vocab, 1);
  spec.mlp = get_choice(m, "mlp", at, work::kMlpKindNames, spec.mlp);
  spec.name = get_string(m, "name", at, spec.name);
  spec.tied_embeddings = get_bool(m, "tied_embeddings", at, spec.tied_embeddings);
  spec.bias = get_bool(m, "bias", at, spec.bias);
  spec.learned_positions = get_bool(m, "learned_positions", at, spec.learned_positions);
  work::MoeSpec& moe = spec.moe;
  moe.experts = count("experts", moe.experts, 0);
  if (moe.experts == 1) moe.experts = 0;  // one expert is the dense MLP
  moe.top_k = count("top_k", moe.top_k, 1);
  moe.capacity_factor = get_number(m, "capacity_factor", at, moe.capacity_factor, 1.0, 1e3);
  moe.shared_experts = count("shared_experts", moe.shared_experts, 0);
  moe.expert_ffn_hidden = count("expert_ffn_hidden", moe.expert_ffn_hidden, 1);
  moe.dense_layers = count("dense_layers", moe.dense_layers, 0);
  try {
    work::validate_model(spec);
  } catch (const work::TrainingError& e) {
    // Its keys are "model.<key>": the key under `at`.
    const std::string& key = e.key();
    throw InputError(join_path(at, key.rfind("model.", 0) == 0 ? key.substr(6) : key), e.what(), e.hint());
  }
  return spec;
}

}  // namespace cs::scenario::detail
