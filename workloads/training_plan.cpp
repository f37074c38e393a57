#include "workloads/training_plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace cs::work {
namespace {

std::string str(long long v) { return std::to_string(v); }

[[noreturn]] void fail(std::string key, const std::string& what, std::string hint = "") {
  throw TrainingError(std::move(key), what, std::move(hint));
}

void require_positive(int value, const char* key) {
  if (value < 1) fail(key, "expected an integer >= 1; got " + str(value));
}

// The divisor of `n` nearest to `want` (for hints).
int nearest_divisor(int n, int want) {
  int best = 1;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0 && std::abs(d - want) < std::abs(best - want)) best = d;
  return best;
}

void validate_sizes(const ParallelPlan& p) {
  require_positive(p.tp, "parallel.tp");
  require_positive(p.pp, "parallel.pp");
  require_positive(p.dp, "parallel.dp");
  require_positive(p.cp, "parallel.cp");
  require_positive(p.ep, "parallel.ep");
  require_positive(p.virtual_stages, "parallel.virtual_stages");
  if (p.zero < 0 || p.zero > 3) fail("parallel.zero", "expected a ZeRO stage 0-3; got " + str(p.zero));
  require_positive(p.zero_replicas, "parallel.zero_replicas");
  if (p.zero_replicas > 1) {
    if (p.zero == 0)
      fail("parallel.zero_replicas", "hybrid sharding replicates ZeRO's shards; with zero 0 nothing is sharded",
           "set parallel.zero to 1, 2 or 3 (3: FSDP inside each group)");
    if (p.dp % p.ep == 0 && (p.dp / p.ep) % p.zero_replicas != 0)
      fail("parallel.zero_replicas",
           "zero_replicas (" + str(p.zero_replicas) + ") must divide the data-parallel replicas dp / ep (" +
               str(p.dp / p.ep) + ")",
           "zero_replicas = " + str(nearest_divisor(p.dp / p.ep, p.zero_replicas)));
  }
}

void validate_cluster(const ParallelPlan& p, const ClusterShape& c) {
  const long long product = 1LL * p.tp * p.pp * p.dp * p.cp;
  if (product != c.gpus) {
    const long long others = 1LL * p.tp * p.pp * p.cp;
    std::string hint = c.gpus % others == 0 ? "dp = " + str(c.gpus / others) + " uses every GPU"
                                            : "choose tp, pp and cp whose product divides " + str(c.gpus);
    fail("parallel.dp",
         "tp x pp x dp x cp = " + str(p.tp) + " x " + str(p.pp) + " x " + str(p.dp) + " x " + str(p.cp) + " = " +
             str(product) + ", but the cluster has " + str(c.gpus) + " GPUs",
         hint);
  }
  if (p.tp > c.gpus_per_node && !c.allow_tp_across_nodes)
    fail("parallel.tp", "tp = " + str(p.tp) + " is larger than a node (" + str(c.gpus_per_node) + " GPUs)",
         "tensor-parallel all-reduces run on every layer; keep tp <= " + str(c.gpus_per_node));
}

void validate_model_split(const TrainingWorkload& w) {
  const auto& m = w.model;
  const auto& p = w.parallel;
  if (m.heads % p.tp != 0)
    fail("parallel.tp", "heads (" + str(m.heads) + ") must be a multiple of tp (" + str(p.tp) + ")",
         "tp = " + str(nearest_divisor(m.heads, p.tp)));
  const int kv = m.kv_heads_or_default();
  if (kv % p.tp != 0 && p.tp % kv != 0)
    fail("parallel.tp",
         "kv_heads (" + str(kv) + ") must be a multiple of tp (" + str(p.tp) +
             ") or tp a multiple of kv_heads: each tensor-parallel rank holds whole KV heads, or a copy of one",
         "tp = " + str(nearest_divisor(kv, p.tp)));
  if (m.ffn_or_default() % p.tp != 0 || (m.moe.enabled() && m.expert_ffn() % p.tp != 0))
    fail("parallel.tp", "ffn_hidden must be a multiple of tp (" + str(p.tp) + ")");
  if (m.seq_len % (2 * p.cp) != 0 && p.cp > 1)
    fail("parallel.cp",
         "seq_len (" + str(m.seq_len) + ") must be a multiple of 2 x cp (" + str(2 * p.cp) +
             "): context parallelism splits each sequence into 2 x cp chunks for causal balance");
  if (p.ep > 1) {
    if (!m.moe.enabled()) fail("parallel.ep", "expert parallelism needs an MoE model (model.experts)");
    if (m.moe.experts % p.ep != 0)
      fail("parallel.ep", "experts (" + str(m.moe.experts) + ") must be a multiple of ep (" + str(p.ep) + ")",
           "ep = " + str(nearest_divisor(m.moe.experts, p.ep)));
    if (p.dp % p.ep != 0)
      fail("parallel.ep", "ep (" + str(p.ep) + ") must divide dp (" + str(p.dp) +
                              "): expert parallelism is carved out of data parallelism",
           "ep = " + str(nearest_divisor(p.dp, p.ep)));
  }
}

