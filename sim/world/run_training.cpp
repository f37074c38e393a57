#include "sim/world/run_training.hpp"

#include <algorithm>

#include "sim/compute/training_trace.hpp"
#include "sim/network/background_load.hpp"
#include "sim/scenario/training_gpu.hpp"
#include "sim/world/run_collective.hpp"
#include "workloads/training_placement.hpp"

namespace cs::world::detail {

using namespace cs::scenario;

using nlohmann::json;

net::Placement training_placement(const work::TrainingWorkload& w, int gpus) {
  return net::Placement(work::RankLayout(w.parallel).gpu_of_rank(), gpus);
}

namespace {

compute::NodeShape node_shape(const Config& config) {
  const auto& node = config.topology.node;
  return {node.gpus, node.fabric == topo::NodeFabric::nvswitch ||
                         (node.fabric == topo::NodeFabric::pcie && node.pcie_switches == 0)};
}

}  // namespace

ReplicaChoice choose_replicas(const Config& config, const work::TrainingWorkload& w) {
  ReplicaChoice c;
  c.verdict = compute::one_replica_exact(w, work::RankLayout(w.parallel).gpu_of_rank(), node_shape(config));
  switch (config.training.replicas) {
    case ReplicaMode::automatic: c.one_replica = c.verdict.exact; break;
    case ReplicaMode::one: c.one_replica = true; break;
    case ReplicaMode::all: c.one_replica = false; break;
  }
  return c;
}

compute::TrainingResult simulate_step(const Config& config, const work::TrainingWorkload& w, const ReplicaChoice& replicas,
                                      engine::Simulator& sim, net::Comm& comm, bool keep_timeline) {
  compute::TrainingStepOptions options = config.training.step;
  options.graph.one_replica = replicas.one_replica;
  options.graph.mirror_replica_traffic = true;
  options.keep_timeline = keep_timeline;
  if (replicas.one_replica) {
    options.gpu_of_rank = work::RankLayout(w.parallel).gpu_of_rank();
    options.node = node_shape(config);
  }
  const compute::GpuSpec gpu = scenario::detail::gpu_spec(config.gpu);
  try {
    return compute::simulate_training_step(sim, comm, w, gpu, options);
  } catch (const net::CommError& e) {
    throw input_error(e, "workload");
  }
}

namespace {

json exposed_json(const compute::ExposedComm& e) {
  using work::Stream;
  return {{"tp", e[Stream::tp]}, {"cp", e[Stream::cp]},  {"ep", e[Stream::ep]},
          {"pp", e[Stream::pp]}, {"dp", e[Stream::dp]}, {"offload", e[Stream::host]}};
}

json memory_json(const Config& config, const work::MemoryReport& m) {
  json stages = json::array();
  for (std::size_t s = 0; s < m.per_stage.size(); ++s) {
    const auto& b = m.per_stage[s];
    stages.push_back({{"stage", s},
                      {"total_bytes", b.total()},
                      {"parameters_bytes", b.parameters},
                      {"gradients_bytes", b.gradients},
                      {"optimizer_bytes", b.optimizer},
                      {"activations_bytes", b.activations},
                      {"zero_buffers_bytes", b.zero_buffers},
                      {"logits_bytes", b.logits},
                      {"recompute_bytes", b.recompute},
                      {"overhead_bytes", b.overhead},
                      {"in_flight_micro_batches", b.in_flight},
                      {"host_bytes", b.host}});
  }
  const double host_node = m.max_host_bytes * config.topology.node.gpus;
  json out = {{"per_gpu_bytes", m.max_bytes},
              {"capacity_bytes", m.capacity_bytes},
              {"headroom", config.training.step.memory.headroom},
              {"usable_bytes", m.usable_bytes},
              {"gpu_fits", m.fits},
              {"worst_stage", m.worst_stage},
              {"host_per_gpu_bytes", m.max_host_bytes},
              {"host_per_node_bytes", host_node}};
  if (config.host.memory_bytes > 0) {
    out["host_capacity_bytes"] = config.host.memory_bytes;
    out["host_fits"] = host_node <= config.host.memory_bytes;
  }
  out["per_stage"] = std::move(stages);
  return out;
}

}  // namespace

json plan_keys(const work::TrainingWorkload& w) {
  const auto& p = w.parallel;
  json keys = {{"tp", p.tp},
          {"pp", p.pp},
          {"dp", p.dp},
          {"cp", p.cp},
          {"ep", p.ep},
          {"zero", p.zero},
          {"sequence_parallel", p.sequence_parallel},
          {"schedule", std::string(work::to_string(p.schedule))},
          {"virtual_stages", p.virtual_stages},
          {"micro_batch", w.batch.micro},
          {"micro_batches", work::micro_batches(w)},
          {"recompute", std::string(work::to_string(w.recompute))}};
  if (p.zero_replicas > 1) keys["zero_replicas"] = p.zero_replicas;  // hybrid sharding (left out when off)
  return keys;
}

json step_numbers(const compute::TrainingResult& r) {
  return {{"step_time_s", r.step_time_s},
          {"tokens_per_s", r.tokens_per_s},
          {"tflops_per_gpu", r.tflops_per_gpu},
          {"model_tflops_per_gpu", r.model_tflops_per_gpu},
          {"mfu", r.mfu},
          {"bubble_fraction", r.bubble_fraction},
          {"compute_s", r.compute_s},
          {"exposed_comm_s", r.exposed_comm_s},
          {"memory_per_gpu_bytes", r.memory_per_gpu_bytes}};
}

json training_block(const Config& config, const work::TrainingWorkload& w, const ReplicaChoice& replicas,
                    const compute::TrainingResult& r) {
  const json memory = memory_json(config, r.memory);
  const bool fits = r.fits && memory.value("host_fits", true);
  json ops = json::array();
  for (const auto& op : r.ops) ops.push_back({{"phase", op.phase}, {"op", op.name}, {"seconds", op.seconds}});
  const work::ParamCounts params = work::parameter_counts(w.model);
  json block = step_numbers(r);
  block["fits"] = fits;
  block["breakdown"] = {{"compute_s", r.compute_s},
                        {"optimizer_s", r.optimizer_s},
                        {"exposed_comm_s", exposed_json(r.exposed_by_group)},
                        {"bubble_s", r.bubble_s},
                        {"slowdown_s", r.slowdown_s}};
  block["memory"] = memory;
  json plan = plan_keys(w);
  plan.update({{"gpus", int64_t{config.topology.nodes} * config.topology.node.gpus},
               {"order", w.parallel.order},
               {"offload", std::string(work::to_string(w.parallel.offload))},
               {"global_batch", work::global_batch(w)},
               {"precision", std::string(work::to_string(w.precision))}});
  block["plan"] = std::move(plan);
  block["model"] = {{"name", w.model.name},
                    {"parameters", params.total},
                    {"active_matmul_parameters", params.active_matmul},
                    {"source", w.model.source}};
  block["flops"] = {{"tokens_per_step", r.flops.tokens},
                    {"model_per_step", r.flops.model},
                    {"executed_per_step", r.flops.executed},
                    {"peak_per_gpu", r.peak_flops}};
  const int replicas_total = work::RankLayout(w.parallel).size(work::Dim::edp);
  block["simulation"] = {{"replicas", replicas_total},
                         {"replicas_simulated", replicas.one_replica ? 1 : replicas_total},
                         {"one_replica", replicas.one_replica},
                         {"one_replica_exact", replicas.verdict.exact},
                         {"reason", replicas.verdict.reason},
                         {"tasks", r.tasks},
                         {"workers", r.workers.size()}};
  block["ops"] = std::move(ops);
  return block;
}

json run_training(const Config& config, engine::Simulator& sim, net::Comm& comm) {
  const work::TrainingWorkload& w = config.training.workload;
  net::BackgroundLoad background(comm, sim);
  add_background(config, comm, background);
  background.start();
  const ReplicaChoice replicas = choose_replicas(config, w);
  auto& recorder = sim.recorder();
  const compute::TrainingResult r = simulate_step(config, w, replicas, sim, comm, recorder.trace_enabled());
  background.stop();
  json block = training_block(config, w, replicas, r);
  if (r.graph) {
    compute::TraceOptions o;
    o.gpus_per_node = config.topology.node.gpus;
    const bool per_gpu =
        compute::record_trace(*r.graph, r.timings, recorder, work::RankLayout(w.parallel).gpu_of_rank(), o);
    block["simulation"]["trace_tracks"] = per_gpu ? "per_gpu" : "per_worker";
  }
  if (!config.background.empty()) block["background"] = background_summary(background);
  return block;
}

}  // namespace cs::world::detail
