// workload.* for kind "training": the model, the parallel plan, the batch, precision and
// recomputation (docs/scenarios.md), and how the step is simulated. The plan is checked by the
// workload's own rules (work::validate), whose keyed errors become errors at workload.<key>.
#include <algorithm>
#include <map>

#include "sim/compute/gpu_catalog.hpp"
#include "sim/compute/training_host.hpp"
#include "sim/scenario/parse_model.hpp"
#include "sim/scenario/parse_sections.hpp"
#include "sim/scenario/parse_util.hpp"
#include "sim/scenario/quantity_range.hpp"
#include "sim/scenario/suggest.hpp"
#include "sim/scenario/training_gpu.hpp"
#include "workloads/training_flops.hpp"
#include "workloads/training_model.hpp"
#include "workloads/training_ops.hpp"

namespace cs::scenario::detail {
namespace {

constexpr int kMaxDegree = 1 << 20;

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& p : work::model_presets()) names.push_back(p.name);
  return names;
}

std::vector<std::string> fp8_gpu_names() {
  std::vector<std::string> names;
  for (const auto& g : compute::gpu_catalog())
    if (g.dense_flops.fp8 > 0) names.emplace_back(g.name);
  return names;
}

int get_count(const json& obj, std::string_view key, const std::string& at, int def, int min = 1) {
  return static_cast<int>(get_int(obj, key, at, def, min, kMaxDegree));
}

std::vector<int> parse_layer_split(const json& parallel, const std::string& at) {
  std::vector<int> split;
  const json* list = member(parallel, "layer_split");
  if (!list) return split;
  const std::string path = join_path(at, "layer_split");
  if (!list->is_array() || list->empty())
    throw InputError(path, "expected a list of layers per model chunk, in pipeline order");
  for (std::size_t i = 0; i < list->size(); ++i)
    split.push_back(static_cast<int>(int_value((*list)[i], join_path(path, i), 1, kMaxDegree)));
  return split;
}

// tp_comm_overlap's default is the chip's (compute::GpuSpec::overlaps_tp_comm): off where its
// training stack cannot overlap tensor-parallel collectives (AWS Neuron).
void parse_parallel(const json& w, const std::string& workload_at, int64_t gpus, const compute::GpuSpec& gpu,
                    TrainingConfig& t) {
  const std::string at = join_path(workload_at, "parallel");
  const json& p = object_or_empty(w, "parallel", workload_at);
  work::ParallelPlan& plan = t.workload.parallel;
  plan.tp = get_count(p, "tp", at, 1);
  plan.pp = get_count(p, "pp", at, 1);
  plan.cp = get_count(p, "cp", at, 1);
  plan.ep = get_count(p, "ep", at, 1);
  // dp defaults to the GPUs the other dimensions leave (when they divide the GPU count; the
  // plan's rules name parallel.dp otherwise).
  const int64_t others = int64_t{plan.tp} * plan.pp * plan.cp;
  const int rest = gpus % others == 0 ? static_cast<int>(gpus / others) : 1;
  plan.dp = get_count(p, "dp", at, rest);
  plan.zero = static_cast<int>(get_int(p, "zero", at, 0, 0, 3));
  plan.zero_replicas = get_count(p, "zero_replicas", at, 1);
  plan.sequence_parallel = get_bool(p, "sequence_parallel", at, false);
  plan.schedule = get_choice(p, "schedule", at, work::kScheduleNames, work::Schedule::one_f_one_b);
  plan.virtual_stages = get_count(p, "virtual_stages", at, plan.schedule == work::Schedule::interleaved ? 2 : 1);
  plan.order = get_string(p, "order", at, plan.order);
  plan.layer_split = parse_layer_split(p, at);
  plan.offload = get_choice(p, "offload", at, work::kOffloadNames, work::Offload::none);
  plan.tp_comm_overlap = get_bool(p, "tp_comm_overlap", at, plan.tp_comm_overlap && gpu.overlaps_tp_comm);
  plan.overlap_grad_reduce = get_bool(p, "overlap_grad_reduce", at, plan.overlap_grad_reduce);
  plan.overlap_p2p = get_bool(p, "overlap_p2p", at, plan.overlap_p2p);
  plan.overlap_tp_wgrad = get_bool(p, "overlap_tp_wgrad", at, plan.overlap_tp_wgrad);
  t.allow_tp_across_nodes = get_bool(p, "allow_tp_across_nodes", at, false);
}

