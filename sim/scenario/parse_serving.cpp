// workload.kind "serving": arrivals, request, replica (a plain server, or an LLM server of
// workload.model on hardware.gpu), slo and disaggregated, into cs::serving::ServingConfig.
// Only parsing: the model is sim/fleet's (cs_serving).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/compute/gpu_catalog.hpp"
#include "sim/scenario/parse_fleet_sections.hpp"
#include "sim/scenario/parse_fleet_values.hpp"
#include "sim/scenario/parse_model.hpp"
#include "sim/scenario/parse_sections.hpp"
#include "sim/scenario/quantity_range.hpp"
#include "sim/scenario/suggest.hpp"
#include "workloads/arrivals.hpp"

namespace cs::scenario::detail {
namespace {

using work::ArrivalProcess;

void parse_request(const json& w, const std::string& at, bool plain, const work::ArrivalSpec& arrivals,
                   work::RequestSpec& r) {
  const std::string path = join_path(at, "request");
  const json& in = object_or_empty(w, "request", at);
  if (plain) {
    refuse_keys(in, path, {"prompt_tokens", "output_tokens", "max_prompt_tokens", "max_output_tokens", "shared_prefix"},
                "to an LLM server; this replica is a plain server (workload.replica.concurrency)");
    // A trace with a service_time column gives every request's time (each row must have it).
    if (!member(in, "service_time") && !trace_has_column(arrivals, "service_time"))
      throw InputError(join_path(path, "service_time"),
                       "required for a plain server: the time one request holds a slot (a time or a distribution)",
                       "e.g. {\"dist\": \"exponential\", \"mean\": \"100ms\"}");
    r.service_time = get_distribution(in, "service_time", path, r.service_time);
    return;
  }
  refuse_keys(in, path, {"service_time"}, "to a plain server (workload.replica.concurrency); an LLM server's time "
                                          "comes from its tokens");
  r.prompt_tokens = get_distribution(in, "prompt_tokens", path, r.prompt_tokens, std::nullopt);
  r.output_tokens = get_distribution(in, "output_tokens", path, r.output_tokens, std::nullopt);
  r.max_prompt_tokens = get_int(in, "max_prompt_tokens", path, r.max_prompt_tokens, 1, int64_t{1} << 30);
  r.max_output_tokens = get_int(in, "max_output_tokens", path, r.max_output_tokens, 1, int64_t{1} << 30);
  if (const json* sp = member(in, "shared_prefix")) {
    const std::string sp_path = join_path(path, "shared_prefix");
    if (!sp->is_object() || !member(*sp, "tokens"))
      throw InputError(sp_path, "expected {tokens, groups}: every prompt starts with one of `groups` shared prefixes of `tokens` tokens",
                       "e.g. {\"tokens\": 1000, \"groups\": 4}");
    r.shared_prefix_tokens = get_int(*sp, "tokens", sp_path, 0, 0, r.max_prompt_tokens);
    r.shared_prefix_groups = get_int(*sp, "groups", sp_path, 1, 1, int64_t{1} << 30);
  }
}

constexpr std::initializer_list<const char*> kLlmReplicaKeys = {
    "max_num_seqs", "max_num_batched_tokens", "block_size", "scheduler", "gpu_memory_utilization",
    "activation_reserve", "kv_cache", "compute_efficiency", "memory_efficiency", "paged_kv_efficiency", "iteration_overhead",
    "tp_allreduce_bandwidth", "kv_bytes_per_element", "measured", "prefix_caching", "pad_heads", "ranks_per_gpu",
    "kv_layout", "dense_slot_tokens", "step_padding", "flash_attention"};

// The GPU of an LLM replica: hardware.gpu at the workload's precision.
serving::GpuSpec gpu_at_precision(const Config& config, work::Precision precision, const std::string& at) {
  serving::GpuSpec gpu;
  gpu.peak_flops = config.gpu.peak_flops;  // the dense 16-bit peak (or the file's peak_flops)
  gpu.hbm_bandwidth_Bps = config.gpu.hbm_bandwidth_Bps;
  gpu.hbm_bytes = config.gpu.memory_bytes;
  if (precision == work::Precision::fp8) {
    const compute::GpuSpec* spec = compute::find_gpu(config.gpu.name);
    if (!spec || !(spec->dense_flops.fp8 > 0))
      throw InputError(join_path(at, "precision"), config.gpu.name + " has no FP8 peak in the GPU catalog",
                       "use \"bf16\", or a GPU with FP8 (H100-SXM, B200, MI300X, ...)");
    // The catalog's FP8 peak, scaled as the file scaled the 16-bit one (if it did).
    gpu.peak_flops = spec->dense_flops.fp8 * config.gpu.peak_flops / compute::half_precision_peak_flops(spec->dense_flops);
  }
  return gpu;
}

// What no GPU can run: tensor parallelism splits the attention heads (vLLM refuses a degree that
// does not divide them; AWS Neuron pads them up to a multiple of it, `pad_heads`), and the
// weights and a given KV cache must fit in the GPUs' memory.
void check_replica_fits(const serving::LlmTimingSpec& t, const std::string& path, int node_gpus, int heads) {
  // The degree the heads split over: gpus, or gpus x ranks_per_gpu ranks.
  const int degree = t.tp_ranks();
  const std::string got =
      std::to_string(degree) + (t.ranks_per_gpu > 1 ? " (" + std::to_string(t.gpus) + " GPUs x ranks_per_gpu " +
                                                          std::to_string(t.ranks_per_gpu) + ")"
                                                    : "");
  if (heads > 0 && heads % degree != 0 && !t.pad_heads) {
    std::string divisors;
    for (int g = 1; g <= node_gpus; ++g)
      if (heads % (g * t.ranks_per_gpu) == 0) divisors += (divisors.empty() ? "" : ", ") + std::to_string(g);
    throw InputError(join_path(path, "gpus"),
                     "a tensor-parallel degree dividing the model's " + std::to_string(heads) + " attention heads; got " + got,
                     (divisors.empty() ? std::string("no GPU count does") : "one of " + divisors) +
                         ", or pad_heads: true (AWS Neuron pads the heads to a multiple of it)");
  }
  // vLLM splits the KV heads over the degree, or replicates each over a whole number of GPUs.
  const int kv = t.model.kv_heads;
  if (heads > 0 && kv > 0 && kv % degree != 0 && degree % kv != 0 && !t.pad_heads)
    throw InputError(join_path(path, "gpus"),
                     "a tensor-parallel degree dividing the model's " + std::to_string(kv) +
                         " KV heads or a multiple of them; got " + got,
                     "as vLLM requires; or pad_heads: true (AWS Neuron replicates the KV heads)");
  const double memory = t.gpus * t.gpu.hbm_bytes, weights = t.held_model().weight_bytes();
  if (t.kv_cache_bytes > 0 && t.kv_cache_bytes + weights > memory)
    throw InputError(join_path(path, "kv_cache"),
                     "at most the GPUs' memory less the weights: " + format_quantity(memory, QuantityKind::bytes) + " on " +
                         std::to_string(t.gpus) + " GPU(s), " + format_quantity(weights, QuantityKind::bytes) +
                         " of weights; got " + format_quantity(t.kv_cache_bytes, QuantityKind::bytes),
                     "a smaller kv_cache, or more GPUs per replica");
}

// JetStream pads a prompt to the first of DEFAULT_PREFILL_BUCKETS (16, 32, ..., 32,768) that
// holds it, the list cut at the longest prefill (MaxText's max_prefill_predict_length, here
// max_num_batched_tokens); it finds the cut with list.index(), so a length that is not one of
// the buckets fails (jetstream/engine/token_utils.py, tokenize_and_pad at 530d364).
void check_jetstream_prefill_length(int64_t tokens, const std::string& path) {
  constexpr int64_t kFirst = 16, kLast = 32768;
  int64_t below = kFirst;
  while (below * 2 <= tokens && below < kLast) below *= 2;
  if (tokens == below) return;
  const int64_t above = std::min(below * 2, kLast);
  const int64_t nearest = tokens < kFirst || tokens - below <= above - tokens ? below : above;
  throw InputError(join_path(path, "max_num_batched_tokens"),
                   "with scheduler \"jetstream\", one of JetStream's prefill buckets (16, 32, ..., 32768): it pads each "
                   "prompt to a bucket and looks the longest prefill up among them; got " + std::to_string(tokens),
                   "the nearest bucket is " + std::to_string(nearest));
}

bool dense_kv_bytes_exceed(const serving::LlmReplicaSpec& spec) {
  return serving::kv_cache_bytes(spec.timing) > 0 && serving::dense_kv_bytes(spec) > serving::kv_cache_bytes(spec.timing);
}

// The keys of an LLM replica present in `r` (at `path`) over `spec` (defaults or the replica
// it overrides).
void parse_llm_replica(const json& r, const std::string& path, const Config& config, int heads,
                       serving::LlmReplicaSpec& spec) {
  serving::LlmTimingSpec& t = spec.timing;
  serving::BatchingSpec& b = spec.batching;
  const int node_gpus = config.topology.node.gpus;
  t.gpus = static_cast<int>(get_int(r, "gpus", path, t.gpus, 1, node_gpus));
  b.max_num_seqs = static_cast<int>(get_int(r, "max_num_seqs", path, b.max_num_seqs, 1, 1 << 20));
  b.max_num_batched_tokens = get_int(r, "max_num_batched_tokens", path, b.max_num_batched_tokens, 1, int64_t{1} << 30);
  b.block_size = static_cast<int>(get_int(r, "block_size", path, b.block_size, 1, 1 << 16));
  b.scheduler = get_choice(r, "scheduler", path, serving::kSchedulerModeNames, b.scheduler);
  t.kv_layout = get_choice(r, "kv_layout", path, serving::kKvLayoutNames, t.kv_layout);
  const bool dense = t.kv_layout == serving::KvLayout::dense_slots;
  t.dense_slot_tokens = get_int(r, "dense_slot_tokens", path, t.dense_slot_tokens, 1, int64_t{1} << 30);
  if (!dense && member(r, "dense_slot_tokens"))
    throw InputError(join_path(path, "dense_slot_tokens"), "only with kv_layout \"dense_slots\"",
                     "set " + join_path(path, "kv_layout") + " to \"dense_slots\", or remove it");
  // Dense slots share no block, a static batch encodes every prompt whole: prefix caching is
  // off unless asked for, and then refused.
  const bool static_batch = b.scheduler == serving::SchedulerMode::static_batch;
  b.prefix_caching = get_bool(r, "prefix_caching", path, dense || static_batch ? false : b.prefix_caching);
  if (dense && b.prefix_caching)
    throw InputError(join_path(path, "prefix_caching"), "false with kv_layout \"dense_slots\": dense slots hold no shared block",
                     "remove prefix_caching, or use kv_layout \"paged\"");
  if (static_batch && b.prefix_caching)
    throw InputError(join_path(path, "prefix_caching"),
                     "false with scheduler \"static_batch\": a batch's context pass encodes every prompt whole",
                     "remove prefix_caching, or use scheduler \"chunked_prefill\"");
  if (b.scheduler == serving::SchedulerMode::jetstream) check_jetstream_prefill_length(b.max_num_batched_tokens, path);
  b.step_padding = get_choice(r, "step_padding", path, serving::kStepPaddingNames, b.step_padding);
  if (b.step_padding != serving::StepPadding::none && b.scheduler == serving::SchedulerMode::jetstream)
    throw InputError(join_path(path, "step_padding"), "\"none\" with scheduler \"jetstream\": JetStream pads each prefill to its bucket itself",
                     "remove step_padding (it models vLLM for TPU), or use scheduler \"chunked_prefill\"");
  if (b.step_padding != serving::StepPadding::none && static_batch)
    throw InputError(join_path(path, "step_padding"),
                     "\"none\" with scheduler \"static_batch\": a static batch pads its prompts to the longest itself",
                     "remove step_padding (it models vLLM for TPU), or use scheduler \"chunked_prefill\"");
  if (b.scheduler == serving::SchedulerMode::chunked_prefill && b.max_num_batched_tokens < b.max_num_seqs)
    throw InputError(join_path(path, "max_num_batched_tokens"),
                     "expected at least max_num_seqs (" + std::to_string(b.max_num_seqs) +
                         ") with chunked prefill: every running sequence takes a token of the budget",
                     "as vLLM requires");
  t.gpu_memory_utilization = get_number(r, "gpu_memory_utilization", path, t.gpu_memory_utilization, 1e-6, 1.0);
  t.activation_reserve_bytes =
      get_quantity(r, "activation_reserve", path, QuantityKind::bytes, Sign::non_negative, t.activation_reserve_bytes);
  t.kv_cache_bytes = get_quantity(r, "kv_cache", path, QuantityKind::bytes, Sign::non_negative, t.kv_cache_bytes);
  t.gpu.compute_efficiency = get_number(r, "compute_efficiency", path, t.gpu.compute_efficiency, kMinEfficiency, 1.0);
  t.gpu.memory_efficiency = get_number(r, "memory_efficiency", path, t.gpu.memory_efficiency, kMinEfficiency, 1.0);
  t.gpu.paged_kv_efficiency =
      get_number(r, "paged_kv_efficiency", path, t.gpu.paged_kv_efficiency, kMinEfficiency, 1.0);
  t.iteration_overhead_s =
      get_quantity(r, "iteration_overhead", path, QuantityKind::time, Sign::non_negative, t.iteration_overhead_s);
  t.tp_allreduce_bandwidth_Bps = get_quantity(r, "tp_allreduce_bandwidth", path, QuantityKind::bandwidth,
                                              Sign::non_negative, t.tp_allreduce_bandwidth_Bps);
  t.model.kv_bytes_per_element = get_number(r, "kv_bytes_per_element", path, t.model.kv_bytes_per_element, 0.125, 8.0);
  if (const json* m = member(r, "measured")) {
    const std::string mp = join_path(path, "measured");
    if (!m->is_object()) throw InputError(mp, "expected {base, per_prefill_token, per_decode_sequence, per_context_token}");
    serving::MeasuredTiming& mt = t.measured;
    mt.enabled = true;
    mt.base_s = get_quantity(*m, "base", mp, QuantityKind::time, Sign::non_negative, 0.0);
    mt.per_prefill_token_s = get_quantity(*m, "per_prefill_token", mp, QuantityKind::time, Sign::non_negative, 0.0);
    mt.per_decode_sequence_s = get_quantity(*m, "per_decode_sequence", mp, QuantityKind::time, Sign::non_negative, 0.0);
    mt.per_context_token_s = get_quantity(*m, "per_context_token", mp, QuantityKind::time, Sign::non_negative, 0.0);
    if (!(mt.base_s + mt.per_prefill_token_s + mt.per_decode_sequence_s > 0))
      throw InputError(mp, "an iteration must take time: give base, per_prefill_token or per_decode_sequence > 0");
  }
  t.pad_heads = get_bool(r, "pad_heads", path, t.pad_heads);
  t.flash_attention = get_bool(r, "flash_attention", path, t.flash_attention);
  t.ranks_per_gpu = static_cast<int>(get_int(r, "ranks_per_gpu", path, t.ranks_per_gpu, 1, 64));
  check_replica_fits(spec.timing, path, node_gpus, heads);
  if (dense && dense_kv_bytes_exceed(spec))
    throw InputError(join_path(path, "max_num_seqs"),
                     "dense slots that fit the KV cache: " + std::to_string(b.max_num_seqs) + " slots of " +
                         std::to_string(t.dense_slot_tokens) + " tokens take " +
                         format_quantity(serving::dense_kv_bytes(spec), QuantityKind::bytes) + ", the replica's KV cache is " +
                         format_quantity(serving::kv_cache_bytes(t), QuantityKind::bytes),
                     "fewer slots (max_num_seqs), shorter ones (dense_slot_tokens), or more GPUs per replica");
  try {
    serving::validate_llm_replica(spec);
  } catch (const std::invalid_argument& e) {
    // The library names the replica's field; every value was checked above but whether the
    // model leaves room for a KV cache.
    throw InputError(join_path(path, "gpus"), e.what(), "more GPUs per replica (tensor parallelism), a smaller model "
                                                        "or precision, or a lower activation_reserve");
  }
}

// The model a replica serves, as the LLM timing's numbers.
serving::LlmModelSpec llm_model(const work::TransformerSpec& m, work::Precision precision) {
  const work::ParamCounts counts = work::parameter_counts(m);
  serving::LlmModelSpec model;
  model.params = counts.total;
  model.active_params = counts.active_matmul;
  model.bytes_per_param = precision == work::Precision::fp8 ? 1.0 : 2.0;
  model.layers = m.layers;
  model.hidden = m.hidden;
  model.heads = m.heads;
  model.kv_heads = m.kv_heads_or_default();
  model.head_dim = m.head_dim();
  model.vocab = m.vocab;
  return model;
}

// Returns the model's attention heads (0 for a plain server).
int parse_replica(const json& w, const std::string& at, Config& config) {
  serving::ReplicaConfig& rc = config.serving.replica;
  const std::string path = join_path(at, "replica");
  const json& r = object_or_empty(w, "replica", at);
  if (member(r, "concurrency")) {
    rc.kind = serving::ReplicaKind::server;
    refuse_keys(r, path, kLlmReplicaKeys, "to an LLM server; this replica is a plain server (concurrency)");
    refuse_keys(w, at, {"model", "precision", "disaggregated"},
                "to an LLM server; this replica is a plain server (workload.replica.concurrency)");
    rc.server.concurrency = static_cast<int>(get_int(r, "concurrency", path, 1, 1, 1 << 20));
    rc.server.gpus = static_cast<int>(get_int(r, "gpus", path, 1, 1, config.topology.node.gpus));
    return 0;
  }
  rc.kind = serving::ReplicaKind::llm;
  if (!member(w, "model"))
    throw InputError(join_path(at, "model"), "required for an LLM server: a preset such as \"llama3-8b\", or the model's shape",
                     "or give workload.replica.concurrency for a plain server with a service_time");
  // The table's names alone: serving refuses fp32 as an unknown name (training: as planned).
  const work::Precision precision = get_choice(w, "precision", at, work::kPrecisionNames, work::Precision::bf16);
  serving::LlmReplicaSpec& spec = rc.llm;
  const work::TransformerSpec model = parse_transformer(w.at("model"), join_path(at, "model"));
  spec.timing.model = llm_model(model, precision);
  // The catalog gives the GPU's peaks; the efficiencies stay the replica's.
  const serving::GpuSpec efficiencies = spec.timing.gpu;
  spec.timing.gpu = gpu_at_precision(config, precision, at);
  spec.timing.gpu.compute_efficiency = efficiencies.compute_efficiency;
  spec.timing.gpu.memory_efficiency = efficiencies.memory_efficiency;
  spec.timing.gpu.paged_kv_efficiency = efficiencies.paged_kv_efficiency;
  // An accelerator whose achieved HBM share was measured (TPUs) reads at that share; the share
  // was measured on a paged attention kernel, so the paged read takes no further one.
  if (const compute::GpuSpec* catalog = compute::find_gpu(config.gpu.name); catalog && catalog->hbm_efficiency > 0) {
    spec.timing.gpu.memory_efficiency = catalog->hbm_efficiency;
    spec.timing.gpu.paged_kv_efficiency = 1.0;
  }
  // Tensor parallelism stays in a node: sim/world times its all-reduces on the node's fabric.
  parse_llm_replica(r, path, config, model.heads, spec);
  return model.heads;
}

void parse_slo(const json& w, const std::string& at, serving::SloSpec& slo) {
  const std::string path = join_path(at, "slo");
  const json& in = object_or_empty(w, "slo", at);
  const double inf = std::numeric_limits<double>::infinity();
  slo.latency_s = get_quantity(in, "latency", path, QuantityKind::time, Sign::positive, inf);
  slo.percentile = get_number(in, "percentile", path, 99.0, 1e-9, 100.0) / 100.0;
  slo.ttft_s = get_quantity(in, "ttft", path, QuantityKind::time, Sign::positive, inf);
  slo.tpot_s = get_quantity(in, "tpot", path, QuantityKind::time, Sign::positive, inf);
}

void parse_disaggregated(const json& w, const std::string& at, int heads, Config& config) {
  serving::DisaggregationSpec& d = config.serving.disaggregated;
  const json* v = member(w, "disaggregated");
  if (!v) return;
  const std::string path = join_path(at, "disaggregated");
  if (!v->is_object()) throw InputError(path, "expected {prefill_replica, link}");
  if (config.serving.replica.llm.batching.scheduler == serving::SchedulerMode::static_batch)
    throw InputError(path, "no disaggregation with workload.replica.scheduler \"static_batch\": a static batch "
                     "prefills and decodes its requests on one replica",
                     "remove disaggregated, or use scheduler \"chunked_prefill\"");
  d.enabled = true;
  // The prefill replicas are the replica of workload.replica with these keys changed.
  d.prefill_replica = config.serving.replica.llm;
  const json& pr = object_or_empty(*v, "prefill_replica", path);
  parse_llm_replica(pr, join_path(path, "prefill_replica"), config, heads, d.prefill_replica);
  if (d.prefill_replica.batching.scheduler == serving::SchedulerMode::static_batch)
    throw InputError(join_path(join_path(path, "prefill_replica"), "scheduler"),
                     "not \"static_batch\": a static batch prefills and decodes its requests on one replica",
                     "\"chunked_prefill\", \"prefill_first\" or \"jetstream\"");
  const std::string lp = join_path(path, "link");
  const json& link = object_or_empty(*v, "link", path);
  d.link.bandwidth_Bps = get_quantity(link, "bandwidth", lp, QuantityKind::bandwidth, Sign::positive, d.link.bandwidth_Bps);
  d.link.latency_s = get_quantity(link, "latency", lp, QuantityKind::time, Sign::non_negative, d.link.latency_s);
}

}  // namespace

void parse_serving_workload(const json& w, const std::string& at, Config& config) {
  refuse_keys(w, at, {"background"}, "to traffic and collective workloads, beside them on the fabric");
  config.serving = serving::ServingConfig{};
  if (!member(w, "arrivals"))
    throw InputError(join_path(at, "arrivals"), "required for a serving workload: {\"process\", \"rate\", ...}",
                     "e.g. {\"process\": \"poisson\", \"rate\": \"100/s\"}");
  config.serving.arrivals = parse_arrivals(object_or_empty(w, "arrivals", at), join_path(at, "arrivals"));
  const int heads = parse_replica(w, at, config);
  const bool plain = config.serving.replica.kind == serving::ReplicaKind::server;
  parse_request(w, at, plain, config.serving.arrivals, config.serving.request);
  parse_slo(w, at, config.serving.slo);
  if (plain) refuse_keys(object_or_empty(w, "slo", at), join_path(at, "slo"), {"ttft", "tpot"}, "to LLM servers");
  parse_disaggregated(w, at, heads, config);
}

}  // namespace cs::scenario::detail
