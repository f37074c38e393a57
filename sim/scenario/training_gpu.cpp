// The scenario's GPU and host as the compute library's specs (training_gpu.hpp).
#include "sim/scenario/training_gpu.hpp"

namespace cs::scenario::detail {

compute::GpuSpec gpu_spec(const GpuConfig& gpu) {
  compute::GpuSpec spec;
  if (const compute::GpuSpec* base = compute::find_gpu(gpu.name)) {
    spec = *base;
    const double scale = gpu.peak_flops / compute::half_precision_peak_flops(base->dense_flops);
    for (double* f : {&spec.dense_flops.tf32, &spec.dense_flops.bf16, &spec.dense_flops.fp16, &spec.dense_flops.fp8})
      *f *= scale;
  } else {
    spec.arch = gpu.arch;
    spec.dense_flops = {gpu.peak_flops / 16, gpu.peak_flops / 2, gpu.peak_flops, gpu.peak_flops, 0};
    spec.sms = 132;
    spec.max_gemm_efficiency = 0.8;
  }
  spec.name = gpu.name;
  spec.memory_bytes = gpu.memory_bytes;
  spec.hbm_bandwidth_Bps = gpu.hbm_bandwidth_Bps;
  spec.nvlink_bandwidth_Bps = gpu.nvlink_bandwidth_Bps;
  spec.fabric = gpu.fabric;
  return spec;
}

compute::HostSpec host_spec(const Config& config) {
  const auto& node = config.topology.node;
  compute::HostSpec h;
  h.pcie_bandwidth_Bps = node.pcie_bandwidth_Bps;
  h.pcie_latency_s = node.pcie_latency_s;
  h.memory_bandwidth_Bps = config.host.memory_bandwidth_Bps;
  h.gpus_per_host = node.gpus;
  return h;
}

}  // namespace cs::scenario::detail
