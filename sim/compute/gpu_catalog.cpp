#include "sim/compute/gpu_catalog.hpp"

#include <array>

namespace cs::compute {
namespace {

using topo::NodeFabric;

// Dense rates: datasheets quote tensor rates "with sparsity" (marked *); the dense rate is half.
//
// max_gemm_efficiency: the Maximum Achievable Matmul FLOPS (MAMF) table of S. Bekman's
// "Machine Learning Engineering" (stas00/ml-engineering, compute/accelerator/README.md, "Maximum
// Achievable Matmul FLOPS comparison table" as of commit 744d01e, 2026-08-22; BF16 matmul through
// torch, mean of 100 iterations, best shape of a brute-force search): A100 SXM 271.2 of 312
// (86.9%), A100 PCIe 81.1%, H100 SXM 794.5 of 989 (80.3%; "H200 is the same"), B200 SXM 1,745
// of 2,250 (77.6%), MI325X 784.9 of 1,300 (60.4%, 1,000 W), MI300X 668.4 of 1,300 (51.4%, ROCm
// 6.3, PYTORCH_TUNABLEOP_ENABLED=1). (The table's earlier CUDA 12.1 figures, 85.9%, 82.2%,
// 80.1% and MI300X 60.1%, were its first benchmark version, which did not clear the cache
// between iterations; the author replaced them.) Entries without a measurement take 0.80, the
// Hopper/Ampere SXM figures' lower end (stated per entry).
//
// Node fabric bandwidth as NCCL rates it: NVIDIA/nccl src/graph/topo.h gives GB/s per NVLink by
// compute capability: SM80_NVLINK_BW 20.0 and SM90_NVLINK_BW 20.6 (NCCL 2.20.x), and
// SM100_NVLINK_BW 40.1 (the Blackwell-era topo.h, as quoted in copies of it; not read here
// from an NVIDIA commit). topo.cc connects each GPU to the NVSwitch with count x that. The
// datasheets give the NVLink count: A100 12 (600 GB/s both ways), H100 SXM5 18 (900 GB/s),
// B200 18 (1.8 TB/s). Measured nccl-tests all_reduce ring busbw on one node sits at this
// figure: 365-370 GB/s on 8 x H100 (NVIDIA/nccl issue 1455), 230-232 GB/s on 8 x A100
// (NVIDIA/nccl-tests issue 175; Azure ND A100 v4 results).
//
// Fields: name, arch, {fp32, tf32, bf16, fp16, fp8} FLOP/s, memory B, HBM B/s, power W, SMs,
// max GEMM efficiency, NVLink B/s, node fabric, and where measured the max fp8 GEMM efficiency.
constexpr std::array<GpuSpec, 23> kCatalog{{
    // NVIDIA H100 Tensor Core GPU datasheet, SXM5: FP32 67 TFLOPS; TF32 989*, BF16/FP16 1,979*,
    // FP8 3,958*; HBM3 80 GB at 3.35 TB/s; up to 700 W; 132 SMs (Hopper whitepaper). NVLink:
    // 18 x 20.6 GB/s. MAMF 80.3%. fp8 GEMMs: MAMF 1,402.6 of 1,979 TFLOP/s (70.9%), the same
    // table's fp8 (float8_e4m3fn, dense) row: cuBLAS through torch._scaled_mm, torch 2.7.0+cu126,
    // best shape 1024 x 9216 x 14336 (stas00/ml-engineering, compute/accelerator/README.md,
    // "Maximum Achievable Matmul FLOPS comparison table", as of commit 744d01e, 2026-08-22).
    {"H100-SXM", "hopper", {67e12, 494.5e12, 989e12, 989e12, 1979e12}, 80e9, 3.35e12, 700, 132,
     kH100SxmGemmCeiling, 18 * 20.6e9, NodeFabric::nvswitch, kH100SxmFp8GemmCeiling},
    // Same datasheet, PCIe: FP32 51; TF32 756*, BF16/FP16 1,513*, FP8 3,026*; HBM2e 80 GB at
    // 2.0 TB/s; 350 W; 114 SMs. PCIe servers (the two-card NVLink bridge is not modelled). No
    // MAMF measurement: 0.80.
    {"H100-PCIe", "hopper", {51e12, 378e12, 756e12, 756e12, 1513e12}, 80e9, 2.0e12, 350, 114, 0.80, 0,
     NodeFabric::pcie},
    // NVIDIA H200 Tensor Core GPU datasheet, SXM: the H100 SXM's tensor rates; HBM3e 141 GB at
    // 4.8 TB/s; up to 700 W; 132 SMs; NVLink 900 GB/s (18 links). MAMF: the H100 SXM's 80.3% (the
    // table: "H200 is the same"); fp8 1,453.4 of 1,979 TFLOP/s (73.4%, torch 2.7.1+cu128).
    {"H200", "hopper", {67e12, 494.5e12, 989e12, 989e12, 1979e12}, 141e9, 4.8e12, 700, 132,
     kH100SxmGemmCeiling, 18 * 20.6e9, NodeFabric::nvswitch, 0.734},
    // NVIDIA DGX B200 / HGX B200 datasheets, per GPU (/8): FP32 600 TFLOPS -> 75; TF32 18 PF* ->
    // 1.125 PF dense; BF16/FP16 36 PF* -> 2.25; FP8 72 PF* -> 4.5; 1,440 GB HBM3e -> 180 GB at
    // 8 TB/s; 1,000 W; 148 SMs. NVLink 5: 18 x 40.1 GB/s. MAMF 1,745 of 2,250 TFLOP/s (77.6%);
    // fp8 3,432.5 of 4,500 (76.3%; both torch 2.7.1+cu128).
    {"B200", "blackwell", {75e12, 1.125e15, 2.25e15, 2.25e15, 4.5e15}, 180e9, 8e12, 1000, 148, 0.776,
     18 * 40.1e9, NodeFabric::nvswitch, 0.763},
    // NVIDIA A100 Tensor Core GPU datasheet, 80GB SXM: FP32 19.5; TF32 156, BF16/FP16 312 (dense
    // figures); no FP8; HBM2e 2,039 GB/s; 400 W; 108 SMs. NVLink: 12 x 20.0 GB/s. MAMF 86.9%.
    // With tile and wave quantization this ceiling gives NVIDIA's own cuBLAS 11.0 FP16 rates by size
    // within 10% from m = n = k = 2,048 to 8,192 ("CUDA 11 Features Revealed", 2020, Figure 6:
    // 194 TFLOP/s at 2,048, 258 at 4,096, 291 at 8,192; test_roofline.cpp holds each).
    {"A100-80GB", "ampere", {19.5e12, 156e12, 312e12, 312e12, 0}, 80e9, 2.039e12, 400, 108, 0.869,
     12 * 20.0e9, NodeFabric::nvswitch},
    // Same datasheet, 40GB SXM: same rates; HBM2 1,555 GB/s; 400 W. MAMF as the 80 GB part.
    {"A100-40GB", "ampere", {19.5e12, 156e12, 312e12, 312e12, 0}, 40e9, 1.555e12, 400, 108, 0.869,
     12 * 20.0e9, NodeFabric::nvswitch},
    // AMD Instinct MI300X datasheet: FP32 163.4 TFLOPS; TF32 653.7, BF16/FP16 1,307.4, FP8
    // 2,614.9 (dense); HBM3 192 GB at 5.3 TB/s; 750 W; 304 CUs. Eight GPUs in a full mesh of
    // Infinity Fabric links, 7 per GPU at 64 GB/s each way (128 GB/s peak per link): the
    // datasheet rate, no RCCL-measured figure applied. MAMF 51.4% (ROCm 6.3, TunableOp on).
    {"MI300X", "cdna3", {163.4e12, 653.7e12, 1307.4e12, 1307.4e12, 2614.9e12}, 192e9, 5.3e12, 750, 304,
     0.514, 7 * 64e9, NodeFabric::nvlink_mesh},
    // NVIDIA L4 datasheet: FP32 30.3; TF32 120*, BF16/FP16 242*, FP8 485*; GDDR6 24 GB at
    // 300 GB/s; 72 W; 58 SMs (Ada whitepaper, AD104 as L4). PCIe Gen4 servers. 0.80 assumed.
    {"L4", "ada", {30.3e12, 60e12, 121e12, 121e12, 242.5e12}, 24e9, 300e9, 72, 58, 0.80, 0, NodeFabric::pcie},
    // NVIDIA T4 datasheet: FP32 8.1; mixed-precision FP16 tensor 65 TFLOPS; no BF16, TF32 or
    // FP8 (Turing); GDDR6 16 GB at 320 GB/s; 70 W; 40 SMs. 0.80 assumed.
    {"T4", "turing", {8.1e12, 0, 0, 65e12, 0}, 16e9, 320e9, 70, 40, 0.80, 0, NodeFabric::pcie},
    // NVIDIA A10G (AWS G5; NVIDIA publishes no datasheet): FP32 31.2, TF32 35, BF16/FP16 70 TFLOPS
    // dense, GDDR6 24 GB at 600 GB/s (Baseten, "NVIDIA A10 vs A10G for ML model inference",
    // from AWS's figures); 300 W board power as nvidia-smi reports it on g5; 80 SMs. 0.80
    // assumed.
    {"A10G", "ampere", {31.2e12, 35e12, 70e12, 70e12, 0}, 24e9, 600e9, 300, 80, 0.80, 0, NodeFabric::pcie},
    // NVIDIA Ada Lovelace architecture whitepaper, GeForce RTX 4090: FP32 82.6; with FP32
    // accumulate (what training uses; GeForce runs it at half the FP16-accumulate rate) TF32
    // 82.6, BF16/FP16 165.2, FP8 330.3 dense; GDDR6X 24 GB at 1,008 GB/s; 450 W; 128 SMs.
    // 0.80 assumed.
    {"RTX-4090", "ada", {82.6e12, 82.6e12, 165.2e12, 165.2e12, 330.3e12}, 24e9, 1008e9, 450, 128, 0.80, 0,
     NodeFabric::pcie},
    // NVIDIA RTX A5000 datasheet: FP32 27.8; TF32 111.1*, BF16/FP16 222.2* -> 55.6 and 111.1
    // dense; GDDR6 24 GB at 768 GB/s; 230 W; 64 SMs. Workstations: PCIe (its two-GPU NVLink
    // bridge is not modelled). 0.80 assumed.
    {"RTX-A5000", "ampere", {27.8e12, 55.6e12, 111.1e12, 111.1e12, 0}, 24e9, 768e9, 230, 64, 0.80, 0,
     NodeFabric::pcie},
    // NVIDIA A100 Tensor Core GPU datasheet, 80GB PCIe: the SXM part's rates; HBM2e 1,935 GB/s;
    // 300 W; 108 SMs; PCIe Gen4 servers. MAMF: A100 PCIe 81.1%.
    {"A100-80GB-PCIe", "ampere", {19.5e12, 156e12, 312e12, 312e12, 0}, 80e9, 1.935e12, 300, 108, 0.811, 0,
     NodeFabric::pcie},
    // NVIDIA L40S datasheet: FP32 91.6; TF32 183, BF16/FP16 362.05, FP8 733 (dense; 366*, 733*,
    // 1,466* with sparsity); GDDR6 48 GB at 864 GB/s; 350 W; 142 SMs (142 third-generation RT
    // cores, one per SM); PCIe Gen4 x16, no NVLink. 0.80 assumed.
    {"L40S", "ada", {91.6e12, 183e12, 362.05e12, 362.05e12, 733e12}, 48e9, 864e9, 350, 142, 0.80, 0,
     NodeFabric::pcie},
    // NVIDIA RTX PRO 6000 Blackwell Server Edition (GTC 2025 announcement and datasheet): FP32
    // 125 TFLOPS; 4,000 AI TOPS (FP4 with sparsity), so FP4 2,000 dense and, halving per format
    // as Blackwell's tensor cores do, FP8 1,000, BF16/FP16 500, TF32 250; GDDR7 96 GB at
    // 1,792 GB/s (512-bit, 28 Gbps); 600 W; 188 SMs; PCIe Gen5, no NVLink. 0.80 assumed.
    {"RTX-PRO-6000", "blackwell", {125e12, 250e12, 500e12, 500e12, 1000e12}, 96e9, 1792e9, 600, 188, 0.80, 0,
     NodeFabric::pcie},
    // AMD Instinct MI325X datasheet: the MI300X's compute (FP32 163.4; TF32 653.7, BF16/FP16
    // 1,307.4, FP8 2,614.9 dense; 304 CUs) with HBM3E 256 GB at 6 TB/s; 1,000 W. The MI300X's
    // Infinity Fabric mesh; MAMF 60.4% (its own row: torch 2.6.0, ROCm 6.2.4, TunableOp on, 1,000 W).
    {"MI325X", "cdna3", {163.4e12, 653.7e12, 1307.4e12, 1307.4e12, 2614.9e12}, 256e9, 6.0e12, 1000, 304,
     0.604, 7 * 64e9, NodeFabric::nvlink_mesh},
    // Accelerators that are not GPUs. No MAMF-style GEMM sweep is published for them: 0.80, the
    // catalog's default (above), but for NeuronCore-v2 (below); sms 0 (their matrix units are not
    // SM waves). Their chips
    // join neighbours directly (TPU ICI, AWS NeuronLink): ici_links x ici_link_Bps per direction,
    // and that sum is the node-fabric rate of an nvlink_mesh node. Servers: a TPU v4/v5p host
    // has 4 chips, a v5e/v6e host 8 (Google Cloud's pages), cabled here as a full mesh (the
    // slice's torus is topology.kind "tpu_slice"); trn1/trn2 16 chips on a 4 x 4 torus, inf2 12
    // on a ring (the AWS pages below).
    // The TPUs run XLA's collectives (collective_library xla: no NCCL protocol, latency or
    // refinement); an LLM replica's tensor-parallel ones run on its chips as the host's ICI grid
    // (sim/compute/tpu_slice.hpp), not on this full mesh.
    //
    // Per-link ICI rates (one direction): J. Austin et al., "How to Scale Your Model" (Google
    // DeepMind, 2025), part 2 "How to Think About TPUs", the ICI table: v4p 4.5e10, v5p 1e11, v5e
    // 5e10, v6e 1e11 bytes/s; they agree with Google Cloud's per-chip bidirectional figures over
    // the chip's ports (v5e 400 GB/s / 4 ports / 2 directions = 50 GB/s; v5p 1,200 / 6 / 2 = 100;
    // v6e 800 / 4 / 2 = 100).
    //
    // Achieved HBM bandwidth, the same for every TPU entry (hbm_efficiency 0.86): J. Jiang, Y. Chen,
    // B. A. Hechtman, F. Zhang, Y. Mu, "Ragged Paged Attention: A High-Performance and Flexible
    // LLM Inference Kernel for TPU" (Google, arXiv:2604.15464, 2026-04-16), abstract: the ragged
    // paged attention kernel that vLLM's and SGLang's TPU backends run reaches up to 86% memory
    // bandwidth utilization in decode (Llama 3 8B, TPU7x). The one published measurement of a
    // TPU's achieved HBM share; it is a later generation than these four, taken for them as the
    // TPU figure in place of the GPU-derived serving default (0.7), and it measures the paged
    // read itself (so a paged KV read takes no further share; llm_timing.hpp).
    //
    // Google Cloud TPU documentation, "TPU v4": peak 275 TFLOPS (bf16 or int8); HBM2 32 GiB at
    // 1,200 GBps; measured min/mean/max power 90/170/192 W (the max here); 3D torus, 6 ICI ports.
    {"TPU-v4", "tpu_v4", {0, 0, 275e12, 0, 0, 275e12}, 32 * 1073741824.0, 1200e9, 192, 0, 0.80, 6 * 45e9,
     NodeFabric::nvlink_mesh, 0, 6, 45e9, 4, topo::NodeMesh::full, true, 0.86, net::CollectiveLibrary::xla},
    // "TPU v5e": bf16 197 TFLOPS, int8 393 TOPS; HBM2 16 GB at 819 GBps; 2D torus, 4 ICI ports,
    // 400 GBps bidirectional per chip. No power figure published: 0 (no power-derived default).
    {"TPU-v5e", "tpu_v5e", {0, 0, 197e12, 0, 0, 393e12}, 16e9, 819e9, 0, 0, 0.80, 4 * 50e9,
     NodeFabric::nvlink_mesh, 0, 4, 50e9, 8, topo::NodeMesh::full, true, 0.86, net::CollectiveLibrary::xla},
    // "TPU v5p": bf16 459 TFLOPS, fp8 459; HBM2e 95 GB at 2,765 GBps; 3D torus, 1,200 GBps ICI
    // bidirectional per chip (6 ports); int8 918 TOPS ("How to Scale Your Model"'s table). No
    // power figure published.
    {"TPU-v5p", "tpu_v5p", {0, 0, 459e12, 0, 459e12, 918e12}, 95e9, 2765e9, 0, 0, 0.80, 6 * 100e9,
     NodeFabric::nvlink_mesh, 0, 6, 100e9, 4, topo::NodeMesh::full, true, 0.86, net::CollectiveLibrary::xla},
    // "TPU v6e" (Trillium): bf16 918 TFLOPS, int8 1,836 TOPS; HBM 32 GB at 1,638 GBps; 2D torus,
    // 4 ICI ports, 800 GBps bidirectional per chip. No power figure published.
    {"TPU-v6e", "tpu_v6e", {0, 0, 918e12, 0, 0, 1836e12}, 32e9, 1638e9, 0, 0, 0.80, 4 * 100e9,
     NodeFabric::nvlink_mesh, 0, 4, 100e9, 8, topo::NodeMesh::full, true, 0.86, net::CollectiveLibrary::xla},
    // AWS Neuron documentation, "Trainium Architecture": two NeuronCore-v2, 190 FP16/BF16/cFP8/
    // TF32 TFLOPS, 47.5 FP32, 380 INT8 TOPS; 32 GiB at 820 GiB/s (decimal here, as the Trainium2
    // page's comparison table gives it, 0.8 TB/s). "Trn1/Trn1n Architecture": 16 chips per
    // trn1.32xlarge in a 2D torus, NeuronLink-v2 384 GiB/s per chip; the NKI architecture guide:
    // 4 NeuronLink-v2 per Trainium. 384 GiB/s read as both directions (as NVLink's 900 GB/s is):
    // 4 x 51.5 GB/s each way. AWS publishes no chip power: 0.
    // GEMM ceiling 0.830, measured: the NKI matrix-multiplication tutorial's fully optimized
    // kernel multiplies [4096, 8192] x [8192, 8192] in BF16 in 6.97 ms on one NeuronCore-v2 of a
    // trn1.32xlarge (its "Hardware FLOPs Utilization" 85.24%, of the Tensor Engine's 92 TFLOP/s):
    // 2 x 4096 x 8192 x 8192 / 6.97 ms = 78.9 TFLOP/s, 0.830 of the 95 TFLOP/s a core has of the
    // chip's 190 (aws-neuron/aws-neuron-sdk, general/nki/tutorials/matrix_multiplication.rst, as
    // of commit 4eba310f, 2025-05-20; the table left the page in December 2025). One hand-tuned
    // kernel and shape, as Bekman's MAMF is cuBLAS's best shape; NeuronX Distributed's GEMMs are
    // the compiler's, whose rate AWS does not publish.
    // Tensor-parallel collectives are not overlapped on NeuronCores (overlaps_tp_comm false, for
    // the three Neuron chips): AWS's "Compute-Communication Overlap in Neuron" (aws-neuron-sdk,
    // neuron-runtime/explore/compute-comm-overlap.rst, 2025-09-18): "Currently, TP CC operations
    // cannot be effectively overlapped with computation due to strict data dependencies"; the
    // fine-grained (collective-matmul) decomposition is "under development for future versions".
    {"Trainium1", "neuron_v2", {47.5e12, 190e12, 190e12, 190e12, 190e12, 380e12}, 32 * 1073741824.0, 820e9, 0, 0,
     0.830, 4 * 51.5e9, NodeFabric::nvlink_mesh, 0, 4, 51.5e9, 16, topo::NodeMesh::torus_4x4, false, 0, net::CollectiveLibrary::neuron_ccom},
    // "Trainium2 Architecture": eight NeuronCore-v3, 667 BF16/FP16/TF32 TFLOPS, 1,299 FP8, 181
    // FP32 (dense); 96 GiB at 2.9 TB/s; NeuronLink-v3 1.28 TB/s per chip over 4 links (the NKI
    // guide), read as both directions: 4 x 160 GB/s each way. trn2.48xlarge: 16 chips in a 4 x 4
    // torus ("Best practices for training on AWS Neuron"). No published chip power. NeuronCore-v3
    // has no published matrix-multiply rate (the NKI tutorial's was Trainium1's): 0.80.
    {"Trainium2", "neuron_v3", {181e12, 667e12, 667e12, 667e12, 1299e12, 0}, 96 * 1073741824.0, 2.9e12, 0, 0,
     0.80, 4 * 160e9, NodeFabric::nvlink_mesh, 0, 4, 160e9, 16, topo::NodeMesh::torus_4x4, false, 0, net::CollectiveLibrary::neuron_ccom},
    // "Inferentia2 Architecture": the Trainium's NeuronCore-v2 pair and rates, 32 GiB at 820 GB/s;
    // "Inf2 Architecture": up to 12 chips per inf2.48xlarge in a ring, NeuronLink-v2 192 GiB/s
    // per chip over 2 links (the NKI guide): 2 x 51.5 GB/s each way. No published chip power. GEMM
    // ceiling: Trainium1's measured 0.830 (the same NeuronCore-v2 and clock: the NKI architecture
    // guide describes Trainium and Inferentia2 as one).
    {"Inferentia2", "neuron_v2", {47.5e12, 190e12, 190e12, 190e12, 190e12, 380e12}, 32 * 1073741824.0, 820e9, 0,
     0, 0.830, 2 * 51.5e9, NodeFabric::nvlink_mesh, 0, 2, 51.5e9, 12, topo::NodeMesh::ring, false, 0, net::CollectiveLibrary::neuron_ccom},
}};

}  // namespace

std::span<const GpuSpec> gpu_catalog() { return kCatalog; }

const GpuSpec* find_gpu(std::string_view name) {
  for (const auto& e : kCatalog)
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<std::string> gpu_names() {
  std::vector<std::string> names;
  for (const auto& e : kCatalog) names.emplace_back(e.name);
  return names;
}

double dense_peak_flops(const DenseFlops& flops, work::Precision precision) {
  switch (precision) {
    case work::Precision::bf16: return flops.bf16;
    case work::Precision::fp16: return flops.fp16;
    case work::Precision::fp8: return flops.fp8;
  }
  return 0;
}

double half_precision_peak_flops(const DenseFlops& flops) { return flops.bf16 > 0 ? flops.bf16 : flops.fp16; }

}  // namespace cs::compute
