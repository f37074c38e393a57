#pragma once
// The host side of each GPU, for CPU offload (ZeRO-Offload, Ren et al. 2021): its PCIe link to
// the host and the host's DRAM, where the optimizer step runs (DeepSpeed's CPU Adam streams
// the fp32 master weights, both moments and the gradients, as the GPU's optimizer does).
//
// Each GPU has a link of its own (x16 to the root complex or a switch port); a copy costs
// latency + bytes / bandwidth, one copy at a time per GPU in each direction (the copy engines).
// The node's GPUs run their host steps at once, sharing the DRAM's bandwidth. Offload copies do
// not share links with the network's traffic (see README, "Not done yet").
// Units: bytes/s, seconds.
#include <string_view>

namespace cs::compute {

struct HostSpec {
  double pcie_bandwidth_Bps = 25e9;      // per GPU, per direction (PCIe 4.0 x16 as measured)
  double pcie_latency_s = 1e-6;
  // Host DRAM: a workstation's 4 channels of DDR4-3200 (102.4 GB/s), shared by the node's GPUs.
  double memory_bandwidth_Bps = 102.4e9;
  int gpus_per_host = 1;
  // Share of the DRAM bandwidth the host's optimizer step streams at: an assumption (CPU Adam
  // is vectorized but not a pure copy); a measured "host/adam" time replaces it.
  double memory_efficiency = 0.5;
};

// The measured-time key (Efficiency::measured_s) of the host's optimizer step, per step.
inline constexpr std::string_view kHostOptimizerKey = "host/adam";

}  // namespace cs::compute
