#pragma once
// Internal to the training workload's parsing and running: the scenario's GPU and host as the
// compute library's specs.
#include "sim/compute/gpu_catalog.hpp"
#include "sim/compute/training_host.hpp"
#include "sim/scenario/config.hpp"

namespace cs::scenario::detail {

// hardware.gpu as a GpuSpec. A catalog GPU keeps its entry, with the file's overrides (a given
// peak_flops scales every tensor format alike); a custom GPU gets bf16 = fp16 = peak_flops, no
// fp8, 132 SMs and a GEMM ceiling of 0.8 (the catalog's default where nothing was measured).
// The spec's name views gpu.name: `gpu` must outlive it.
compute::GpuSpec gpu_spec(const GpuConfig& gpu);

// Each GPU's host link (hardware.node.pcie_bandwidth / pcie_latency) and the host's memory
// (hardware.node.host_memory_bandwidth), shared by the node's GPUs.
compute::HostSpec host_spec(const Config& config);

}  // namespace cs::scenario::detail
