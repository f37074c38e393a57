#pragma once
// Published GPU specs: peak dense BF16/FP16 tensor FLOP/s, HBM (or GDDR) bandwidth in
// bytes/s, memory in bytes. Vendor datasheet figures; sources in gpu_catalog.cpp.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/scenario/config.hpp"

namespace cs::scenario {

struct GpuCatalogEntry {
  std::string_view name;
  double peak_flops;         // FLOP/s, dense BF16 (FP16 where the same), no sparsity
  double hbm_bandwidth_Bps;  // bytes/s
  double memory_bytes;       // bytes, decimal as published
};

std::span<const GpuCatalogEntry> gpu_catalog();
// Exact (case-sensitive) lookup.
std::optional<GpuConfig> find_gpu(std::string_view name);
std::vector<std::string> gpu_names();

}  // namespace cs::scenario
