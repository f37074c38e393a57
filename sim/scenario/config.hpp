#pragma once
// A scenario after parsing and validation: typed, in SI units, every cross-field rule checked.
// Produced by parse_config(); consumed by run_scenario().
#include <cstdint>
#include <string>

#include "topology/params.hpp"
#include "workloads/collective.hpp"
#include "workloads/traffic.hpp"

namespace cs::scenario {

struct GpuConfig {
  std::string name = "H100-SXM";
  double peak_flops = 989e12;        // dense BF16, FLOP/s
  double hbm_bandwidth_Bps = 3.35e12;
  double memory_bytes = 80e9;
};

enum class NetworkModel : uint8_t { flow, analytical };

struct NetworkConfig {
  NetworkModel model = NetworkModel::flow;
  topo::RoutingKind routing = topo::RoutingKind::dmodk;  // default: dmodk on fat-trees, minimal on
                                                         // dragonflies, dor on tori, else shortest
};

enum class WorkloadKind : uint8_t { traffic, collective };

struct RunConfig {
  double until_s = 0;               // 0 = until the workload is done
  int replications = 1;
  std::string trace_path;           // "" = no trace
  double timeseries_interval_s = 0; // 0 = no time series
};

struct Config {
  std::string name;
  std::string description;
  uint64_t seed = 1;
  GpuConfig gpu;
  topo::TopologyParams topology;
  NetworkConfig network;
  WorkloadKind workload = WorkloadKind::collective;
  work::TrafficSpec traffic;
  work::CollectiveSpec collective;
  RunConfig run;
};

}  // namespace cs::scenario
