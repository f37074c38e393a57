#pragma once
// Published GPU specs, one entry per product (sources next to each entry in gpu_catalog.cpp):
// dense peak FLOP/s per number format (no structured sparsity), HBM (or GDDR) size and
// bandwidth, board power, SM count, the largest GEMM efficiency measured on it, and the
// GPU-to-GPU bandwidth inside a node as NCCL rates it (its per-NVLink figure x the GPU's
// NVLinks: what collectives achieve, below the datasheet's signalling rate).
//
// Units: FLOP/s, bytes, bytes/s, watts.
// Invariants: every entry has bf16 or fp16 > 0 (a training precision runs on tensor cores);
// a format the GPU lacks has peak 0 (T4: no bf16; Ampere and older: no fp8; TPUs: no fp16, and
// no published fp32 or tf32 rate). The catalog also holds accelerators that are not GPUs (TPU
// v4 to v6e, Trainium, Inferentia2): "GPU" in names here means any accelerator chip.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/network/comm_config.hpp"
#include "topology/params.hpp"
#include "workloads/training_plan.hpp"

namespace cs::compute {

// Dense peak FLOP/s per format. fp32 is the CUDA-core (vector) rate; the others are tensor-core
// rates with FP32 accumulation, as mixed-precision training runs them.
struct DenseFlops {
  double fp32 = 0;
  double tf32 = 0;
  double bf16 = 0;
  double fp16 = 0;
  double fp8 = 0;
  double int8 = 0;  // integer tensor rate (OP/s): catalogued; no scenario precision runs on it yet
};

struct GpuSpec {
  std::string_view name;     // the catalog name scenario files use ("H100-SXM", ...)
  std::string_view arch;     // "hopper", "ampere", ...: keys NCCL's per-architecture tables
  DenseFlops dense_flops;    // FLOP/s
  double memory_bytes = 0;   // bytes, decimal as published
  double hbm_bandwidth_Bps = 0;
  double power_w = 0;        // board power (TDP / TBP), W
  int sms = 0;               // streaming multiprocessors (AMD: compute units): GEMM wave width;
                             // 0: no wave model (TPUs, Neuron cores: GEMMs at the ceiling)
  // Largest GEMM rate measured on the GPU over its dense bf16 (fp16) peak: the ceiling of the
  // shape-dependent GEMM efficiency (compute/roofline.hpp). Measured where a source exists.
  double max_gemm_efficiency = 0.8;
  // Per GPU, per direction, into the node fabric (bytes/s); 0: no NVLink-class fabric (the
  // GPU's nodes are PCIe).
  double nvlink_bandwidth_Bps = 0;
  topo::NodeFabric fabric = topo::NodeFabric::pcie;  // the node fabric the GPU's servers have
  // Largest fp8 GEMM rate measured over the dense fp8 peak; 0: not measured (the roofline
  // derives it from max_gemm_efficiency, compute/roofline.hpp).
  double max_fp8_gemm_efficiency = 0;
  // The chip's own chip-to-chip links where it has them instead of NVLink (TPU ICI, AWS
  // NeuronLink): how many per chip and each one's rate per direction (bytes/s); 0: none.
  // nvlink_bandwidth_Bps is then their sum, the rate into the node fabric.
  int ici_links = 0;
  double ici_link_Bps = 0;
  // The server as sold: its chips and, on an nvlink_mesh, how they are cabled (the defaults of
  // hardware.node.gpus and hardware.node.mesh).
  int node_gpus = 8;
  topo::NodeMesh mesh = topo::NodeMesh::full;
  // Whether the chip's training stack can overlap a tensor-parallel all-gather or reduce-scatter
  // with the GEMM next to it (the default of parallel.tp_comm_overlap): true where the vendor's
  // recipes do (NVIDIA's userbuffers); false on AWS Neuron, whose compiler cannot (gpu_catalog.cpp).
  bool overlaps_tp_comm = true;
  // Share of hbm_bandwidth_Bps a memory-bound kernel was measured to reach on this chip, in
  // (0, 1]; 0: not measured (each consumer keeps its own default). Measured for TPUs on a paged
  // attention kernel (gpu_catalog.cpp), so a paged KV read on them needs no further share.
  double hbm_efficiency = 0;
  // The collectives library the chip's stack runs, whose latencies price every collective on it
  // (training, serving, the collective workload): NCCL's (the default; RCCL keeps its tuning
  // model), AWS Neuron's CCOM on the three Neuron chips (sim/network/neuron_ccom.hpp) or XLA's
  // on the four TPUs (net::CollectiveLibrary::xla).
  net::CollectiveLibrary collective_library = net::CollectiveLibrary::nccl;
};

// H100 SXM's measured GEMM ceilings (bf16 and fp8, its catalog entry's max_gemm_efficiency and
// max_fp8_gemm_efficiency; sources in gpu_catalog.cpp). One definition, because shares measured
// on an H100 elsewhere (flash attention's, the fp8 ratio: compute/roofline.cpp) are taken over
// these: a new table version changes the entry and those shares together.
inline constexpr double kH100SxmGemmCeiling = 0.803;
inline constexpr double kH100SxmFp8GemmCeiling = 0.709;

std::span<const GpuSpec> gpu_catalog();
// Exact (case-sensitive) lookup; nullptr when the name is not in the catalog.
const GpuSpec* find_gpu(std::string_view name);
std::vector<std::string> gpu_names();

// Dense tensor-core peak for a training precision (bf16, fp16, fp8); 0 when the GPU lacks it.
double dense_peak_flops(const DenseFlops& flops, work::Precision precision);
// The dense 16-bit peak: bf16, or fp16 where the GPU has no bf16 (T4).
double half_precision_peak_flops(const DenseFlops& flops);

}  // namespace cs::compute
