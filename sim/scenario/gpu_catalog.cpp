#include "sim/scenario/gpu_catalog.hpp"

#include <array>

namespace cs::scenario {
namespace {

constexpr std::array<GpuCatalogEntry, 6> kCatalog{{
    // NVIDIA H100 Tensor Core GPU datasheet (SXM5): BF16 1979 TFLOPS with sparsity -> 989
    // dense; HBM3 3.35 TB/s; 80 GB.
    {"H100-SXM", 989e12, 3.35e12, 80e9},
    // NVIDIA A100 Tensor Core GPU datasheet (80GB SXM): BF16 312 TFLOPS dense; HBM2e
    // 2,039 GB/s; 80 GB.
    {"A100-80GB", 312e12, 2.039e12, 80e9},
    // NVIDIA DGX B200 datasheet, per GPU (/8): 72 PFLOPS FP8 training -> 9 PFLOPS FP8 with
    // sparsity, 4.5 dense; BF16 dense is half of that, 2.25 PFLOPS; 64 TB/s HBM3e -> 8 TB/s;
    // 1,440 GB -> 180 GB.
    {"B200", 2.25e15, 8e12, 180e9},
    // AMD Instinct MI300X datasheet: BF16 1307.4 TFLOPS dense; HBM3 5.3 TB/s; 192 GB.
    {"MI300X", 1307.4e12, 5.3e12, 192e9},
    // NVIDIA RTX A5000 datasheet: tensor 222.2 TFLOPS with sparsity -> 111.1 dense; GDDR6
    // 768 GB/s; 24 GB.
    {"RTX-A5000", 111.1e12, 768e9, 24e9},
    // NVIDIA L4 datasheet: BF16 242 TFLOPS with sparsity -> 121 dense; GDDR6 300 GB/s; 24 GB.
    {"L4", 121e12, 300e9, 24e9},
}};

}  // namespace

std::span<const GpuCatalogEntry> gpu_catalog() { return kCatalog; }

std::optional<GpuConfig> find_gpu(std::string_view name) {
  for (const auto& e : kCatalog)
    if (e.name == name)
      return GpuConfig{std::string(e.name), e.peak_flops, e.hbm_bandwidth_Bps, e.memory_bytes};
  return std::nullopt;
}

std::vector<std::string> gpu_names() {
  std::vector<std::string> names;
  for (const auto& e : kCatalog) names.emplace_back(e.name);
  return names;
}

}  // namespace cs::scenario
