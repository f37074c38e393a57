// The GPU catalog and roofline op timing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "sim/compute/roofline.hpp"
#include "workloads/training_ops.hpp"

namespace cs::compute {
namespace {

TEST_CASE("the catalog holds the issue's GPUs with dense peaks and memory", "[catalog]") {
  for (const char* name : {"H100-SXM", "H100-PCIe", "H200", "B200", "A100-80GB", "A100-40GB", "MI300X", "L4", "T4",
                           "A10G", "RTX-4090", "RTX-A5000"}) {
    INFO(name);
    const GpuSpec* g = find_gpu(name);
    REQUIRE(g);
    CHECK(half_precision_peak_flops(g->dense_flops) > 0);
    CHECK(g->dense_flops.fp32 > 0);
    CHECK(g->memory_bytes > 0);
    CHECK(g->hbm_bandwidth_Bps > 0);
    CHECK(g->power_w > 0);
    CHECK(g->sms > 0);
    CHECK(g->max_gemm_efficiency > 0.5);
    CHECK(g->max_gemm_efficiency < 1);
  }
  CHECK(find_gpu("h100-sxm") == nullptr);  // exact names
  CHECK(find_gpu("T4")->dense_flops.bf16 == 0);
  CHECK(half_precision_peak_flops(find_gpu("T4")->dense_flops) == 65e12);
  CHECK(dense_peak_flops(find_gpu("H100-SXM")->dense_flops, work::Precision::fp8) == 2 * 989e12 + 1e12);
}

TEST_CASE("the catalog's TPUs, Trainium and Inferentia: published peaks, HBM and ICI links", "[catalog]") {
  struct Row {
    const char* name;
    double bf16, memory, hbm, ici_links, per_chip_bidirectional_Bps;
  };
  // Google Cloud's and AWS Neuron's spec tables (sources in gpu_catalog.cpp). The chip's ICI
  // or NeuronLink rate both ways is what they publish; the catalog holds it per link and direction.
  const Row rows[] = {
      {"TPU-v4", 275e12, 32 * 1073741824.0, 1200e9, 6, 540e9},
      {"TPU-v5e", 197e12, 16e9, 819e9, 4, 400e9},
      {"TPU-v5p", 459e12, 95e9, 2765e9, 6, 1200e9},
      {"TPU-v6e", 918e12, 32e9, 1638e9, 4, 800e9},
      {"Trainium1", 190e12, 32 * 1073741824.0, 820e9, 4, 412e9},
      {"Trainium2", 667e12, 96 * 1073741824.0, 2.9e12, 4, 1280e9},
      {"Inferentia2", 190e12, 32 * 1073741824.0, 820e9, 2, 206e9},
  };
  for (const Row& r : rows) {
    INFO(r.name);
    const GpuSpec* g = find_gpu(r.name);
    REQUIRE(g);
    CHECK(g->dense_flops.bf16 == r.bf16);
    CHECK(half_precision_peak_flops(g->dense_flops) == r.bf16);
    CHECK(g->memory_bytes == r.memory);
    CHECK(g->hbm_bandwidth_Bps == r.hbm);
    CHECK(g->ici_links == r.ici_links);
    CHECK(2 * g->ici_links * g->ici_link_Bps == Approx(r.per_chip_bidirectional_Bps));
    CHECK(g->nvlink_bandwidth_Bps == Approx(g->ici_links * g->ici_link_Bps));
    CHECK(g->sms == 0);  // no SM waves: GEMMs run at the ceiling
  }
  CHECK(find_gpu("TPU-v5e")->dense_flops.fp16 == 0);  // TPUs: bf16, no fp16
  CHECK(dense_peak_flops(find_gpu("TPU-v5p")->dense_flops, work::Precision::fp8) == 459e12);
  CHECK(dense_peak_flops(find_gpu("Trainium2")->dense_flops, work::Precision::fp8) == 1299e12);
  CHECK(find_gpu("TPU-v6e")->dense_flops.int8 == 1836e12);
  CHECK(find_gpu("MI325X")->memory_bytes == 256e9);
  CHECK(find_gpu("MI325X")->dense_flops.bf16 == find_gpu("MI300X")->dense_flops.bf16);
}

TEST_CASE("NeuronCore-v2's GEMM ceiling is the NKI tutorial's measured matmul", "[catalog]") {
  // AWS's NKI matrix-multiplication tutorial: [4096, 8192] x [8192, 8192] in BF16 in 6.97 ms on
  // one NeuronCore-v2 of a trn1.32xlarge; a core is half the chip's 190 TFLOP/s. Inferentia2 has
  // the same cores; Trainium2's NeuronCore-v3 has no measurement and keeps the default.
  const double achieved = 2.0 * 4096 * 8192 * 8192 / 6.97e-3;
  CHECK(achieved == Approx(78.87e12).epsilon(1e-3));
  for (const char* chip : {"Trainium1", "Inferentia2"}) {
    INFO(chip);
    const GpuSpec& g = *find_gpu(chip);
    CHECK(g.max_gemm_efficiency == Approx(achieved / (g.dense_flops.bf16 / 2)).epsilon(1e-3));
    // sms 0: no wave quantization, so a large GEMM of any shape runs at the ceiling.
    CHECK(Roofline(g, work::Precision::bf16).gemm_efficiency(4096, 8192, 8192) == Approx(0.830));
  }
  CHECK(find_gpu("Trainium2")->max_gemm_efficiency == 0.80);
}

TEST_CASE("every catalog entry's stack fields: TPUs, Neuron chips and GPUs each their own", "[catalog]") {
  // The catalog is positional: a field added at the struct's end must reach each family as
  // intended. TPUs: tp overlap, the measured 0.86 HBM share, XLA's collectives; Neuron: no tp
  // overlap, no measured share, CCOM's costs; every GPU: the struct's defaults.
  int tpus = 0, neuron = 0, gpus = 0;
  for (const GpuSpec& g : gpu_catalog()) {
    INFO(g.name);
    const std::string_view arch = g.arch;
    if (arch.starts_with("tpu_")) {
      ++tpus;
      CHECK(g.overlaps_tp_comm);
      CHECK(g.hbm_efficiency == 0.86);
      CHECK(g.collective_library == net::CollectiveLibrary::xla);
    } else if (arch.starts_with("neuron_")) {
      ++neuron;
      CHECK_FALSE(g.overlaps_tp_comm);
      CHECK(g.hbm_efficiency == 0);
      CHECK(g.collective_library == net::CollectiveLibrary::neuron_ccom);
    } else {
      ++gpus;
      CHECK(g.overlaps_tp_comm);
      CHECK(g.hbm_efficiency == 0);
      CHECK(g.collective_library == net::CollectiveLibrary::nccl);
      CHECK(g.mesh == topo::NodeMesh::full);
    }
  }
  CHECK(tpus == 4);
  CHECK(neuron == 3);
  CHECK(gpus == 16);
}

work::Op gemm(double m, double n, double k) {
  work::Op op;
  op.name = "g";
  op.kind = work::OpKind::gemm;
  op.m = m, op.n = n, op.k = k;
  op.flops = op.work_flops = 2 * m * n * k;
  op.bytes = 2 * (m * k + k * n + m * n);
  return op;
}

TEST_CASE("large GEMMs reach the measured ceiling, small ones less", "[roofline]") {
  const GpuSpec& h100 = *find_gpu("H100-SXM");
  const Roofline r(h100, work::Precision::bf16);
  CHECK(r.peak_flops() == 989e12);
  // 132 SMs: 8448 x 8192 is 66 x 64 = 4224 tiles = 32 full waves.
  CHECK(r.gemm_efficiency(8448, 8192, 8192) == Approx(0.803));
  const auto big = gemm(8448, 8192, 8192);
  CHECK(r.op_seconds(big) == Approx(1e-6 + big.flops / (989e12 * 0.803)));  // + the launch gap
  // One tile row short of a full wave, a 129-wide edge: tile and wave quantization.
  CHECK(r.gemm_efficiency(129, 128 * 132, 4096) == Approx(0.803 * (129.0 / 256) * 1.0));
  CHECK(r.gemm_efficiency(128 * 133, 128, 4096) == Approx(0.803 * 133.0 / 264));
  // Fewer tiles than SMs: K is split to fill the GPU, as far as K allows.
  CHECK(r.gemm_efficiency(1024, 1024, 64 * 1024) == Approx(0.803 * (64 * 2.0) / 132));
  CHECK(r.gemm_efficiency(1024, 1024, 512) == Approx(0.803 * 64.0 / 132));
  // Shape-blind when asked.
  Efficiency flat;
  flat.gemm_shape_aware = false;
  CHECK(Roofline(h100, work::Precision::bf16, flat).gemm_efficiency(1, 1, 1) == Approx(0.803));
}

TEST_CASE("A100 fp16 GEMMs by size against NVIDIA's cuBLAS 11.0 measurement", "[roofline]") {
  // NVIDIA developer blog, "CUDA 11 Features Revealed" (2020), Figure 6, "Mixed-precision matrix
  // multiply on A100 with cuBLAS": FP16 Tensor Core TFLOP/s for m = n = k, read off the figure by
  // the markers' pixel positions (about +-3 TFLOP/s). From 2,048 up the catalog's ceiling (0.869)
  // and tile and wave quantization over 108 SMs give these rates within 10% (0.900 at 2,304);
  // the largest GEMMs run faster than the model (x1.075 at 8,192). Below 2,048 the model is
  // optimistic (1,024: 88 measured, 161 simulated), a size no GEMM of the replayed A100 rows reaches.
  const Roofline r(*find_gpu("A100-80GB"), work::Precision::fp16);
  const std::map<int, double> measured_tflops{
      {2048, 194}, {2304, 244}, {2560, 231}, {2816, 238}, {3072, 235}, {3328, 247}, {3840, 258}, {4096, 258},
      {4608, 276}, {4864, 265}, {5120, 260}, {5376, 258}, {5632, 281}, {5888, 277}, {6144, 277}, {6400, 276},
      {6656, 276}, {6912, 279}, {7168, 280}, {7424, 282}, {7680, 284}, {7936, 287}, {8192, 291}};
  double total_error = 0;
  for (const auto& [size, tflops] : measured_tflops) {
    INFO(size);
    const double simulated_tflops = 312 * r.gemm_efficiency(size, size, size);
    const double ratio = tflops / simulated_tflops;
    CHECK(ratio > 0.89);
    CHECK(ratio < 1.10);
    total_error += std::abs(ratio - 1);
  }
  CHECK(total_error / measured_tflops.size() < 0.06);  // 4.7% today
  // The small end: 64 tiles on 108 SMs (two K splits would be 128 blocks, past one wave): 64 / 108.
  CHECK(312 * r.gemm_efficiency(1024, 1024, 1024) == Approx(312 * 0.869 * 64 / 108));  // 160.7
}

// Hugging Face's LlamaMLP (hidden 4,096, FFN 11,008, bf16, no biases) on `tokens` tokens, as
// PyTorch runs it: three GEMMs and two element-wise kernels forward (the activation, 2 + 2 bytes
// per FFN element; the gate-up product, 4 + 2); backward each GEMM's input and weight gradients,
// the product's backward (6 + 4 bytes), the activation's (4 + 2), the two input gradients added
// (4 + 2 per hidden element) and autograd adding each weight gradient into the one it holds
// (4 + 2 per weight element: the benchmark resets the input's gradient only).
std::vector<work::Op> llama_mlp_ops(double tokens, work::Phase phase) {
  const double h = 4096, f = 11008;
  auto elementwise = [](double bytes) {
    work::Op op;
    op.name = "e";
    op.kind = work::OpKind::elementwise;
    op.bytes = bytes;
    return op;
  };
  if (phase == work::Phase::forward)
    return {gemm(tokens, f, h), gemm(tokens, f, h), elementwise(tokens * f * 4), elementwise(tokens * f * 6),
            gemm(tokens, h, f)};
  return {gemm(tokens, f, h),  gemm(f, h, tokens),  elementwise(tokens * f * 10), elementwise(tokens * f * 6),
          gemm(tokens, h, f),  gemm(h, f, tokens),  gemm(tokens, h, f),           gemm(h, f, tokens),
          elementwise(tokens * h * 6), elementwise(3 * h * f * 6)};
}

TEST_CASE("an A100 Llama MLP forward and backward against Liger-Kernel's measurement", "[roofline]") {
  // linkedin/Liger-Kernel, benchmark/data/all_benchmark_data.csv, provider "huggingface" on an
  // A100-SXM4-80GB (Liger-Kernel 0.2.1, 2024-09-03; benchmark_geglu.py and benchmark_swiglu.py:
  // transformers' LlamaMLP, triton.testing.do_bench medians), ms: "geglu" (GELU tanh) at batch 8
  // forward and backward, "swiglu" (SiLU) at batch 4 forward, by sequence length. GEMMs are 94% of
  // the modelled time; the model is 2-7% fast on every point.
  const Roofline r(*find_gpu("A100-80GB"), work::Precision::bf16);
  struct Point {
    double tokens;
    work::Phase phase;
    double measured_ms;
  };
  const std::vector<Point> points{
      {8 * 1024, work::Phase::forward, 9.2574},   {8 * 2048, work::Phase::forward, 18.0995},
      {8 * 4096, work::Phase::forward, 36.3726},  {8 * 8192, work::Phase::forward, 72.6655},
      {8 * 1024, work::Phase::backward_input, 18.5217}, {8 * 2048, work::Phase::backward_input, 36.0454},
      {8 * 4096, work::Phase::backward_input, 72.8841}, {8 * 8192, work::Phase::backward_input, 144.2132},
      {4 * 1024, work::Phase::forward, 4.5823},   {4 * 2048, work::Phase::forward, 9.2528},
      {4 * 4096, work::Phase::forward, 18.1603},  {4 * 8192, work::Phase::forward, 36.2911}};
  for (const auto& p : points) {
    INFO(p.tokens << " tokens, " << to_string(p.phase));
    const double ratio = p.measured_ms / (1e3 * r.ops_seconds(llama_mlp_ops(p.tokens, p.phase)));
    CHECK(ratio > 1.0);
    CHECK(ratio < 1.07);
  }
}

TEST_CASE("row-parallel GEMMs by inner dimension against Vidur's A100 and H100 profiles", "[roofline]") {
  // microsoft/vidur, data/profiling/compute/{a100,h100}/<model>/mlp.csv (commits bee57da and
  // e26eb8f, May 2024; MIT): each linear layer of a model's forward timed as the sum of its CUDA
  // kernels' durations in PyTorch's profiler, median over 20 layers, fp16, one GPU holding one
  // tensor-parallel rank's shard. Here the two row-parallel GEMMs at 4,096 tokens: the attention
  // output projection (N = hidden, K = hidden / tp) and the MLP's down projection (N = hidden,
  // K = FFN / tp) of Llama 2 70B (hidden 8,192, FFN 28,672) and InternLM 20B (5,120, 13,824),
  // tp 1, 2, 4, 8: K from 640 to 28,672 at fixed M and N. The model's rate does not depend on K
  // here (every shape fills whole waves of tiles), and the measurement shows no trend with K either:
  // it varies by shape (cuBLAS's kernel choice) within the ranges below, the shortest K (640, the
  // 22B layer's 768 is the nearest) inside the A100's range and 13% under the H100's mean.
  // The A100 profile does not say which A100 ran it (its docs use it for both a PCIe and an SXM
  // node); H100's is a DGX H100 (SXM).
  struct Point {
    double n, k, measured_ms;
  };
  auto check = [](const char* gpu, const std::vector<Point>& points, double lo, double hi, double mean) {
    const GpuSpec& spec = *find_gpu(gpu);
    const Roofline r(spec, work::Precision::fp16);
    const double peak = half_precision_peak_flops(spec.dense_flops);
    double sum = 0;
    for (const auto& p : points) {
      INFO(gpu << " N " << p.n << " K " << p.k);
      const double measured_flops = 2 * 4096 * p.n * p.k / (p.measured_ms * 1e-3);
      const double ratio = measured_flops / (peak * r.gemm_efficiency(4096, p.n, p.k));
      CHECK(r.gemm_efficiency(4096, p.n, p.k) == Approx(r.gemm_efficiency(4096, p.n, 28672)));  // flat in K
      CHECK(ratio > lo);
      CHECK(ratio < hi);
      sum += ratio;
    }
    CHECK(sum / points.size() == Approx(mean).margin(0.01));
  };
  // Llama 2 70B's output projection and down projection, then InternLM 20B's, tp 1, 2, 4, 8.
  check("A100-80GB",
        {{8192, 8192, 2.3770}, {8192, 4096, 1.2760}, {8192, 2048, 0.7160}, {8192, 1024, 0.2960},
         {8192, 28672, 8.0635}, {8192, 14336, 4.0055}, {8192, 7168, 1.9810}, {8192, 3584, 1.0475},
         {5120, 5120, 0.9015}, {5120, 2560, 0.5380}, {5120, 1280, 0.2330}, {5120, 640, 0.1280},
         {5120, 13824, 2.3470}, {5120, 6912, 1.1710}, {5120, 3456, 0.6310}, {5120, 1728, 0.2900}},
        0.70, 0.94, 0.853);
  check("H100-SXM",
        {{8192, 8192, 0.7885}, {8192, 4096, 0.4045}, {8192, 2048, 0.1990}, {8192, 1024, 0.0940},
         {8192, 28672, 2.6470}, {8192, 14336, 1.3040}, {8192, 7168, 0.5635}, {8192, 3584, 0.2960},
         {5120, 5120, 0.2955}, {5120, 2560, 0.1520}, {5120, 1280, 0.0720}, {5120, 640, 0.0420},
         {5120, 13824, 0.7810}, {5120, 6912, 0.3970}, {5120, 3456, 0.1820}, {5120, 1728, 0.0920}},
        0.82, 1.12, 0.958);
}

TEST_CASE("weight-gradient GEMMs add the gradient buffer's read and write after their own time", "[roofline]") {
  work::TrainingWorkload w;
  w.model.layers = 2, w.model.hidden = 4096, w.model.heads = 32, w.model.vocab = 32768, w.model.seq_len = 2048;
  w.precision = work::Precision::fp8;
  const auto mlp = work::block_ops(w, work::Block::mlp, work::Phase::backward_weight);
  const auto fc1 = *std::find_if(mlp.begin(), mlp.end(), [](const work::Op& o) { return o.name == "fc1"; });
  // dW = X^T dY: 4096 x 16384 weight-gradient elements over 2,048 tokens; its bytes are its
  // operands', the gradient it adds into apart.
  CHECK(fc1.accumulated == 4096.0 * 16384);
  CHECK(fc1.bytes == (4096.0 * 2048 + 2048.0 * 16384) * 1);
  // Forward and input-gradient GEMMs write their 16-bit output inside the max, as before.
  const auto fwd = work::block_ops(w, work::Block::mlp, work::Phase::forward);
  const auto fc1_fwd = *std::find_if(fwd.begin(), fwd.end(), [](const work::Op& o) { return o.name == "fc1"; });
  CHECK(fc1_fwd.accumulated == 0);
  CHECK(fc1_fwd.bytes == (2048.0 * 4096 + 4096.0 * 16384) * 1 + 2048.0 * 16384 * 2);
  // H100 (fp8): the GEMM at the ceiling, then gradient_bytes read and written per element at
  // 0.85 of HBM bandwidth.
  const GpuSpec& h100 = *find_gpu("H100-SXM");
  Efficiency fp32_grads;
  fp32_grads.gradient_bytes = 4;
  const Roofline fp8(h100, work::Precision::fp8, fp32_grads);
  const double gemm_s = fc1.work_flops / (1979e12 * fp8.gemm_efficiency(4096, 16384, 2048));
  CHECK(fp8.op_seconds(fc1) == Approx(1e-6 + gemm_s + 4096.0 * 16384 * 8 / (3.35e12 * 0.85)));
  CHECK(Roofline(h100, work::Precision::fp8).op_seconds(fc1) ==
        Approx(1e-6 + gemm_s + 4096.0 * 16384 * 4 / (3.35e12 * 0.85)));  // 16-bit gradients (the default)
  // DeepGEMM's fp8 weight-gradient kernel accumulating into fp32 (deepseek-ai/DeepGEMM pull
  // request 95, H800 SXM5): 7168 x 4096 at K = 4,096, 942 TFLOP/s measured; 16384 x 7168,
  // 994: the model within 6% (tile and wave quantization included). The ceiling's time alone
  // would give 1,403. The match pairs the model's ceiling with a wholly exposed pass; DeepGEMM's
  // own non-accumulating kernels run below that ceiling, so this bounds the cost from above
  // (roofline.hpp).
  for (auto [m, n, measured] : {std::tuple{7168.0, 4096.0, 942e12}, std::tuple{16384.0, 7168.0, 994e12}}) {
    auto op = gemm(m, n, 4096);
    op.phase = work::Phase::backward_weight;
    op.bytes = m * 4096 + 4096 * n;
    op.accumulated = m * n;
    Efficiency flat = fp32_grads;
    flat.kernel_overhead_s = 0;
    const double rate = op.work_flops / Roofline(h100, work::Precision::fp8, flat).op_seconds(op);
    CHECK(rate == Approx(measured).epsilon(0.06));
  }
  // A TPU's compiler-made gradients: the 16-bit output inside the max, nothing after it.
  const GpuSpec& tpu = *find_gpu("TPU-v5p");
  w.precision = work::Precision::bf16;
  const auto tpu_fc1 = work::block_ops(w, work::Block::mlp, work::Phase::backward_weight);
  const auto t = *std::find_if(tpu_fc1.begin(), tpu_fc1.end(), [](const work::Op& o) { return o.name == "fc1"; });
  const Roofline on_tpu(tpu, work::Precision::bf16);
  const double t_compute = t.work_flops / (tpu.dense_flops.bf16 * on_tpu.gemm_efficiency(4096, 16384, 2048));
  const double t_memory = (t.bytes + t.accumulated * 2) / (tpu.hbm_bandwidth_Bps * 0.85);
  CHECK(on_tpu.op_seconds(t) == Approx(1e-6 + std::max(t_compute, t_memory)));
}

TEST_CASE("memory-bound ops take bytes at the HBM bandwidth's achievable share", "[roofline]") {
  const GpuSpec& a100 = *find_gpu("A100-80GB");
  const Roofline r(a100, work::Precision::bf16);
  work::Op op;
  op.name = "act";
  op.kind = work::OpKind::elementwise;
  op.bytes = 1e9;
  CHECK(r.op_seconds(op) == Approx(1e-6 + 1e9 / (2.039e12 * 0.85)));
  // A skinny GEMM is memory-bound: its bytes decide.
  const auto skinny = gemm(8, 8192, 8192);
  CHECK(r.op_seconds(skinny) == Approx(1e-6 + skinny.bytes / (2.039e12 * 0.85)));
  // Attention's forward at long sequences runs at cuDNN's 16K share of H100's GEMM ceiling
  // (539 / 989 over 0.803), its backward at 0.8 of that.
  work::Op attn;
  attn.kind = work::OpKind::attention;
  attn.work_flops = 1e12;
  const double long_share = 539.0 / 989.0 / 0.803;
  // The share is taken over the H100 entry's own ceiling (one constant for both).
  CHECK(find_gpu("H100-SXM")->max_gemm_efficiency == kH100SxmGemmCeiling);
  CHECK(find_gpu("H100-SXM")->max_fp8_gemm_efficiency == kH100SxmFp8GemmCeiling);
  CHECK(r.op_seconds(attn) == Approx(1e-6 + 1e12 / (312e12 * long_share * 0.869)));
  attn.phase = work::Phase::backward_input;
  CHECK(r.op_seconds(attn) == Approx(1e-6 + 1e12 / (312e12 * 0.8 * long_share * 0.869)));
  // The launch gap is an option; a zero-work kernel costs just that.
  Efficiency no_gap;
  no_gap.kernel_overhead_s = 0;
  CHECK(Roofline(a100, work::Precision::bf16, no_gap).op_seconds(op) == Approx(1e9 / (2.039e12 * 0.85)));
  work::Op empty;
  CHECK(r.op_seconds(empty) == Approx(1e-6));
}

TEST_CASE("measured times replace the roofline; a missing precision is an input error", "[roofline]") {
  Efficiency e;
  e.measured_s["forward/g"] = 1.5e-3;
  const Roofline r(*find_gpu("H100-SXM"), work::Precision::bf16, e);
  CHECK(r.op_seconds(gemm(8192, 8192, 8192)) == 1.5e-3);
  auto backward = gemm(8192, 8192, 8192);
  backward.phase = work::Phase::backward_input;
  CHECK(r.op_seconds(backward) != 1.5e-3);
  try {
    Roofline(*find_gpu("A100-80GB"), work::Precision::fp8);
    FAIL("A100 has no fp8");
  } catch (const work::TrainingError& err) {
    CHECK(err.key() == "precision");
  }
  CHECK_THROWS_AS(Roofline(*find_gpu("T4"), work::Precision::bf16), work::TrainingError);
  // fp8: GEMMs at the fp8 peak with their own measured ceiling, the attention core at the
  // 16-bit peak; GPUs without an fp8 measurement take the H100's fp8-to-bf16 ratio.
  const Roofline fp8(*find_gpu("H100-SXM"), work::Precision::fp8);
  CHECK(fp8.peak_flops() == 1979e12);
  CHECK(fp8.gemm_ceiling() == 0.709);
  CHECK(fp8.gemm_efficiency(8448, 8192, 8192) == Approx(0.709));
  CHECK(Roofline(*find_gpu("H200"), work::Precision::fp8).gemm_ceiling() == 0.734);  // measured
  CHECK(Roofline(*find_gpu("H100-PCIe"), work::Precision::fp8).gemm_ceiling() == Approx(0.80 * 0.709 / 0.803));
  CHECK(Roofline(*find_gpu("H100-SXM"), work::Precision::bf16).gemm_ceiling() == 0.803);
  work::Op attn;
  attn.kind = work::OpKind::attention;
  attn.work_flops = 1e12;
  CHECK(fp8.op_seconds(attn) == Approx(1e-6 + 1e12 / (989e12 * 539.0 / 989.0)));
  CHECK_NOTHROW(Roofline(*find_gpu("T4"), work::Precision::fp16));
}

TEST_CASE("flash attention runs at the measured rate of its sequence length", "[roofline]") {
  // On the H100 the forward's efficiency is cuDNN's measured rate over the 989 TFLOP/s peak
  // (FlashAttention-3's Figure 5, causal, head dimension 128) at each measured length.
  const Roofline h100(*find_gpu("H100-SXM"), work::Precision::bf16);
  const std::map<double, double> measured{{512, 315}, {1024, 410}, {2048, 484}, {4096, 518}, {8192, 529}, {16384, 539}};
  for (const auto& [length, tflops] : measured) {
    CAPTURE(length);
    CHECK(h100.attention_efficiency(work::Phase::forward, length) == Approx(tflops / 989));
    CHECK(h100.attention_efficiency(work::Phase::backward_input, length) == Approx(0.8 * tflops / 989));
  }
  // Log-linear between the points; the end points beyond them; an unknown length is long.
  CHECK(h100.attention_efficiency(work::Phase::forward, 1448.15) == Approx((410 + 484) / 2.0 / 989).epsilon(1e-4));
  CHECK(h100.attention_efficiency(work::Phase::forward, 128) == Approx(315.0 / 989));
  CHECK(h100.attention_efficiency(work::Phase::forward, 131072) == Approx(539.0 / 989));
  CHECK(h100.attention_efficiency(work::Phase::forward, 0) == Approx(539.0 / 989));
  // An efficiency override is the kernel's measured rate: flat over lengths.
  Efficiency flat;
  flat.attention = 0.5;
  const Roofline overridden(*find_gpu("H100-SXM"), work::Precision::bf16, flat);
  CHECK(overridden.attention_efficiency(work::Phase::forward, 1024) == 0.5);
  // A training op carries its kernel's length: a sequence's queries on the rank (seq / cp).
  work::TrainingWorkload w;
  w.model.layers = 2, w.model.hidden = 1024, w.model.heads = 8, w.model.vocab = 32000, w.model.seq_len = 8192;
  w.parallel.cp = 2;
  const auto ops = work::block_ops(w, work::Block::attention_out, work::Phase::forward);
  const auto attention = std::find_if(ops.begin(), ops.end(), [](const work::Op& op) { return op.kind == work::OpKind::attention; });
  REQUIRE(attention != ops.end());
  CHECK(attention->seq_len == 4096);
}

TEST_CASE("fp8 casts: 4 bytes per element under delayed scaling, 6 under current scaling", "[roofline]") {
  work::TrainingWorkload w;
  w.model.layers = 2, w.model.hidden = 4096, w.model.heads = 32, w.model.vocab = 32000, w.model.seq_len = 2048;
  w.model.ffn_hidden = 16384;
  w.precision = work::Precision::fp8;
  auto cast_bytes = [&](work::Phase phase) {
    double bytes = 0;
    for (const auto& op : work::block_ops(w, work::Block::mlp, phase))
      if (op.name == "fp8_cast") bytes += op.bytes;
    return bytes;
  };
  // fc1's input (2048 x 4096) and fc2's (2048 x 16384) forward; their output gradients backward.
  CHECK(cast_bytes(work::Phase::forward) == 2048.0 * (4096 + 16384) * 4);
  CHECK(cast_bytes(work::Phase::backward_input) == 2048.0 * (16384 + 4096) * 4);
  w.fp8_recipe = work::Fp8Recipe::current;  // one more 16-bit read for the amax
  CHECK(cast_bytes(work::Phase::forward) == 2048.0 * (4096 + 16384) * 6);
  CHECK(cast_bytes(work::Phase::backward_input) == 2048.0 * (16384 + 4096) * 6);
}

TEST_CASE("an fp8 run's LM head stays in 16 bits: no cast, the 16-bit peak and ceiling", "[roofline]") {
  work::TrainingWorkload w;
  w.model.layers = 2, w.model.hidden = 4096, w.model.heads = 32, w.model.vocab = 128 * 1024, w.model.seq_len = 4096;
  w.precision = work::Precision::fp8;
  const auto head = work::block_ops(w, work::Block::head, work::Phase::forward);
  const auto mlp = work::block_ops(w, work::Block::mlp, work::Phase::forward);
  auto named = [](const std::vector<work::Op>& ops, std::string_view name) {
    return std::count_if(ops.begin(), ops.end(), [&](const work::Op& o) { return o.name == name; });
  };
  CHECK(named(head, "fp8_cast") == 0);  // the LM head's input is not cast
  CHECK(named(mlp, "fp8_cast") == 2);   // fc1's and fc2's are
  const auto lm_head = *std::find_if(head.begin(), head.end(), [](const work::Op& o) { return o.name == "lm_head"; });
  const auto fc1 = *std::find_if(mlp.begin(), mlp.end(), [](const work::Op& o) { return o.name == "fc1"; });
  CHECK(lm_head.sixteen_bit);
  CHECK_FALSE(fc1.sixteen_bit);
  // The LM head takes what it takes in a bf16 run; fc1 runs at the fp8 peak and ceiling.
  const Roofline fp8(*find_gpu("H100-SXM"), work::Precision::fp8);
  const Roofline bf16_run(*find_gpu("H100-SXM"), work::Precision::bf16);
  CHECK(fp8.op_seconds(lm_head) == Approx(bf16_run.op_seconds(lm_head)));
  const double lm_head_efficiency = bf16_run.gemm_efficiency(4096, 131072, 4096);
  CHECK(fp8.op_seconds(lm_head) == Approx(1e-6 + lm_head.work_flops / (989e12 * lm_head_efficiency)));
  CHECK(fp8.op_seconds(fc1) == Approx(1e-6 + fc1.work_flops / (1979e12 * fp8.gemm_efficiency(4096, 16384, 4096))));
  // In a bf16 run every GEMM is 16-bit, and an `efficiency.gemm` override applies to all.
  w.precision = work::Precision::bf16;
  Efficiency e;
  e.gemm = 0.5;
  e.gemm_shape_aware = false;
  const Roofline bf16(*find_gpu("H100-SXM"), work::Precision::bf16, e);
  const auto head16 = work::block_ops(w, work::Block::head, work::Phase::forward);
  const auto lm16 = *std::find_if(head16.begin(), head16.end(), [](const work::Op& o) { return o.name == "lm_head"; });
  CHECK(bf16.op_seconds(lm16) == Approx(1e-6 + lm16.work_flops / (989e12 * 0.5)));
}

TEST_CASE("context parallelism: ring attention's kernels per step and its merges' bytes", "[roofline]") {
  // Transformer Engine's ring over cp ranks: one flash-attention kernel per step; forward merges
  // the first step's output (4 bytes per element) and each later step's (6 bytes, on average
  // over the ranks 0.75 of a whole block), backward adds each later step's dQ and dK, dV.
  work::TrainingWorkload w;
  w.model.layers = 2, w.model.hidden = 4096, w.model.heads = 32, w.model.kv_heads = 8, w.model.vocab = 32000;
  w.model.seq_len = 8192;
  auto merge_of = [&](work::Phase phase) {
    work::Op merge;
    for (const auto& op : work::block_ops(w, work::Block::attention_out, phase)) {
      if (op.kind == work::OpKind::attention) CHECK(op.kernels == w.parallel.cp);
      if (op.name == "cp_merge") merge = op;
    }
    return merge;
  };
  CHECK(merge_of(work::Phase::forward).bytes == 0);  // no context parallelism: no merge
  w.parallel.cp = 4;
  const double tokens = 8192.0 / 4, queries = tokens * 4096, keys_values = 2 * tokens * 8 * 128;
  const auto forward = merge_of(work::Phase::forward);
  CHECK(forward.bytes == Approx((4 + 6 * 0.75 * 3) * queries));
  CHECK(forward.kernels == 7);  // the first step's, and each later step's output and LSE merges
  const auto backward = merge_of(work::Phase::backward_input);
  CHECK(backward.bytes == Approx(6 * 0.75 * 3 * (queries + keys_values)));
  CHECK(backward.kernels == 6);
  // Each kernel pays the launch gap; the merges run at the HBM's achievable bandwidth.
  const Roofline h100(*find_gpu("H100-SXM"), work::Precision::bf16);
  CHECK(h100.op_seconds(forward) == Approx(7e-6 + forward.bytes / (3.35e12 * 0.85)));
  // The steps' FLOPs are the causal half, as without the ring.
  double ring_flops = 0;
  for (const auto& op : work::block_ops(w, work::Block::attention_out, work::Phase::forward))
    if (op.kind == work::OpKind::attention) ring_flops = op.flops;
  CHECK(ring_flops == Approx(4 * tokens * 8192 * 4096 * 0.5));
}

TEST_CASE("the activation and the loss stream at Megatron's measured kernels' shares", "[roofline]") {
  // Megatron's fused bias-SwiGLU and fused cross-entropy on H100 SXM (Liger-Kernel's benchmark
  // data): 0.55 and 0.23 of HBM bandwidth (forward, backward), 0.33 and 0.40; other
  // element-wise kernels 0.85.
  work::TrainingWorkload w;
  w.model.layers = 2, w.model.hidden = 4096, w.model.heads = 32, w.model.kv_heads = 8, w.model.vocab = 32000;
  w.model.ffn_hidden = 14336, w.model.mlp = work::MlpKind::swiglu, w.model.seq_len = 4096;
  auto find = [&](work::Block block, work::Phase phase, std::string_view name) {
    for (const auto& op : work::block_ops(w, block, phase))
      if (op.name == name) return op;
    FAIL("no op " << name);
    return work::Op{};
  };
  const GpuSpec& h100 = *find_gpu("H100-SXM");
  const Roofline r(h100, work::Precision::bf16);
  const auto act = find(work::Block::mlp, work::Phase::forward, "act");
  CHECK(act.memory_kernel == work::MemoryKernel::activation);
  CHECK(act.bytes == Approx(6 * 4096.0 * 14336));  // read the gate and up halves, write the product
  CHECK(r.op_seconds(act) == Approx(1e-6 + act.bytes / (3.35e12 * 0.55)));
  const auto act_back = find(work::Block::mlp, work::Phase::backward_input, "act");
  CHECK(r.op_seconds(act_back) == Approx(1e-6 + act_back.bytes / (3.35e12 * 0.23)));
  const auto loss = find(work::Block::head, work::Phase::forward, "loss");
  CHECK(loss.memory_kernel == work::MemoryKernel::loss);
  CHECK(r.op_seconds(loss) == Approx(1e-6 + 12 * 4096.0 * 32000 / (3.35e12 * 0.33)));
  const auto loss_back = find(work::Block::head, work::Phase::backward_input, "loss");
  CHECK(r.op_seconds(loss_back) == Approx(1e-6 + 8 * 4096.0 * 32000 / (3.35e12 * 0.40)));
  const auto norm = find(work::Block::mlp, work::Phase::forward, "norm");
  CHECK(norm.memory_kernel == work::MemoryKernel::streaming);
  CHECK(r.op_seconds(norm) == Approx(1e-6 + norm.bytes / (3.35e12 * 0.85)));
  // Overrides: one share for both phases.
  Efficiency given;
  given.activation_memory = 0.7, given.loss_memory = 0.6;
  const Roofline o(h100, work::Precision::bf16, given);
  CHECK(o.op_seconds(act_back) == Approx(1e-6 + act_back.bytes / (3.35e12 * 0.7)));
  CHECK(o.op_seconds(loss) == Approx(1e-6 + loss.bytes / (3.35e12 * 0.6)));
  // A TPU runs XLA's fusions, not Megatron's kernels: its activation streams at `memory`.
  const GpuSpec& tpu = *find_gpu("TPU-v5p");
  CHECK(Roofline(tpu, work::Precision::bf16).op_seconds(act) ==
        Approx(1e-6 + act.bytes / (tpu.hbm_bandwidth_Bps * 0.85)));
  // but a share the scenario gives holds there too.
  CHECK(Roofline(tpu, work::Precision::bf16, given).op_seconds(act) ==
        Approx(1e-6 + act.bytes / (tpu.hbm_bandwidth_Bps * 0.7)));
  CHECK(Roofline(tpu, work::Precision::bf16, given).op_seconds(loss) ==
        Approx(1e-6 + loss.bytes / (tpu.hbm_bandwidth_Bps * 0.6)));
}

TEST_CASE("the optimizer step: each optimizer's passes over HBM", "[roofline]") {
  using work::OptimizerKind;
  const auto bytes = [](OptimizerKind k, double g, bool fp16, double updated, double buffer) {
    return work::optimizer_op({k, g, fp16}, updated, buffer).bytes;
  };
  // Megatron (Float16OptimizerWithFloat16Params, DistributedOptimizer): fp32 copy of the 16-bit
  // gradient (2 + 4), fp16's unscale in place (4 + 4), the norm (4), FusedAdam (16 + 12), the
  // master weights to the 16-bit ones (4 + 2): 52 bytes with fp16, 44 with bf16; the gradient
  // buffer zeroed (2 per local parameter).
  CHECK(bytes(OptimizerKind::megatron, 2, true, 1e9, 1e9) == Approx(1e9 * (6 + 8 + 4 + 28 + 6 + 2)));
  CHECK(bytes(OptimizerKind::megatron, 2, false, 1e9, 1e9) == Approx(1e9 * (6 + 4 + 28 + 6 + 2)));
  // ZeRO-1 over 8: the passes over the shard, the zeroing over the whole buffer.
  CHECK(bytes(OptimizerKind::megatron, 2, false, 1e9 / 8, 1e9) == Approx(1e9 / 8 * 44 + 1e9 * 2));
  // An fp32 buffer is the main gradient itself (no copy) and is zeroed in 4 bytes.
  CHECK(bytes(OptimizerKind::megatron, 4, false, 1e9, 1e9) == Approx(1e9 * (4 + 28 + 6 + 4)));
  // Per-parameter gradients (Megatron-LM 2021): dropped after the step, not zeroed.
  CHECK(bytes(OptimizerKind::megatron_no_grad_buffer, 2, true, 1e9, 1e9) == Approx(1e9 * 52));
  // One fused update: Adam reads the gradient and the fp32 master, momentum and variance and
  // writes them and the 16-bit weights (2 + 12 + 12 + 2 bytes with 2-byte gradients); the
  // clipping norm reads the gradient once more; fp16's loss scale reads and writes it.
  CHECK(bytes(OptimizerKind::fused, 2, false, 1e9, 1e9) == Approx(1e9 * (2 + 12 + 12 + 2 + 2)));
  CHECK(bytes(OptimizerKind::fused, 4, false, 1e9, 1e9) == Approx(1e9 * (4 + 12 + 12 + 2 + 4)));
  CHECK(bytes(OptimizerKind::fused, 2, true, 1e9, 1e9) == Approx(1e9 * (2 + 12 + 12 + 2 + 2 + 4)));
  CHECK(work::host_optimizer_op(1e9, 2, true).bytes == bytes(OptimizerKind::fused, 2, true, 1e9, 0));
}

}  // namespace
}  // namespace cs::compute
