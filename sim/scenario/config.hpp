#pragma once
// A scenario after parsing and validation: typed, in SI units, every cross-field rule checked.
// Produced by parse_config(); consumed by run_scenario().
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/enum_table.hpp"
#include "sim/fleet/training_run_config.hpp"
#include "sim/jobs/jobs_config.hpp"
#include "sim/network/comm_config.hpp"
#include "sim/scenario/training_config.hpp"
#include "sim/serving/serving_config.hpp"
#include "topology/bill.hpp"
#include "topology/params.hpp"
#include "workloads/collective.hpp"
#include "workloads/traffic.hpp"

namespace cs::scenario {

struct GpuConfig {
  std::string name = "H100-SXM";
  double peak_flops = 989e12;        // dense BF16, FLOP/s
  double hbm_bandwidth_Bps = 3.35e12;
  double memory_bytes = 80e9;
  double nvlink_bandwidth_Bps = 18 * 20.6e9;  // per direction into the node fabric; 0: none
  topo::NodeFabric fabric = topo::NodeFabric::nvswitch;  // its servers' node fabric
  std::string arch = "hopper";       // keys NCCL's per-architecture tables
};

// The host CPU's memory of a node (hardware.node.host_memory*): where CPU offload keeps the
// optimizer and steps it.
struct HostConfig {
  double memory_bandwidth_Bps = 102.4e9;
  double memory_bytes = 0;  // 0: not checked
};

// network.model and network.granularity: the communication layer's (comm_config.hpp). Only
// its factory (make_comm) acts on the model.
using NetworkModel = net::NetworkModel;
using Granularity = net::Granularity;

struct NetworkConfig {
  NetworkModel model = NetworkModel::flow;
  Granularity granularity = Granularity::pipeline;
  // NCCL protocol of data/nccl_tuning.json (simple, ll, ll128), automatic (the tuner picks
  // per size) or none (the wire alone).
  net::Protocol protocol = net::Protocol::automatic;
  // PXN: cross-rail transfers hop over the node fabric to the destination's rail first
  // (Network::set_pxn).
  bool pxn = false;
  topo::RoutingKind routing = topo::RoutingKind::dmodk;  // default: dmodk on fat-trees, minimal on
                                                         // dragonflies, dor on tori, else shortest
};

enum class WorkloadKind : uint8_t { traffic, collective, training, training_run, serving, jobs };
// workload.kind (workload.background's kind: traffic or collective).
inline constexpr auto kWorkloadKindNames = std::to_array<EnumName<WorkloadKind>>({
    {"traffic", WorkloadKind::traffic, "flows between ranks: a pattern or a list"},
    {"collective", WorkloadKind::collective, "an nccl-tests style collective benchmark"},
    {"training", WorkloadKind::training, "one training step of a model on the cluster"},
    {"serving", WorkloadKind::serving, "requests served by a fleet of replicas"},
    {"training_run", WorkloadKind::training_run, "a long training job on the fleet section's nodes"},
    {"jobs", WorkloadKind::jobs, "a shared cluster's job stream, scheduled by fleet.scheduler"},
});
static_assert(names_every_value<kWorkloadKindNames>());

struct RunConfig {
  double until_s = 0;               // 0 = until the workload is done
  int replications = 1;
  std::string trace_path;           // "" = no trace
  double timeseries_interval_s = 0; // 0 = no time series
  double max_memory_bytes = 8e9;    // the run's estimated memory must fit (run_budget.hpp)
};

// A workload running beside the main one on the same fabric (workload.background). A
// background collective repeats its sizes back to back until the main workload is done.
struct BackgroundWorkload {
  WorkloadKind kind = WorkloadKind::collective;
  work::TrafficSpec traffic;
  work::CollectiveSpec collective;
};

// Where the fabric reduces in-network (the in_network algorithm): NVLS in an NVSwitch node
// (hardware.node.nvls), SHARP in the fabric's switches (topology.sharp).
struct InNetworkConfig {
  bool nvls = false;
  bool sharp = false;
};

struct Config {
  std::string name;
  std::string description;
  uint64_t seed = 1;
  GpuConfig gpu;
  HostConfig host;
  topo::TopologyParams topology;
  topo::PriceTable prices;  // data/prices.json with topology.prices over it
  NetworkConfig network;
  InNetworkConfig in_network;
  WorkloadKind workload = WorkloadKind::collective;
  work::TrafficSpec traffic;
  work::CollectiveSpec collective;
  TrainingConfig training;
  std::vector<BackgroundWorkload> background;
  // training_run: the job (workload.step_time, steps) on its fleet (the fleet section) and
  // run.until, in the fleet library's terms (parse_fleet.cpp fills it).
  fleet::TrainingRunConfig training_run;
  // training_run with workload.training (parsed into `training`): its step time, and the
  // checkpoint's size unless the file gives it, come from simulating that step once on the
  // topology before the run (run_training_run.cpp: resolve_training_run_step).
  bool training_run_simulates_step = false;
  // jobs: the job stream, the cluster's nodes and the scheduler (parse_jobs.cpp fills it).
  jobs::JobsConfig jobs;
  // jobs with a topology section: the cluster is the topology's nodes, and jobs.node_domain
  // (each node's leaf, rail group or dragonfly group) is filled from the built topology when
  // the world is assembled (world/run_jobs.cpp); parsing builds nothing.
  bool jobs_on_topology = false;
  // jobs: per class (jobs.classes' order), its training workload when it gives one: its jobs'
  // slowdown then comes from simulating their step on the GPUs they get (jobs_step_time.hpp).
  std::vector<std::optional<TrainingConfig>> job_class_training;
  // serving: the fleet library's config (parse_serving*.cpp fill it from workload, fleet and
  // run); kv_over_network: disaggregated with a topology, the KV caches cross the simulated
  // network (the prefill pool on the first GPUs, the decode pool on the next).
  serving::ServingConfig serving;
  bool serving_kv_over_network = false;
  RunConfig run;
  // Keys that have no effect where they stand (key_effects.hpp), as "warning: <path>: ..."
  // lines for stderr: the run goes on.
  std::vector<std::string> warnings;
};

}  // namespace cs::scenario