// workload.measured: "<phase>/<op>" -> seconds. Keys must name an op the workload runs, and a
// positive time must not imply more FLOP/s than the GPU's dense peak (the MFU would exceed 1);
// 0 leaves the op out.
void parse_measured(const json& w, const std::string& workload_at, const work::TrainingWorkload& workload,
                    double peak_flops, compute::Efficiency& eff) {
  const json* measured = member(w, "measured");
  if (!measured) return;
  const std::string at = join_path(workload_at, "measured");
  std::map<std::string, double> known;  // key -> the most FLOPs an op of that key performs
  auto add_ops = [&](work::Block b) {
    for (work::Phase ph : {work::Phase::forward, work::Phase::backward_input, work::Phase::backward_weight})
      for (const auto& op : work::block_ops(workload, b, ph)) {
        double& flops = known[std::string(compute::to_string(op.phase)) + "/" + std::string(op.name)];
        flops = std::max(flops, op.work_flops);
      }
  };
  add_ops(work::Block::embedding);
  add_ops(work::Block::head);
  for (int layer : {0, workload.model.moe.dense_layers})
    if (layer < workload.model.layers)
      for (work::Block b : work::layer_blocks(workload.model, layer)) add_ops(b);
  known["optimizer/adam"] = 0;
  known[std::string(compute::kHostOptimizerKey)] = 0;
  std::vector<std::string> names;
  for (const auto& [name, flops] : known) names.push_back(name);
  for (auto it = measured->begin(); it != measured->end(); ++it) {
    const std::string path = join_path(at, it.key());
    const auto op = known.find(it.key());
    if (op == known.end())
      throw InputError(path, "no op \"" + it.key() + "\" in this workload; expected \"<phase>/<op>\" such as \"forward/qkv\"",
                       did_you_mean(it.key(), names));
    const double seconds = quantity_value(it.value(), QuantityKind::time, Sign::non_negative, path);
    // 0 leaves the op out (a what-if); a positive time faster than the peak is a mistake.
    if (op->second > 0 && seconds > 0 && !(op->second <= seconds * peak_flops))
      throw InputError(path,
                       "at least " + format_quantity(op->second / peak_flops, QuantityKind::time) +
                           " (the op's FLOPs at the GPU's dense peak); got " + format_quantity(seconds, QuantityKind::time),
                       "give the op's measured time per micro-batch on one GPU, in seconds");
    eff.measured_s[it.key()] = seconds;
  }
}

void parse_efficiency(const json& w, const std::string& workload_at, compute::Efficiency& eff) {
  const std::string at = join_path(workload_at, "efficiency");
  const json& e = object_or_empty(w, "efficiency", workload_at);
  // Shares of a peak from 0.001 (no kernel is a thousand times slower than its roofline; below
  // that a 1e-300 share schedules ops at infinity) to 1. 0 stands for "the default" in
  // Efficiency, so an explicit 0 is refused as any share below the floor.
  eff.gemm = get_number(e, "gemm", at, 0, kMinEfficiency, 1);
  eff.gemm_shape_aware = get_bool(e, "gemm_shape_aware", at, true);
  eff.attention = get_number(e, "attention", at, 0, kMinEfficiency, 1);
  eff.memory = get_number(e, "memory", at, eff.memory, kMinEfficiency, 1);
  // The activation, loss and unfused attention-core kernels have measured shares of their own;
  // a `memory` given without them is the user's machine and replaces those too.
  const double class_default = e.contains("memory") ? eff.memory : 0;
  eff.activation_memory = get_number(e, "activation_memory", at, class_default, kMinEfficiency, 1);
  eff.loss_memory = get_number(e, "loss_memory", at, class_default, kMinEfficiency, 1);
  eff.attention_memory = get_number(e, "attention_memory", at, class_default, kMinEfficiency, 1);
  eff.kernel_overhead_s =
      get_quantity(e, "kernel_overhead", at, QuantityKind::time, Sign::non_negative, eff.kernel_overhead_s);
  // A kernel's launch gap is microseconds (CUDA's launch latency; 1 us by default); even a
  // framework dispatching every op from Python spends well under a millisecond. 10 ms per op
  // would make a step of thousands of kernels minutes long: a unit mistake.
  constexpr double kMaxKernelOverhead_s = 10e-3;
  if (eff.kernel_overhead_s > kMaxKernelOverhead_s)
    throw InputError(join_path(at, "kernel_overhead"),
                     "expected at most 10 ms per kernel; got " + format_quantity(eff.kernel_overhead_s, QuantityKind::time),
                     "a kernel's launch gap is microseconds, e.g. \"2us\"");
}

