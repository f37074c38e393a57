#pragma once
// Internal: parse_config() section by section. Each reads its part of the (schema-valid,
// number-normalized) document into `config`, applying defaults and cross-field rules;
// sections run in this order and may rely on the ones before.
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/scenario/config.hpp"

namespace cs::scenario::detail {

// The sections' JSON paths, as errors name them.
inline constexpr std::string_view kTopology = "topology";
inline constexpr std::string_view kWorkload = "workload";
inline constexpr std::string_view kFleet = "fleet";
// topology.kind of a TPU slice: a torus the scenario builds from the generation's slice shape
// (parse_tpu_slice.cpp), beside the topology library's own kinds (topo::kTopologyKindNames).
inline constexpr std::string_view kTpuSlice = "tpu_slice";

inline constexpr int64_t kMaxTotalGpus = int64_t{1} << 24;
inline constexpr int64_t kMaxAllToAllRanks = 4096;  // N^2 flows

void parse_hardware(const nlohmann::json& doc, Config& config);  // gpu, topology.node
void parse_topology(const nlohmann::json& doc, Config& config);  // after hardware
// parse_topology_direct.cpp: topology.nodes' default for a dragonfly (a*p*groups) or torus
// (product of dims), 1 otherwise; then their own keys, read into `p` after nodes and links.
int64_t direct_default_nodes(const nlohmann::json& topology, topo::TopologyKind kind);
void parse_dragonfly(const nlohmann::json& topology, topo::TopologyParams& p);
void parse_torus(const nlohmann::json& topology, topo::TopologyParams& p);
// topo::check_torus on `p`, its errors reported at topology.<param>.
void check_torus_params(const topo::TopologyParams& p);
// parse_tpu_slice.cpp: topology.kind "tpu_slice" (the kind is checked by the caller): the slice
// of hardware.gpu's TPU generation as the torus of its shape, one chip per node (the document:
// hardware.node keys it refuses).
void parse_tpu_slice(const nlohmann::json& doc, const nlohmann::json& topology, Config& config);
void parse_network(const nlohmann::json& doc, Config& config);   // after topology
void parse_workload(const nlohmann::json& doc, Config& config);  // after topology
// parse_training.cpp: workload.* of kind "training" (at: the workload's path).
void parse_training(const nlohmann::json& workload, const std::string& at, Config& config);
// The same keys for a job of `gpus` GPUs of the file's hardware (a jobs class's training).
TrainingConfig parse_training_config(const nlohmann::json& workload, const std::string& at, const Config& config,
                                     int64_t gpus);
void parse_run(const nlohmann::json& doc, Config& config);
// parse_fleet.cpp: a training_run's workload keys (step_time, steps) from parse_workload; the
// fleet section after run (it needs workload.kind and run.until).
void parse_training_run_workload(const nlohmann::json& workload, const std::string& at, Config& config);
// A training_run's work and expected events within bounds (InputError at the key otherwise):
// at parse time for a given step, before the run for a simulated one.
void check_training_run_budget(const Config& config);
void parse_fleet(const nlohmann::json& doc, Config& config);
// The fleet's nodes: market, prices, interruptions, failures, cold_start (parse_fleet.cpp).
void parse_fleet_nodes(const nlohmann::json& fleet, const Config& config, fleet::FleetConfig& c);
// parse_ownership.cpp: fleet.ownership (nullopt when absent; defaults from data/ownership.json,
// the GPU catalog and hardware.node), and a node fleet's commitments: fleet.ownership and
// fleet.reserved (a count of nodes), after parse_fleet_nodes.
std::optional<fleet::OwnershipConfig> parse_ownership(const nlohmann::json& fleet, const Config& config);
void parse_node_commitments(const nlohmann::json& fleet, const Config& config, fleet::FleetConfig& c);
// parse_checkpoint.cpp: fleet.checkpoint (its size or write_time required) and fleet.restore.
// model_bytes: the size of a checkpoint of the run's model (workload.training), used when the
// file gives neither size nor write_time.
void parse_checkpoint(const nlohmann::json& fleet, fleet::CheckpointConfig& checkpoint,
                      std::optional<double> model_bytes = std::nullopt);
void parse_restore(const nlohmann::json& fleet, fleet::RestoreConfig& restore);
// parse_arrivals.cpp: the workload.arrivals object at `path` (process poisson, diurnal with
// period, peak_to_mean and peak_at, bursty with burst_factor, burst_duration and
// burst_interval, or trace with a CSV file and time_scale; rate but for a trace).
work::ArrivalSpec parse_arrivals(const nlohmann::json& arrivals, const std::string& path);
// Whether the arrivals are a trace whose header names `column` (e.g. "service_time").
bool trace_has_column(const work::ArrivalSpec& arrivals, const char* column);
// Keys of `obj` that have no effect where they stand are errors ("applies only " + why).
void refuse_keys(const nlohmann::json& obj, const std::string& at, std::initializer_list<const char*> keys,
                 const std::string& why);
// parse_jobs.cpp: a jobs workload (classes or trace, arrivals) with its fleet and
// fleet.scheduler, after run (the whole document: queues are named in the fleet section).
void parse_jobs(const nlohmann::json& doc, Config& config);

inline int64_t total_gpus(const Config& c) {
  return int64_t{c.topology.nodes} * c.topology.node.gpus;
}

}  // namespace cs::scenario::detail
