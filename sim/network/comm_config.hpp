#pragma once
// The communication layer's settings as plain values (network.model, network.granularity,
// network.protocol, in-network reduction): what a scenario's Config holds, without the
// layer's or the models' headers. The layer itself: comm.hpp, comm_base.hpp.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/enum_table.hpp"

namespace cs::net {

// NCCL's protocols (data/nccl_tuning.json, nccl_tuning.hpp). automatic: the tuner picks per
// size, among LL, LL128 and Simple; none: the wire alone (no software latency, full payload
// efficiency).
enum class Protocol : uint8_t { automatic, simple, ll, ll128, none };
// network.protocol.
inline constexpr auto kProtocolNames = std::to_array<EnumName<Protocol>>({
    {"auto", Protocol::automatic, "per size the fastest by the analytical model, as NCCL's tuner picks"},
    {"simple", Protocol::simple, "NCCL's Simple: payload efficiency 1"},
    {"ll", Protocol::ll, "NCCL's LL (low latency): payload efficiency 1/2"},
    {"ll128", Protocol::ll128, "NCCL's LL128: payload efficiency 120/128"},
    {"none", Protocol::none, "the wire alone: topology latencies and bandwidths"},
});
static_assert(names_every_value<kProtocolNames>());
std::string_view to_string(Protocol protocol);

// Where the fabric reduces in-network (the in_network algorithm): NVLS in an NVSwitch node,
// SHARP in the fabric's switches; NVLS runs at nvls_efficiency of the NVLink bandwidth.
struct InNetworkReduction {
  bool nvls = false;
  bool sharp = false;
  double nvls_efficiency = 1;
};

enum class NetworkModel : uint8_t { flow, analytical };
// network.model.
inline constexpr auto kNetworkModelNames = std::to_array<EnumName<NetworkModel>>({
    {"flow", NetworkModel::flow, "max-min fair sharing of links by flows, simulated"},
    {"analytical", NetworkModel::analytical, "alpha-beta with topology-aware bottlenecks (collectives only)"},
});
static_assert(names_every_value<kNetworkModelNames>());

// How finely the flow model runs a collective: pipeline = each pipelined stage as one flow at
// the pace of its slowest edge (the fluid limit of chunks flowing with no barrier); step =
// ring all-reduce with every rank's every step its own flow (the textbook ring, O(n^2) flows).
enum class Granularity : uint8_t { pipeline, step };
// network.granularity.
inline constexpr auto kGranularityNames = std::to_array<EnumName<Granularity>>({
    {"pipeline", Granularity::pipeline, "each pipelined stage one flow at its slowest edge's pace; O(n) flows"},
    {"step", Granularity::step, "ring all_reduce only, every rank's every step a flow; O(n^2) flows"},
});
static_assert(names_every_value<kGranularityNames>());

// The collectives library an accelerator runs (compute::GpuSpec::collective_library), which
// sets the software latency of its collectives: NCCL's tuning model (nccl_tuning.hpp), AWS
// Neuron's collectives library (CCOM) on NeuronLink and EFA (neuron_ccom.hpp), or XLA's
// collectives on a TPU's ICI (no protocol, no software latency: the wire alone, each step the
// route's own ICI latency; no published measurement of XLA's per-collective overhead).
enum class CollectiveLibrary : uint8_t { nccl, neuron_ccom, xla };

struct CommConfig {
  NetworkModel model = NetworkModel::flow;
  Granularity granularity = Granularity::pipeline;
  Protocol protocol = Protocol::automatic;  // collectives' default
  InNetworkReduction in_network;
  // GPU architecture ("hopper", ...): keys NCCL's per-generation tables (LL's ceiling).
  std::string gpu_arch = "hopper";
  // Whose latencies price the collectives. neuron_ccom: Neuron's, one protocol (LL and LL128
  // are NCCL's) under every network.protocol but none, and none of NCCL's refinements. xla: the
  // wire alone (protocol none) under every network.protocol, none of NCCL's refinements.
  CollectiveLibrary collective_library = CollectiveLibrary::nccl;
  // GPUs of one node reach each other only through host memory (PCIe without peer-to-peer:
  // NCCL's SHM transport): a collective whose group has two or more ranks on one node runs at
  // nccl_shm_efficiency() of its bandwidth. The routes are the same (GPU -> host -> GPU).
  bool host_staged = false;
};

}  // namespace cs::net