void parse_simulation(const json& w, const std::string& at, TrainingConfig& t) {
  auto& o = t.step;
  o.executor.comm_compute_share = get_number(w, "comm_compute_share", at, compute::kMeasuredCommComputeShare, 0, 0.99);
  o.graph.gradient_bytes = get_number(w, "gradient_bytes", at, 2, 1, 8);
  o.graph.optimizer = get_choice(w, "optimizer", at, work::kOptimizerNames, work::OptimizerKind::megatron);
  o.memory.gradient_bytes = o.graph.gradient_bytes;
  t.step.efficiency.gradient_bytes = o.graph.gradient_bytes;  // what weight-gradient GEMMs accumulate into
  o.graph.bucket_params = get_number(w, "bucket_size", at, 0, 1, 1e15);
  o.graph.overlap_param_gather = get_bool(w, "overlap_param_gather", at, o.graph.overlap_param_gather);
  o.graph.grad_norm_sync = get_bool(w, "grad_norm_sync", at, true);
  o.memory.bucket_params = o.graph.bucket_params;
  o.memory.framework_overhead_bytes =
      get_quantity(w, "framework_overhead", at, QuantityKind::bytes, Sign::non_negative, 2e9);
  o.memory.headroom = get_number(w, "memory_headroom", at, o.memory.headroom, 0, 0.5);
  o.memory.flash_attention = t.workload.flash_attention;  // what is stored, as it is timed
  t.replicas = ReplicaMode::automatic;
  if (const json* r = member(w, "one_replica")) {
    const std::string path = join_path(at, "one_replica");
    if (r->is_boolean()) t.replicas = r->get<bool>() ? ReplicaMode::one : ReplicaMode::all;
    else if (!(r->is_string() && r->get<std::string>() == "auto"))
      throw InputError(path, "expected \"auto\", true or false; got " + describe_value(*r));
  }
}

}  // namespace

void parse_training(const json& w, const std::string& at, Config& config) {
  config.training = parse_training_config(w, at, config, total_gpus(config));
}

TrainingConfig parse_training_config(const json& w, const std::string& at, const Config& config, int64_t gpus) {
  TrainingConfig t;
  const json* model = member(w, "model");
  if (!model)
    throw InputError(join_path(at, "model"), "required: a preset (" + quoted_list(preset_names()) + ") or the model's shape");
  t.workload.model = parse_transformer(*model, join_path(at, "model"));
  const compute::GpuSpec gpu = gpu_spec(config.gpu);
  parse_parallel(w, at, gpus, gpu, t);
  // One chip per node (a tpu_slice): there is no node to keep tensor parallelism inside; the
  // chips' ICI torus is the fabric it runs on.
  if (config.topology.node.gpus == 1 && config.topology.kind == topo::TopologyKind::torus &&
      !member(object_or_empty(w, "parallel", at), "allow_tp_across_nodes"))
    t.allow_tp_across_nodes = true;
  const json& batch = object_or_empty(w, "batch", at);
  const std::string batch_at = join_path(at, "batch");
  t.workload.batch.micro = get_count(batch, "micro", batch_at, 1);
  t.workload.batch.global = get_count(batch, "global", batch_at, 0, 0);
  t.workload.precision = get_choice(w, "precision", at, choices_of(work::kPrecisionNames, work::kPlannedPrecisionNames),
                                    work::Precision::bf16);
  t.workload.recompute = get_choice(w, "recompute", at, work::kRecomputeNames, work::Recompute::none);
  try {
    work::validate(t.workload, {static_cast<int>(gpus), config.topology.node.gpus, t.allow_tp_across_nodes});
  } catch (const work::TrainingError& e) {
    throw InputError(join_path(at, e.key()), e.what(), e.hint());
  }
  // A GPU outside the catalog is described by its 16-bit peak only: fp8's kernel model needs an
  // fp8 peak and an fp8 GEMM ceiling, which such a description does not give.
  if (t.workload.precision == work::Precision::fp8 && !compute::find_gpu(config.gpu.name))
    throw InputError(join_path(at, "precision"),
                     "fp8 needs the GPU's fp8 peak and fp8 GEMM efficiency; the custom GPU \"" + config.gpu.name +
                         "\" (hardware.gpu) gives only peak_flops (16-bit)",
                     "use \"bf16\", or a catalog GPU with fp8 (" + quoted_list(fp8_gpu_names()) + ")");
  if (!(compute::dense_peak_flops(gpu.dense_flops, t.workload.precision) > 0)) {
    std::vector<std::string> has;  // the formats this GPU does have a peak for (a TPU: bf16 alone)
    for (const auto& p : work::kPrecisionNames)
      if (compute::dense_peak_flops(gpu.dense_flops, p.value) > 0) has.emplace_back(p.name);
    throw InputError(join_path(at, "precision"),
                     config.gpu.name + " has no tensor cores for " + std::string(work::to_string(t.workload.precision)),
                     "use one it has: " + quoted_list(has));
  }
  t.workload.flash_attention = get_bool(w, "flash_attention", at, true);
  t.workload.fp8_recipe = get_choice(w, "fp8_recipe", at, work::kFp8RecipeNames, work::Fp8Recipe::delayed);
  parse_efficiency(w, at, t.step.efficiency);
  parse_measured(w, at, t.workload, compute::dense_peak_flops(gpu.dense_flops, t.workload.precision),
                 t.step.efficiency);
  parse_simulation(w, at, t);
  t.step.host = host_spec(config);
  return t;
}

}  // namespace cs::scenario::detail
