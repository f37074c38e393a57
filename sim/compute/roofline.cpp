#include "sim/compute/roofline.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "common/enum_table.hpp"

namespace cs::compute {
namespace {

constexpr double kTile = 128;            // output tile edge (cuBLAS's common 128 x 128)
constexpr double kSplitKChunk = 512;     // split-K never cuts K below this many elements
constexpr double kSixteenBitBytes = 2;   // a GEMM's bf16 / fp16 output, bytes per element
// Flash attention's forward at long sequences, of the 16-bit GEMM ceiling: cuDNN's fused
// attention (Transformer Engine's backend on Hopper) at 16K, causal, head dimension 128, 539 of
// H100 SXM's 989 TFLOP/s (Shah et al. 2024, FlashAttention-3, Figure 5), over the H100's own
// GEMM ceiling: on every GPU attention reaches this share of that GPU's ceiling (an assumption:
// the one published sweep is the H100's).
constexpr double kAttentionShare = 539.0 / 989.0 / kH100SxmGemmCeiling;
constexpr double kAttentionBackwardShare = 0.8;   // backward, of the forward's efficiency
// The same measurement's rate by sequence length, of its 16K rate: 315, 410, 484, 518, 529 and
// 539 TFLOP/s at 512, 1K, 2K, 4K, 8K and 16K (short sequences leave the kernel's pipeline
// and the causal diagonal's partly masked tiles a larger share).
constexpr std::array<double, 6> kAttentionLengthRate{315, 410, 484, 518, 529, 539};
constexpr double kAttentionShortestLength = 512;

// The share of its long-sequence rate flash attention reaches over `seq_len` keys: the
// measured points joined linearly in log2 of the length; the 512 point below it, the 16K one
// above it and where the length is not known (0).
double attention_length_share(double seq_len) {
  if (!(seq_len > 0)) return 1;
  const double x = std::log2(std::max(seq_len, kAttentionShortestLength) / kAttentionShortestLength);
  const double last = double(kAttentionLengthRate.size() - 1);
  const double at = std::min(x, last);
  const auto i = std::size_t(std::min(std::floor(at), last - 1));
  const double f = at - double(i);
  return ((1 - f) * kAttentionLengthRate[i] + f * kAttentionLengthRate[i + 1]) / kAttentionLengthRate.back();
}
// Megatron's fused activation and cross-entropy kernels on H100 SXM, forward and backward
// (roofline.hpp: Liger-Kernel's benchmarks of them).
constexpr double kActivationForwardShare = 0.55, kActivationBackwardShare = 0.23;
constexpr double kLossForwardShare = 0.33, kLossBackwardShare = 0.40;
// The unfused attention core's score-matrix passes on A100 (roofline.hpp: Dao et al. 2022,
// Tables 18 and 19): the model's bytes over the measured time less the products' arithmetic
// (serial with their bytes), the mean of 1,024 to 4,096.
constexpr double kAttentionCoreForwardShare = 0.72, kAttentionCoreBackwardShare = 0.63;
// H100 SXM: fp8 ceiling over bf16, both Bekman's MAMF (cuBLAS through torch).
constexpr double kFp8CeilingRatio = kH100SxmFp8GemmCeiling / kH100SxmGemmCeiling;

}  // namespace

std::string_view to_string(work::Phase phase) { return name_of(work::kPhaseNames, phase); }

double fp8_gemm_efficiency(const GpuSpec& gpu) {
  return gpu.max_fp8_gemm_efficiency > 0 ? gpu.max_fp8_gemm_efficiency : gpu.max_gemm_efficiency * kFp8CeilingRatio;
}

Roofline::Roofline(const GpuSpec& gpu, work::Precision precision, Efficiency efficiency, HostSpec host)
    : gpu_(gpu), efficiency_(std::move(efficiency)), host_(host) {
  peak_flops_ = dense_peak_flops(gpu.dense_flops, precision);
  if (!(peak_flops_ > 0))
    throw work::TrainingError("precision",
                              std::string(gpu.name) + " has no " + std::string(work::to_string(precision)) +
                                  " tensor cores",
                              precision == work::Precision::fp8 ? "use \"bf16\"" : "use \"fp16\"");
  // Attention runs in 16-bit even in fp8 training (Transformer Engine's default recipe keeps
  // the attention core in bf16).
  const bool fp8 = precision == work::Precision::fp8;
  sixteen_bit_peak_flops_ = fp8 ? half_precision_peak_flops(gpu.dense_flops) : peak_flops_;
  const double measured_ceiling = fp8 ? fp8_gemm_efficiency(gpu) : gpu.max_gemm_efficiency;
  gemm_ceiling_ = efficiency_.gemm > 0 ? efficiency_.gemm : measured_ceiling;
  // GEMMs left in 16 bits by an fp8 run (the LM head) reach the 16-bit ceiling; in a 16-bit run
  // that is the run's own (an `efficiency.gemm` override included).
  sixteen_bit_gemm_ceiling_ = fp8 ? gpu.max_gemm_efficiency : gemm_ceiling_;
  // Flash attention's defaults scale with the 16-bit GEMM ceiling (it runs in 16 bits).
  attention_ = efficiency_.attention > 0 ? efficiency_.attention : kAttentionShare * gpu.max_gemm_efficiency;
  attention_backward_ = efficiency_.attention > 0 ? efficiency_.attention : kAttentionBackwardShare * attention_;
}

double Roofline::attention_efficiency(work::Phase phase, double seq_len) const {
  const double long_sequence = phase == work::Phase::forward ? attention_ : attention_backward_;
  // An `efficiency.attention` override is the kernel's rate as measured: flat.
  return efficiency_.attention > 0 ? long_sequence : long_sequence * attention_length_share(seq_len);
}

double Roofline::gemm_efficiency(double m, double n, double k) const {
  return gemm_ceiling_ * shape_utilization(m, n, k);
}

double Roofline::shape_utilization(double m, double n, double k, double batch) const {
  if (!efficiency_.gemm_shape_aware || gpu_.sms <= 0) return 1;
  // Below 128 the tile edge shrinks to the next power of two (at least 16): cuBLAS has kernels
  // with small tiles for skinny GEMMs.
  auto edge = [](double d) { return d >= kTile ? kTile : std::max(16.0, std::exp2(std::ceil(std::log2(d)))); };
  const double edge_m = edge(m), edge_n = edge(n);
  const double tiles_m = std::ceil(m / edge_m), tiles_n = std::ceil(n / edge_n);
  const double tile_use = (m * n) / (tiles_m * tiles_n * edge_m * edge_n);
  const double tiles = tiles_m * tiles_n * batch;
  const double sms = gpu_.sms;
  double wave_use;
  if (tiles >= sms) {
    wave_use = tiles / (std::ceil(tiles / sms) * sms);
  } else {
    // Too few tiles for one wave: split K over more blocks, as far as K allows.
    const double splits = std::clamp(std::floor(sms / tiles), 1.0, std::max(1.0, std::floor(k / kSplitKChunk)));
    const double blocks = tiles * splits;
    wave_use = blocks / (std::ceil(blocks / sms) * sms);
  }
  return tile_use * wave_use;
}

double Roofline::op_seconds(const work::Op& op) const {
  if (!efficiency_.measured_s.empty()) {
    const std::string key = std::string(to_string(op.phase)) + "/" + std::string(op.name);
    if (auto it = efficiency_.measured_s.find(key); it != efficiency_.measured_s.end()) return it->second * op.share;
  }
  if (op.kind == work::OpKind::pcie) return host_.pcie_latency_s + op.bytes / host_.pcie_bandwidth_Bps;
  if (op.kind == work::OpKind::host_memory)
    return op.bytes * std::max(1, host_.gpus_per_host) / (host_.memory_bandwidth_Bps * host_.memory_efficiency);
  double flops_eff = gemm_ceiling_, peak = peak_flops_;
  if (op.kind == work::OpKind::gemm) {
    flops_eff = (op.sixteen_bit ? sixteen_bit_gemm_ceiling_ : gemm_ceiling_) * shape_utilization(op.m, op.n, op.k, op.batch);
    if (op.sixteen_bit) peak = sixteen_bit_peak_flops_;
  }
  if (op.kind == work::OpKind::attention) flops_eff = attention_efficiency(op.phase, op.seq_len), peak = sixteen_bit_peak_flops_;
  const double compute_s = op.work_flops > 0 ? op.work_flops / (peak * flops_eff) : 0;
  const double bandwidth = gpu_.hbm_bandwidth_Bps * memory_efficiency(op);
  // A weight gradient added into the gradient buffer (GPUs): the buffer's read and write after
  // the GEMM, as DeepGEMM's accumulating kernels measure; elsewhere its 16-bit output beside it.
  const bool accumulates = op.accumulated > 0 && gpu_.sms > 0;
  const double output_bytes = accumulates ? 0 : op.accumulated * kSixteenBitBytes;
  const double accumulate_s = accumulates ? op.accumulated * 2 * efficiency_.gradient_bytes / bandwidth : 0;
  const double memory_s = (op.bytes + output_bytes) / bandwidth;
  // The unfused attention core's batched products on GPUs (head_dim-deep products, or the score
  // matrix streamed past a head_dim-wide output): their arithmetic and their bytes one after the
  // other, as PyTorch's attention measures at head dimensions 64 and 128 (roofline.hpp).
  const bool serial = op.kind == work::OpKind::gemm && op.memory_kernel == work::MemoryKernel::attention_core &&
                      gpu_.sms > 0;
  const double roof_s = serial ? compute_s + memory_s : std::max(compute_s, memory_s);
  return efficiency_.kernel_overhead_s * op.kernels + roof_s + accumulate_s;
}

double Roofline::memory_efficiency(const work::Op& op) const {
  // A share the scenario gives holds on any chip. The measured defaults are Megatron-Core's
  // kernels, which GPUs run (the catalog's entries with SMs); TPUs and Neuron cores run their
  // compilers' fusions, not measured: streaming.
  const bool forward = op.phase == work::Phase::forward, gpu = gpu_.sms > 0;
  switch (op.memory_kernel) {
    case work::MemoryKernel::activation:
      if (efficiency_.activation_memory > 0) return efficiency_.activation_memory;
      if (gpu) return forward ? kActivationForwardShare : kActivationBackwardShare;
      break;
    case work::MemoryKernel::loss:
      if (efficiency_.loss_memory > 0) return efficiency_.loss_memory;
      if (gpu) return forward ? kLossForwardShare : kLossBackwardShare;
      break;
    case work::MemoryKernel::attention_core:
      if (efficiency_.attention_memory > 0) return efficiency_.attention_memory;
      if (gpu) return forward ? kAttentionCoreForwardShare : kAttentionCoreBackwardShare;
      break;
    case work::MemoryKernel::streaming: break;
  }
  return efficiency_.memory;
}

double Roofline::ops_seconds(const std::vector<work::Op>& ops) const {
  return std::accumulate(ops.begin(), ops.end(), 0.0,
                         [&](double a, const work::Op& op) { return a + op_seconds(op); });
}

}  // namespace cs::compute
