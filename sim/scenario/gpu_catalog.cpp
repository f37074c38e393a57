#include "sim/scenario/gpu_catalog.hpp"

#include <array>

namespace cs::scenario {
namespace {

using topo::NodeFabric;

// Node fabric bandwidth as NCCL rates it: NVIDIA/nccl src/graph/topo.h gives GB/s per NVLink by
// compute capability: SM80_NVLINK_BW 20.0 and SM90_NVLINK_BW 20.6 (NCCL 2.20.x), and
// SM100_NVLINK_BW 40.1 (the Blackwell-era topo.h, as quoted in copies of it; not read here
// from an NVIDIA commit). topo.cc connects each GPU to the NVSwitch with count x that. The
// datasheets give the NVLink count: A100 12 (600 GB/s both ways), H100 SXM5 18 (900 GB/s),
// B200 18 (1.8 TB/s). Measured nccl-tests all_reduce ring busbw on one node sits at this
// figure: 365-370 GB/s on 8 x H100 (NVIDIA/nccl issue 1455), 230-232 GB/s on 8 x A100
// (NVIDIA/nccl-tests issue 175; Azure ND A100 v4 results).
constexpr std::array<GpuCatalogEntry, 6> kCatalog{{
    // NVIDIA H100 Tensor Core GPU datasheet (SXM5): BF16 1979 TFLOPS with sparsity -> 989
    // dense; HBM3 3.35 TB/s; 80 GB. NVLink: 18 x 20.6 GB/s.
    {"H100-SXM", 989e12, 3.35e12, 80e9, 18 * 20.6e9, NodeFabric::nvswitch, "hopper"},
    // NVIDIA A100 Tensor Core GPU datasheet (80GB SXM): BF16 312 TFLOPS dense; HBM2e
    // 2,039 GB/s; 80 GB. NVLink: 12 x 20.0 GB/s.
    {"A100-80GB", 312e12, 2.039e12, 80e9, 12 * 20.0e9, NodeFabric::nvswitch, "ampere"},
    // NVIDIA DGX B200 datasheet, per GPU (/8): 72 PFLOPS FP8 training -> 9 PFLOPS FP8 with
    // sparsity, 4.5 dense; BF16 dense is half of that, 2.25 PFLOPS; 64 TB/s HBM3e -> 8 TB/s;
    // 1,440 GB -> 180 GB. NVLink 5: 18 x 40.1 GB/s.
    {"B200", 2.25e15, 8e12, 180e9, 18 * 40.1e9, NodeFabric::nvswitch, "blackwell"},
    // AMD Instinct MI300X datasheet: BF16 1307.4 TFLOPS dense; HBM3 5.3 TB/s; 192 GB. Eight
    // GPUs in a full mesh of Infinity Fabric links, 7 per GPU at 64 GB/s each way (128 GB/s
    // peak per link): the datasheet rate, no RCCL-measured figure applied.
    {"MI300X", 1307.4e12, 5.3e12, 192e9, 7 * 64e9, NodeFabric::nvlink_mesh, "cdna3"},
    // NVIDIA RTX A5000 datasheet: tensor 222.2 TFLOPS with sparsity -> 111.1 dense; GDDR6
    // 768 GB/s; 24 GB. Workstations: PCIe (its two-GPU NVLink bridge is not modelled).
    {"RTX-A5000", 111.1e12, 768e9, 24e9, 0, NodeFabric::pcie, "ampere"},
    // NVIDIA L4 datasheet: BF16 242 TFLOPS with sparsity -> 121 dense; GDDR6 300 GB/s; 24 GB.
    // No NVLink: PCIe Gen4 servers.
    {"L4", 121e12, 300e9, 24e9, 0, NodeFabric::pcie, "ada"},
}};

}  // namespace

std::span<const GpuCatalogEntry> gpu_catalog() { return kCatalog; }

std::optional<GpuConfig> find_gpu(std::string_view name) {
  for (const auto& e : kCatalog)
    if (e.name == name)
      return GpuConfig{std::string(e.name), e.peak_flops, e.hbm_bandwidth_Bps, e.memory_bytes,
                       e.nvlink_bandwidth_Bps, e.fabric, std::string(e.arch)};
  return std::nullopt;
}

std::vector<std::string> gpu_names() {
  std::vector<std::string> names;
  for (const auto& e : kCatalog) names.emplace_back(e.name);
  return names;
}

}  // namespace cs::scenario
