// hardware.gpu and hardware.node.
#include "sim/compute/gpu_catalog.hpp"
#include "sim/network/nccl_tuning.hpp"
#include "sim/scenario/parse_sections.hpp"
#include "sim/scenario/parse_util.hpp"
#include "sim/scenario/quantity_range.hpp"
#include "sim/scenario/suggest.hpp"

namespace cs::scenario::detail {
namespace {

using compute::gpu_names;

// A catalog entry (sim/compute) as the scenario's GpuConfig: the dense 16-bit peak.
std::optional<GpuConfig> find_gpu(std::string_view name) {
  const compute::GpuSpec* spec = compute::find_gpu(name);
  if (!spec) return std::nullopt;
  return GpuConfig{std::string(spec->name), compute::half_precision_peak_flops(spec->dense_flops),
                   spec->hbm_bandwidth_Bps, spec->memory_bytes, spec->nvlink_bandwidth_Bps, spec->fabric,
                   std::string(spec->arch)};
}

GpuConfig parse_gpu(const json& hardware) {
  const json* v = member(hardware, "gpu");
  if (!v) return *find_gpu("H100-SXM");
  const std::string path = "hardware.gpu";
  if (v->is_string()) {
    const auto& name = v->get_ref<const std::string&>();
    if (auto gpu = find_gpu(name)) return *gpu;
    throw InputError(path, "unknown GPU \"" + name + "\"; the catalog has " + quoted_list(gpu_names()),
                     did_you_mean(name, gpu_names()) + (nearest(name, gpu_names()) ? " " : "") +
                         "or give an object {name, peak_flops, hbm_bandwidth, memory}");
  }
  if (!v->is_object())
    throw InputError(path, "expected a GPU catalog name or an object {name, peak_flops, "
                           "hbm_bandwidth, memory}; got " + describe_value(*v));
  const std::string name = get_string(*v, "name", path, "custom");
  const auto base = find_gpu(name);
  for (const char* key : {"peak_flops", "hbm_bandwidth", "memory"})
    if (!base && !member(*v, key))
      throw InputError(join_path(path, key),
                       "required for a GPU that is not in the catalog (" + quoted_list(gpu_names()) + ")",
                       did_you_mean(name, gpu_names()));
  GpuConfig gpu = base.value_or(GpuConfig{});
  gpu.name = name;
  // Physical floors and ceilings (the schema's definitions say why): every op's time finite.
  gpu.peak_flops = get_ranged(*v, "peak_flops", path, "gpu_peak_flops", gpu.peak_flops);
  gpu.hbm_bandwidth_Bps = get_ranged(*v, "hbm_bandwidth", path, "link_bandwidth", gpu.hbm_bandwidth_Bps);
  gpu.memory_bytes = get_ranged(*v, "memory", path, "gpu_memory", gpu.memory_bytes);
  gpu.nvlink_bandwidth_Bps = get_ranged(*v, "nvlink_bandwidth", path, "link_bandwidth", gpu.nvlink_bandwidth_Bps,
                                        /*zero_means_none=*/true);
  if (member(*v, "nvlink_bandwidth") && !(gpu.nvlink_bandwidth_Bps > 0)) gpu.fabric = topo::NodeFabric::pcie;
  return gpu;
}

// hardware.node.mesh: the NVLink cabling of an nvlink_mesh node.
void parse_mesh(const json& node, topo::NodeParams& p, topo::NodeMesh catalog_mesh) {
  const std::string path = "hardware.node.mesh";
  // The catalog server's cabling where the node has that server's shape; otherwise a full mesh.
  const bool fits = (catalog_mesh != topo::NodeMesh::torus_4x4 || p.gpus == 16) &&
                    (catalog_mesh != topo::NodeMesh::ring || p.gpus >= 2);
  p.mesh = get_choice(node, "mesh", "hardware.node", topo::kNodeMeshNames,
                      p.fabric == topo::NodeFabric::nvlink_mesh && fits ? catalog_mesh : topo::NodeMesh::full);
  if (!member(node, "mesh")) return;
  if (p.fabric != topo::NodeFabric::nvlink_mesh)
    throw InputError(path, "a mesh applies only to fabric \"nvlink_mesh\"",
                     "set hardware.node.fabric to \"nvlink_mesh\" or remove hardware.node.mesh");
  if (p.mesh == topo::NodeMesh::hybrid_cube && p.gpus != 8)
    throw InputError(path, "\"hybrid_cube\" is the 8-GPU DGX-1 mesh; got " + std::to_string(p.gpus) +
                               " GPUs per node",
                     "use \"full\" (every GPU pair cabled) or 8 GPUs");
  if (p.mesh == topo::NodeMesh::torus_4x4 && p.gpus != 16)
    throw InputError(path, "\"torus_4x4\" is the 16-chip trn1/trn2 server; got " + std::to_string(p.gpus) +
                               " GPUs per node",
                     "use \"full\" or \"ring\", or 16 GPUs");
  if (p.mesh == topo::NodeMesh::ring && p.gpus < 2)
    throw InputError(path, "a \"ring\" needs at least 2 GPUs per node; got " + std::to_string(p.gpus),
                     "use \"full\" or more GPUs");
}

}  // namespace

void parse_hardware(const json& doc, Config& config) {
  const json& hardware = object_or_empty(doc, "hardware", "");
  config.gpu = parse_gpu(hardware);

  const json& node = object_or_empty(hardware, "node", "hardware");
  const std::string at = "hardware.node";
  topo::NodeParams& p = config.topology.node;
  const GpuConfig& gpu = config.gpu;
  const compute::GpuSpec* spec = compute::find_gpu(gpu.name);
  p.gpus = static_cast<int>(get_int(node, "gpus", at, spec ? spec->node_gpus : 8, 1, 1024));
  p.fabric = get_choice(node, "fabric", at, topo::kNodeFabricNames, gpu.fabric);
  parse_mesh(node, p, spec ? spec->mesh : topo::NodeMesh::full);
  // NVLS needs an NVSwitch that reduces: NVSwitch gen 3 (Hopper) and later.
  const bool reduces = p.fabric == topo::NodeFabric::nvswitch && net::nccl_nvls_efficiency(gpu.arch) > 0;
  config.in_network.nvls = get_bool(node, "nvls", at, reduces);
  if (config.in_network.nvls && p.fabric != topo::NodeFabric::nvswitch)
    throw InputError(at + ".nvls", "NVLS (in-switch reduction) needs an NVSwitch node; the fabric is not \"nvswitch\"",
                     "remove hardware.node.nvls or set hardware.node.fabric to \"nvswitch\"");
  if (config.in_network.nvls && !reduces)
    throw InputError(at + ".nvls", "NVLS (in-switch reduction) needs Hopper or later; " + gpu.name + " (" + gpu.arch +
                                       ") has no NVLS",
                     "remove hardware.node.nvls");
  const bool nvlink = p.fabric != topo::NodeFabric::pcie;
  if (nvlink && !(gpu.nvlink_bandwidth_Bps > 0) && !member(node, "gpu_bandwidth"))
    throw InputError(at + ".gpu_bandwidth",
                     "required: " + gpu.name + " has no NVLink figure for a \"" +
                         std::string(p.fabric == topo::NodeFabric::nvswitch ? "nvswitch" : "nvlink_mesh") + "\" node",
                     "give hardware.node.gpu_bandwidth, or set hardware.node.fabric to \"pcie\"");
  // Without an NVLink figure the node is PCIe (checked above), where no cable uses this
  // value: the fallback only keeps the parameter valid.
  p.gpu_bandwidth_Bps = get_ranged(node, "gpu_bandwidth", at, "link_bandwidth",
                                   gpu.nvlink_bandwidth_Bps > 0 ? gpu.nvlink_bandwidth_Bps : 450e9);
  // 0.3 us each way: a GPU-switch-GPU hop then takes 0.6 us, NCCL's LL step on NVLink
  // (tuning.cc hwLat), an end-to-end figure the wire alone cannot exceed.
  p.gpu_latency_s = get_ranged(node, "gpu_latency", at, "latency", 0.3e-6);
  p.nics = static_cast<int>(get_int(node, "nics", at, p.gpus, 1, 1024));
  if (p.nics > p.gpus)
    throw InputError(join_path(at, "nics"),
                     "expected at most one NIC per GPU (" + std::to_string(p.gpus) + " here); got " +
                         std::to_string(p.nics),
                     "GPU i uses NIC floor(i * nics / gpus); extra NICs would carry no traffic");
  p.nic_bandwidth_Bps = get_ranged(node, "nic_bandwidth", at, "link_bandwidth", 50e9);
  p.pcie_bandwidth_Bps = get_ranged(node, "pcie_bandwidth", at, "link_bandwidth", 64e9);
  p.pcie_latency_s = get_ranged(node, "pcie_latency", at, "latency", 0.5e-6);
  config.host.memory_bandwidth_Bps =
      get_ranged(node, "host_memory_bandwidth", at, "link_bandwidth", config.host.memory_bandwidth_Bps);
  config.host.memory_bytes = get_quantity(node, "host_memory", at, QuantityKind::bytes, Sign::non_negative, 0);
  p.gpu_p2p = get_bool(node, "p2p", at, true);
  if (!p.gpu_p2p && p.fabric != topo::NodeFabric::pcie)
    throw InputError(at + ".p2p", "false needs a \"pcie\" node: NVLink is peer-to-peer",
                     "remove hardware.node.p2p, or set hardware.node.fabric to \"pcie\"");
  // PCIe switches are modelled only when the key is given (0: today's direct PCIe cables).
  p.pcie_switches = 0;
  if (member(node, "pcie_switches")) {
    p.pcie_switches = static_cast<int>(get_int(node, "pcie_switches", at, 1, 1, 1024));
    if (p.pcie_switches > p.gpus)
      throw InputError(join_path(at, "pcie_switches"),
                       "expected at most one PCIe switch per GPU (" + std::to_string(p.gpus) +
                           " here); got " + std::to_string(p.pcie_switches),
                       "GPU i sits behind PCIe switch floor(i * pcie_switches / gpus)");
  }
}

}  // namespace cs::scenario::detail
