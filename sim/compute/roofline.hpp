#pragma once
// Op timing by roofline: an op takes the larger of its FLOPs at the GPU's dense peak x an
// achievable efficiency and its bytes at HBM bandwidth x an efficiency (the unfused attention
// core's batched products on GPUs take the sum: below); a measured time, where given, replaces
// both.
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
//   ones less. On A100 this rule is within 10% of NVIDIA's cuBLAS 11.0 FP16 rates for m = n = k
//   from 2,048 to 8,192 and optimistic below 2,048 (1,024: 88 TFLOP/s measured, 161 here).
//   A batched GEMM's instances (the unfused attention's products) fill the waves together.
//   The rate does not depend on K once the tiles fill the SMs. Vidur's profiles of GEMMs inside
//   a model's forward (microsoft/vidur, fp16, A100 and H100) show no trend with K from 1,024 up
//   either; K of 512 and 640 run 11-37% under the mean there (not modelled). Those GEMMs
//   run at 0.88 (A100) and 0.93 (H100 SXM) of this model's rate on average; not applied
//   (docs/training.md, "one layer").
// - fp8 GEMMs: their own ceiling (GpuSpec::max_fp8_gemm_efficiency): fp8 GEMMs reach a smaller
//   share of the doubled peak than bf16 ones. H100 SXM: 0.709, from the same MAMF table and
//   method as the bf16 ceiling (cuBLAS, which Transformer Engine's fp8 GEMMs run through as
//   cuBLASLt; torch._scaled_mm: 1,402.6 of the 1,979 dense TFLOP/s), against 0.803 for bf16.
//   GPUs without a measurement take their bf16 ceiling x the H100's ratio (0.709 / 0.803;
//   kH100SxmFp8GemmCeiling / kH100SxmGemmCeiling, gpu_catalog.hpp).
//   Each fp8 GEMM's input cast is an element-wise op of its own (workloads/training_ops.hpp).
//   The LM head stays in 16 bits in fp8 runs (Megatron-Core's output layer is outside
//   Transformer Engine): 16-bit peak and ceiling.
// - Attention (flash, causal), at the 16-bit peak x its own efficiency per phase and sequence
//   length. Forward at long sequences 0.679 x the 16-bit GEMM ceiling (H100 0.545, A100
//   0.590): cuDNN's fused attention, which Transformer Engine runs on Hopper, reaches 539 of
//   H100's 989 TFLOP/s in bf16, causal, head dimension 128, at 16K (Shah et al. 2024,
//   FlashAttention-3, Figure 5; FlashAttention-3 itself 616, FlashAttention-2 335; on A100
//   FlashAttention-2 reaches 50-73% of the peak, Dao 2023, Figure 6). Shorter sequences run
//   slower, as the same figure measured: 315, 410, 484, 518, 529 TFLOP/s at 512 to 8K, so a
//   kernel over s keys runs at that share of the 16K rate (log-linear between the points; the
//   length is the per-rank sequence, seq_len / cp). Backward 0.8 x the forward's
//   (FlashAttention-3's Figure 6: ~520 backward against ~650 forward at 16K;
//   FlashAttention-2's backward likewise runs at ~0.8 of its forward rate). Under fp8 the
//   attention core still runs at the 16-bit peak (Transformer Engine's recipe).
// - Element-wise and other memory-bound work: 0.85 of HBM bandwidth (large device copies
//   reach ~90% of H100's datasheet bandwidth; fused element-wise kernels a little less), but
//   for two kernels measured as Megatron-Core runs them, on H100 SXM (3.35 TB/s), bf16, 8,192
//   tokens (linkedin/Liger-Kernel, benchmark/data/all_benchmark_data.csv, providers "megatron",
//   "megatron-fused"; medians of do_bench, of 5 loops of 50 for the loss; backward timed as
//   forward + backward, less the forward):
//   - the MLP's activation (work::MemoryKernel::activation): Megatron's fused bias-SwiGLU
//     (bias_swiglu_impl, TorchScript-fused) at 0.546, 0.555, 0.560 of HBM bandwidth forward
//     (6 bytes per gate-up pair: read both, write the product) for 8K, 16K and 32K local FFN
//     columns: 0.55; backward 0.225-0.228 of it on 12 bytes per pair (the harness's sum of the
//     output inside): 0.23. GeLU (Megatron's bias_gelu_impl, the same TorchScript fusion) takes
//     the same shares: no measurement of it was found.
//   - the loss over the vocabulary (work::MemoryKernel::loss): Megatron's fused vocab-parallel
//     cross-entropy (fused_vocab_parallel_cross_entropy, cross_entropy_loss_fusion) at 0.340,
//     0.334, 0.326 forward on the model's 12 bytes per logit for 32K, 64K and 128K vocabularies:
//     0.33; backward 0.396-0.399 on 8 bytes per logit: 0.40.
//   - the score matrix of attention without flash attention (work::MemoryKernel::attention_core:
//     the softmax, and the batched Q K^T and P V GEMMs that write and read the matrix): 0.72 of
//     HBM bandwidth forward, 0.63 backward, measured on an A100 40GB (1,555 GB/s) by Dao et al.
//     2022 (FlashAttention, arXiv 2205.14135, appendix E.6, Tables 18 and 19, the "PyTorch
//     Attention" row: fp16, batch 16, 8 heads of 64, no dropout, no mask; Megatron's row the same
//     within 6%): the model's bytes per score (forward 8: the GEMMs' 2 + 2 and the softmax's 4;
//     backward 14) over the measured time less the products' arithmetic, 0.64, 0.75, 0.78
//     forward and 0.59, 0.64, 0.66 backward at 1,024, 2,048 and 4,096 (at 512 and below the runs
//     are bound by PyTorch's per-op time, not bandwidth). On GPUs the batched products are not a
//     roofline: their arithmetic (at the GEMM ceiling and shape) and their bytes add up. The
//     evidence is the head dimension: FlashAttention-2's figure of the same PyTorch attention on
//     an A100 80GB (Dao 2023, arXiv 2307.08691, Figure 4, assets/flash2_a100_fwd_bwd_benchmark.png
//     in Dao-AILab/flash-attention at 4f285b3: hidden 2,048, 16K tokens, forward and backward;
//     the TFLOP/s count of benchmarks/benchmark_flash_attention.py, 60499ab) at head dimension
//     128 has the FLOPs of 64 and half the score bytes, and runs 1.76-1.87x faster at 2K to 8K,
//     not 2x; the larger of the two leaves the model x1.11-1.44 fast at 128 (x1.05-1.19 at 64),
//     their sum x0.93-1.10 at both from 1K to 8K (tests/cpp/compute/test_unfused_attention.cpp).
//     The attention dropout stays at `memory`: the same tables' dropout rows (15, 16) less these
//     give it 0.77-0.81 forward and 0.86-0.90 backward on its 5 bytes.
//   The activation and the loss on every GPU at H100's shares, the attention core at the A100's
//   (none measured on another GPU was found; the one kernel the same data time on A100 and
//   H100, torch.nn.LayerNorm, reaches the same share of each GPU's bandwidth: 0.51-0.53 forward
//   at 8K and 16K columns); TPUs and Neuron cores fuse these ops by their own compilers, not
//   measured: `memory`, unless the scenario's.
// - Weight-gradient GEMMs on GPUs add into the gradient buffer (Megatron-Core's and Transformer
//   Engine's fused accumulation into main_grad, gradient_accumulation_fusion: beta = 1): the
//   buffer's read and write, 2 x gradient_bytes per element at `memory` of HBM bandwidth, come
//   after the GEMM's own time, not inside the roofline's max. DeepGEMM's fp8 weight-gradient
//   kernels, which accumulate into fp32 (deepseek-ai/DeepGEMM pull request 95, its benchmark
//   GPU the H800 SXM5, whose tensor cores and 3.35 TB/s HBM3 are H100 SXM's), run at 878-994
//   TFLOP/s at K = 4,096 and 1,014-1,092 at K = 8,192 (nine shapes); the fp8 ceiling's time plus
//   8 bytes per output element so gives 947 and 1,131, where the max would give the ceiling's
//   1,403. That agreement does not show the pass is wholly exposed: DeepGEMM's own
//   non-accumulating fp8 GEMMs on the same GPU run below that ceiling (its README as first
//   published, February 2025, "Normal GEMMs for dense models", H800, M = 4,096:
//   1,025 TFLOP/s at N 7,168 K 2,048, 1,304 at N 4,096 K 7,168), and against those rates the
//   accumulating kernels' extra time is some 10-85% of the pass (7168 x 4096 and 16384 x 7168
//   at K = 4,096). Warp-specialized Hopper kernels can load C during the main loop and store
//   while other tiles compute; no measurement of a bf16 cuBLAS GEMM with beta = 1 was found.
//   So the whole pass after the GEMM is an upper bound of the cost, not a measured figure.
//   The time it adds per micro-batch is the weights', whatever the tokens: a small
//   micro-batch pays it on less work. TPUs and Neuron cores (their compilers' gradients, not
//   measured): the GEMM's 16-bit output inside the max.
// - Every GPU kernel pays a launch gap of 1 us: back-to-back kernels on one stream run ~0.9 us
//   apart beyond their own time (NVIDIA developer blog, A. Gray, "Getting Started with CUDA
//   Graphs", 2019: 3.8 us per kernel of 2.9 us when launched in a stream). Each op is one
//   kernel here, but context parallelism's ring attention and its merges (Op::kernels).
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
  // Ceiling for large GEMMs at the run's precision; 0: the GPU's (max_gemm_efficiency, or for
  // fp8 fp8_gemm_efficiency()).
  double gemm = 0;
  bool gemm_shape_aware = true;  // apply tile and wave quantization below the ceiling
  // Share of the 16-bit peak flash attention reaches, forward and backward alike; 0: the
  // defaults above (forward 0.75 x the 16-bit GEMM ceiling, backward 0.8 x that).
  double attention = 0;
  double memory = 0.85;          // share of HBM bandwidth memory-bound kernels reach
  // Shares of HBM bandwidth the activation and the loss kernels reach, both phases alike, on
  // any chip; 0: the measured defaults above, by phase, on GPUs (`memory` on other chips).
  double activation_memory = 0;
  double loss_memory = 0;
  // Share of HBM bandwidth the unfused attention core's score-matrix passes reach (its softmax
  // and batched GEMMs), both phases alike, on any chip; 0: the measured defaults above.
  double attention_memory = 0;
  double kernel_overhead_s = 1e-6;  // per GPU kernel (op): the launch gap, seconds
  // Bytes per element of the gradient buffer weight-gradient GEMMs accumulate into
  // (workload.gradient_bytes; Megatron's fp32 main grads: 4).
  double gradient_bytes = 2;
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
  // Share of the 16-bit peak flash attention reaches in `phase` over sequences of `seq_len`
  // keys per kernel call (0: long sequences, its plateau).
  double attention_efficiency(work::Phase phase = work::Phase::forward, double seq_len = 0) const;
  // Share of the dense peak a GEMM C[m x n] = A[m x k] B[k x n] at the run's precision reaches.
  double gemm_efficiency(double m, double n, double k) const;
  double op_seconds(const work::Op& op) const;
  // Share of HBM bandwidth an op's bytes move at: its memory kernel's in its phase.
  double memory_efficiency(const work::Op& op) const;
  double ops_seconds(const std::vector<work::Op>& ops) const;

 private:
  GpuSpec gpu_;
  Efficiency efficiency_;
  HostSpec host_;
  double peak_flops_ = 0;
  // Share of the GPU a GEMM of this shape keeps busy: tile and wave quantization (1 when
  // shape-blind).
  double shape_utilization(double m, double n, double k, double batch = 1) const;

  double sixteen_bit_peak_flops_ = 0;  // attention and 16-bit GEMMs, whatever the run's precision
  double gemm_ceiling_ = 0;
  double sixteen_bit_gemm_ceiling_ = 0;
  double attention_ = 0;
  double attention_backward_ = 0;
};

// The fp8 GEMM ceiling of `gpu`: its measured max_fp8_gemm_efficiency, or its bf16 ceiling x
// the H100 SXM's fp8-to-bf16 ratio where there is no measurement.
double fp8_gemm_efficiency(const GpuSpec& gpu);

std::string_view to_string(work::Phase phase);

}  // namespace cs::compute
