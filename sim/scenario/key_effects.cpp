#include "sim/scenario/key_effects.hpp"

#include <string>
#include <vector>

#include "sim/scenario/input_error.hpp"
#include "sim/scenario/parse_util.hpp"

namespace cs::scenario::detail {
namespace {

using nlohmann::json;
using topo::TopologyKind;

// The topology keys only some families read (parse_topology*.cpp); the rest apply to all.
struct FamilyKey {
  const char* key;
  std::vector<TopologyKind> families;
};

const std::vector<FamilyKey>& family_keys() {
  static const std::vector<FamilyKey> keys = {
      {"tiers", {TopologyKind::fat_tree}},
      {"oversubscription", {TopologyKind::fat_tree}},
      {"switch_radix", {TopologyKind::fat_tree, TopologyKind::dragonfly, TopologyKind::torus}},
      {"rail_optimized", {TopologyKind::fat_tree, TopologyKind::dragonfly}},
      {"parallel_links", {TopologyKind::fat_tree, TopologyKind::dragonfly, TopologyKind::torus}},
      {"groups", {TopologyKind::dragonfly}},
      {"routers_per_group", {TopologyKind::dragonfly}},
      {"nodes_per_router", {TopologyKind::dragonfly}},
      {"global_links_per_router", {TopologyKind::dragonfly}},
      {"global_bandwidth", {TopologyKind::dragonfly}},
      {"global_latency", {TopologyKind::dragonfly}},
      {"global_arrangement", {TopologyKind::dragonfly}},
      {"dims", {TopologyKind::torus}},
      {"switches", {TopologyKind::custom}},
      {"links", {TopologyKind::custom}},
  };
  return keys;
}

const json* object_at(const json& doc, const char* a, const char* b = nullptr) {
  if (!doc.is_object() || !doc.contains(a) || !doc[a].is_object()) return nullptr;
  if (!b) return &doc[a];
  const json& x = doc[a];
  return x.contains(b) && x[b].is_object() ? &x[b] : nullptr;
}

// The overlap keys of a plan's `parallel` object (at `at`) that the plan leaves nothing to do.
void warn_inert_overlaps(const json& p, const std::string& at, const work::ParallelPlan& plan,
                         std::vector<std::string>& warnings) {
  const struct {
    const char* key;
    bool absent;
    const char* why;
  } overlaps[] = {
      {"tp_comm_overlap", plan.tp == 1, "tp 1: no tensor-parallel communication"},
      {"overlap_p2p", plan.pp == 1, "pp 1: no pipeline sends"},
      {"overlap_tp_wgrad", plan.tp == 1, "tp 1: no tensor-parallel communication"},
      {"overlap_grad_reduce", plan.dp * plan.cp == 1, "dp and cp 1: no gradient reduction"},
  };
  for (const auto& o : overlaps)
    if (o.absent && p.contains(o.key))
      warnings.push_back("warning: " + at + "." + o.key + ": has no effect with parallel." + o.why + " (ignored)");
  // Userbuffers pipelines the backward's collectives with the input gradient's own chunks;
  // zb_h1 defers the weight gradients to a pass of their own, so no collective can wait for one.
  if (p.contains("overlap_tp_wgrad") && plan.tp > 1) {
    if (plan.sequence_parallel && plan.tp_comm_overlap)
      warnings.push_back("warning: " + at +
                         ".overlap_tp_wgrad: has no effect with parallel.tp_comm_overlap: the backward's "
                         "tensor-parallel collectives are pipelined with the input gradient's chunks (ignored)");
    else if (plan.schedule == work::Schedule::zb_h1)
      warnings.push_back("warning: " + at +
                         ".overlap_tp_wgrad: has no effect with parallel.schedule \"zb_h1\": the weight gradients "
                         "run in a pass of their own, after the input gradients' collectives (ignored)");
  }
}

}  // namespace

void check_key_effects(const json& doc, Config& config) {
  if (const json* w = object_at(doc, "workload"); w && w->contains("background") && config.workload == WorkloadKind::traffic)
    throw InputError("workload.background",
                     "a background runs beside a collective; on a traffic workload it would not run",
                     "add its flows to the traffic (workload.flows), or make the main workload a collective");
  if (const json* node = object_at(doc, "hardware", "node"); node && config.topology.node.fabric == topo::NodeFabric::pcie)
    for (const char* key : {"gpu_bandwidth", "gpu_latency"})
      if (node->contains(key))
        config.warnings.push_back(std::string("warning: hardware.node.") + key +
                                  ": has no effect on a PCIe node (no NVLink: GPUs reach each other over "
                                  "pcie_bandwidth and pcie_latency; ignored)");
  // A training plan's overlaps of a parallelism the plan does not have (tp, pp or dp of 1):
  // left behind by design when a file is swept over the plan. Wherever a plan is given: a
  // training step's, a training run's simulated step, a job class's.
  if (const json* p = object_at(doc, "workload", "parallel"); p && config.workload == WorkloadKind::training)
    warn_inert_overlaps(*p, "workload.parallel", config.training.workload.parallel, config.warnings);
  if (const json* t = object_at(doc, "workload", "training");
      t && config.workload == WorkloadKind::training_run && config.training_run_simulates_step)
    if (const json* p = object_at(*t, "parallel"))
      warn_inert_overlaps(*p, "workload.training.parallel", config.training.workload.parallel, config.warnings);
  if (const json* w = object_at(doc, "workload"); w && w->contains("classes") && (*w)["classes"].is_array())
    for (std::size_t i = 0; i < config.job_class_training.size() && i < (*w)["classes"].size(); ++i)
      if (const auto& tc = config.job_class_training[i]; tc)
        if (const json* p = object_at((*w)["classes"][i], "training", "parallel"))
          warn_inert_overlaps(*p, join_path(join_path(join_path("workload.classes", i), "training"), "parallel"),
                              tc->workload.parallel, config.warnings);
  // The fp8 recipe of a run in 16 bits: left behind when a file is swept over precision.
  if (const json* w = object_at(doc, "workload");
      w && w->contains("fp8_recipe") && config.workload == WorkloadKind::training &&
      config.training.workload.precision != work::Precision::fp8)
    config.warnings.push_back("warning: workload.fp8_recipe: has no effect with precision \"" +
                              std::string(work::to_string(config.training.workload.precision)) +
                              "\": no fp8 casts (ignored)");
  // The GPU optimizer's kind under CPU offload: the host runs its own fused Adam
  // (work::host_optimizer_op), whatever the key names.
  if (const json* w = object_at(doc, "workload");
      w && w->contains("optimizer") && config.workload == WorkloadKind::training &&
      config.training.workload.parallel.offload != work::Offload::none)
    config.warnings.push_back("warning: workload.optimizer: has no effect with parallel.offload \"" +
                              std::string(work::to_string(config.training.workload.parallel.offload)) +
                              "\": the host runs its fused Adam (ignored)");
  // A static batch's context pass takes every prompt of the batch whole: no token budget.
  if (const json* r = object_at(doc, "workload", "replica");
      r && r->contains("max_num_batched_tokens") && config.workload == WorkloadKind::serving &&
      config.serving.replica.kind == serving::ReplicaKind::llm &&
      config.serving.replica.llm.batching.scheduler == serving::SchedulerMode::static_batch)
    config.warnings.push_back("warning: workload.replica.max_num_batched_tokens: has no effect with scheduler "
                              "\"static_batch\": a batch's context pass encodes its prompts whole (ignored)");
  if (const json* t = object_at(doc, "topology")) {
    const TopologyKind kind = config.topology.kind;
    for (const FamilyKey& fk : family_keys()) {
      if (!t->contains(fk.key)) continue;
      bool used = false;
      for (TopologyKind f : fk.families) used = used || f == kind;
      if (!used)
        config.warnings.push_back("warning: topology." + std::string(fk.key) + ": has no effect on a " +
                                  std::string(topo::to_string(kind)) + " topology (ignored)");
    }
    // A tpu_slice is built as a torus; its own keys mean nothing to the library's kinds.
    const bool slice = t->contains("kind") && (*t)["kind"] == "tpu_slice";
    for (const char* key : {"shape", "slices", "dcn_bandwidth", "dcn_latency"})
      if (t->contains(key) && !slice)
        config.warnings.push_back("warning: topology." + std::string(key) + ": has no effect on a " +
                                  std::string(topo::to_string(kind)) + " topology, only on a tpu_slice (ignored)");
    for (const char* key : {"dcn_bandwidth", "dcn_latency"})
      if (t->contains(key) && slice && config.topology.slices == 1)
        config.warnings.push_back("warning: topology." + std::string(key) +
                                  ": has no effect on one slice, only between slices (topology.slices > 1; ignored)");
  }
}

}  // namespace cs::scenario::detail
