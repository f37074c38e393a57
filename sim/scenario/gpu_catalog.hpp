#pragma once
// Published GPU specs: peak dense BF16/FP16 tensor FLOP/s, HBM (or GDDR) bandwidth in
// bytes/s, memory in bytes (vendor datasheets), and the GPU-to-GPU bandwidth inside a node as
// NCCL rates it (its per-NVLink figure x the GPU's NVLinks: what collectives achieve, below the
// datasheet's signalling rate). Sources in gpu_catalog.cpp.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/scenario/config.hpp"
#include "topology/params.hpp"

namespace cs::scenario {

struct GpuCatalogEntry {
  std::string_view name;
  double peak_flops;         // FLOP/s, dense BF16 (FP16 where the same), no sparsity
  double hbm_bandwidth_Bps;  // bytes/s
  double memory_bytes;       // bytes, decimal as published
  // Per GPU, per direction, into the node fabric (bytes/s); 0: no NVLink-class fabric (the
  // GPU's nodes are PCIe).
  double nvlink_bandwidth_Bps;
  topo::NodeFabric fabric;   // the node fabric the GPU's servers have
  std::string_view arch;     // "hopper", "ampere", ...: keys NCCL's per-architecture tables
};

std::span<const GpuCatalogEntry> gpu_catalog();
// Exact (case-sensitive) lookup.
std::optional<GpuConfig> find_gpu(std::string_view name);
std::vector<std::string> gpu_names();

}  // namespace cs::scenario