void validate_pipeline(const TrainingWorkload& w) {
  const auto& p = w.parallel;
  const int chunks = model_chunks(p);
  if (p.schedule == Schedule::interleaved) {
    if (p.virtual_stages < 2)
      fail("parallel.virtual_stages", "the interleaved schedule needs virtual_stages >= 2; got " +
                                          str(p.virtual_stages));
    if (p.pp < 2) fail("parallel.schedule", "the interleaved schedule needs pp >= 2", "use \"1f1b\"");
  } else if (p.virtual_stages != 1) {
    fail("parallel.virtual_stages", "virtual_stages > 1 needs the \"interleaved\" schedule; got \"" +
                                        std::string(to_string(p.schedule)) + "\"");
  }
  if (!p.layer_split.empty()) {
    if (static_cast<int>(p.layer_split.size()) != chunks)
      fail("parallel.layer_split", "expected pp x virtual_stages = " + str(chunks) + " entries; got " +
                                       str(static_cast<long long>(p.layer_split.size())));
    for (std::size_t i = 0; i < p.layer_split.size(); ++i)
      if (p.layer_split[i] < 1)
        fail("parallel.layer_split." + str(static_cast<long long>(i)),
             "expected at least one layer per model chunk; got " + str(p.layer_split[i]));
    const long long sum = std::accumulate(p.layer_split.begin(), p.layer_split.end(), 0LL);
    if (sum != w.model.layers)
      fail("parallel.layer_split", "entries sum to " + str(sum) + ", but the model has " + str(w.model.layers) +
                                       " layers");
  } else if (w.model.layers % chunks != 0) {
    fail("parallel.pp", "layers (" + str(w.model.layers) + ") are not a multiple of pp x virtual_stages (" +
                            str(chunks) + ")",
         "give parallel.layer_split, or pp x virtual_stages dividing " + str(w.model.layers));
  }
}

void validate_batch(const TrainingWorkload& w) {
  const auto& b = w.batch;
  const auto& p = w.parallel;
  require_positive(b.micro, "batch.micro");
  if (b.global < 0) fail("batch.global", "expected an integer >= 1; got " + str(b.global));
  const long long per_step = 1LL * b.micro * p.dp;
  const int global = global_batch(w);
  if (global % per_step != 0) {
    const long long lower = std::max(per_step, global / per_step * per_step);
    fail("batch.global",
         "global (" + str(global) + ") must be a multiple of micro x dp (" + str(per_step) + ")",
         "global = " + str(lower) + " or " + str(lower + per_step));
  }
  const int m = micro_batches(w);
  if (p.schedule == Schedule::interleaved && m % p.pp != 0)
    fail("batch.global",
         "the interleaved schedule needs micro-batches per replica (" + str(m) + ") to be a multiple of pp (" +
             str(p.pp) + ")",
         "global = " + str(per_step * p.pp * std::max(1, (m + p.pp - 1) / p.pp)));
}

}  // namespace

std::string_view to_string(Precision p) { return name_of(kPrecisionNames, p); }

std::string_view to_string(Schedule s) { return name_of(kScheduleNames, s); }

std::string_view to_string(Recompute r) { return name_of(kRecomputeNames, r); }

std::string_view to_string(Offload o) { return name_of(kOffloadNames, o); }

