#pragma once
// Op timing by roofline: an op takes the larger of its FLOPs at the GPU's dense peak x an
// achievable efficiency and its bytes at HBM bandwidth x an efficiency; a measured time, where
// given, replaces both.
//
// Default efficiencies and their basis:
// - GEMMs: the GPU's largest measured GEMM rate over its peak (GpuSpec::max_gemm_efficiency,
//   Bekman's MAMF table: 0.80 H100 SXM, 0.86 A100, 0.60 MI300X), times the share of the GPU a
//   GEMM of this shape keeps busy: tile quantization (128 x 128 output tiles: a dimension that
//   is not a multiple of 128 pays for the whole last tile) and wave quantization (tiles run in
//   waves of one per SM; a partial last wave idles the rest; small-M,N GEMMs split K to fill
//   the GPU), as NVIDIA's "Matrix Multiplication Background" guide (DU-09799-001, sections 3.1
//   and 3.2) describes; a dimension under 128 gets a power-of-two tile edge of its size (at
//   least 16), as cuBLAS has kernels for skinny GEMMs. Large GEMMs reach the ceiling; small
//   ones less.
// - Attention (flash): 0.75 x the GEMM ceiling: FlashAttention-2 reaches 50-73% of A100's peak
//   forward+backward (Dao 2023, Figure 6: ~0.84 of its MAMF at best, less at short sequences)
//   and FlashAttention-3 about 75% forward and somewhat less backward on H100 (Shah et al.
//   2024); we take the lower end over the mix.
//   Under fp8 the attention core still runs at the 16-bit peak (Transformer Engine's recipe);
//   GEMMs take the fp8 peak with the same ceiling (measured for bf16: likely optimistic).
// - Element-wise and other memory-bound work: 0.85 of HBM bandwidth (large device copies
//   reach ~90% of H100's datasheet bandwidth; fused element-wise kernels a little less).
// - CPU offload's host work (training_host.hpp): copies over the GPU's PCIe link, and the host's
//   optimizer step at its share of the host's DRAM bandwidth.
// Units: seconds, FLOP/s, bytes/s.
#include <map>
#include <string>
#include <vector>

#include "sim/compute/gpu_catalog.hpp"
#include "sim/compute/training_host.hpp"
#include "workloads/training_ops.hpp"

namespace cs::compute {

struct Efficiency {
  double gemm = 0;               // ceiling for large GEMMs; 0: the GPU's max_gemm_efficiency
  bool gemm_shape_aware = true;  // apply tile and wave quantization below the ceiling
  double attention = 0;          // 0: 0.75 x the GEMM ceiling
  double memory = 0.85;          // share of HBM bandwidth memory-bound kernels reach
  // Measured times replacing the roofline, per op and micro-batch on one rank, keyed
  // "<phase>/<op name>" ("forward/qkv", "backward_input/attention", "optimizer/adam",
  // "host/adam"); phases forward, backward_input, backward_weight, optimizer, host.
  std::map<std::string, double, std::less<>> measured_s;
};

class Roofline {
 public:
  // Throws work::TrainingError("precision") when the GPU has no tensor cores for `precision`.
  Roofline(const GpuSpec& gpu, work::Precision precision, Efficiency efficiency = {}, HostSpec host = {});

  double peak_flops() const { return peak_flops_; }            // dense, for the precision
  double gemm_ceiling() const { return gemm_ceiling_; }
  double attention_efficiency() const { return attention_; }
  // Share of the dense peak a GEMM C[m x n] = A[m x k] B[k x n] reaches.
  double gemm_efficiency(double m, double n, double k) const;
  double op_seconds(const work::Op& op) const;
  double ops_seconds(const std::vector<work::Op>& ops) const;

 private:
  GpuSpec gpu_;
  Efficiency efficiency_;
  HostSpec host_;
  double peak_flops_ = 0;
  double attention_peak_flops_ = 0;
  double gemm_ceiling_ = 0;
  double attention_ = 0;
};

std::string_view to_string(work::Phase phase);

}  // namespace cs::compute