void validate_model(const TransformerSpec& m) {
  require_positive(m.layers, "model.layers");
  require_positive(m.hidden, "model.hidden");
  require_positive(m.heads, "model.heads");
  require_positive(m.seq_len, "model.seq_len");
  require_positive(m.vocab, "model.vocab");
  if (m.kv_heads < 0) fail("model.kv_heads", "expected an integer >= 1; got " + str(m.kv_heads));
  if (m.ffn_hidden < 0) fail("model.ffn_hidden", "expected an integer >= 1; got " + str(m.ffn_hidden));
  if (m.hidden % m.heads != 0)
    fail("model.heads", "hidden (" + str(m.hidden) + ") must be a multiple of heads (" + str(m.heads) + ")");
  if (m.heads % m.kv_heads_or_default() != 0)
    fail("model.kv_heads", "heads (" + str(m.heads) + ") must be a multiple of kv_heads (" +
                               str(m.kv_heads_or_default()) + ")");
  const auto& e = m.moe;
  if (e.experts < 0) fail("model.experts", "expected an integer >= 0; got " + str(e.experts));
  if (e.enabled()) {
    if (e.top_k < 1 || e.top_k > e.experts)
      fail("model.top_k", "expected 1 <= top_k <= experts (" + str(e.experts) + "); got " + str(e.top_k));
    if (!(e.capacity_factor >= 1.0))
      fail("model.capacity_factor", "expected a capacity factor >= 1 (1: balanced routing)");
    if (e.shared_experts < 0) fail("model.shared_experts", "expected an integer >= 0");
    if (e.expert_ffn_hidden < 0) fail("model.expert_ffn_hidden", "expected an integer >= 1");
    if (e.dense_layers < 0 || e.dense_layers >= m.layers)
      fail("model.dense_layers", "expected 0 <= dense_layers < layers (" + str(m.layers) + ")");
  }
}

void validate(const TrainingWorkload& w, const ClusterShape& cluster) {
  validate_model(w.model);
  validate_sizes(w.parallel);
  order_dimensions(w.parallel.order);
  validate_cluster(w.parallel, cluster);
  validate_model_split(w);
  validate_pipeline(w);
  validate_batch(w);
}

int global_batch(const TrainingWorkload& w) {
  return w.batch.global > 0 ? w.batch.global : w.batch.micro * w.parallel.dp;
}

int dense_zero_shards(const ParallelPlan& p) { return p.dp * p.cp / p.zero_replicas; }

int expert_zero_shards(const ParallelPlan& p) { return p.dp / p.ep * p.cp / p.zero_replicas; }

int micro_batches(const TrainingWorkload& w) { return global_batch(w) / (w.batch.micro * w.parallel.dp); }

int model_chunks(const ParallelPlan& p) { return p.pp * p.virtual_stages; }

double gradient_bucket_params(const ParallelPlan& p, double requested) {
  return requested > 0 ? requested : std::max(40e6, 1e6 * p.dp * p.cp);
}

std::vector<int> chunk_layers(const TrainingWorkload& w) {
  if (!w.parallel.layer_split.empty()) return w.parallel.layer_split;
  const int chunks = model_chunks(w.parallel);
  return std::vector<int>(static_cast<std::size_t>(chunks), w.model.layers / chunks);
}

std::vector<std::string> order_dimensions(std::string_view order) {
  static constexpr std::string_view kNames[] = {"tp", "cp", "ep", "dp", "pp"};
  std::vector<std::string> dims;
  std::size_t start = 0;
  while (start <= order.size()) {
    const std::size_t dash = std::min(order.find('-', start), order.size());
    dims.emplace_back(order.substr(start, dash - start));
    start = dash + 1;
  }
  auto is_permutation = [&] {
    if (dims.size() != 5) return false;
    for (auto name : kNames)
      if (std::count(dims.begin(), dims.end(), name) != 1) return false;
    return true;
  };
  if (!is_permutation())
    fail("parallel.order", "expected the five dimensions tp, cp, ep, dp, pp joined by '-', each once; got \"" +
                               std::string(order) + "\"",
         "the default is \"tp-cp-ep-dp-pp\"");
  const auto ep = std::find(dims.begin(), dims.end(), "ep") - dims.begin();
  const auto dp = std::find(dims.begin(), dims.end(), "dp") - dims.begin();
  if (std::abs(ep - dp) != 1)
    fail("parallel.order", "\"ep\" and \"dp\" must be adjacent: expert parallelism splits data parallelism",
         "e.g. \"tp-cp-ep-dp-pp\"");
  return dims;
}

}  // namespace cs::work
