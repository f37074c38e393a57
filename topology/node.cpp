// Servers: GPUs, NICs and the node switch (NVSwitch or PCIe host), and their cables.
#include <string>

#include "topology/build_detail.hpp"

namespace cs::topo::detail {

void check_nodes(const TopologyParams& p) {
  const NodeParams& n = p.node;
  if (p.nodes < 1) fail("nodes", "need at least 1 node, got " + std::to_string(p.nodes));
  if (n.gpus < 1) fail("node.gpus", "need at least 1 GPU per node, got " + std::to_string(n.gpus));
  if (n.nics < 1) fail("node.nics", "need at least 1 NIC per node, got " + std::to_string(n.nics));
  if (n.fabric != NodeFabric::nvswitch && n.fabric != NodeFabric::pcie)
    fail("node.fabric", "unknown node fabric (expected nvswitch or pcie)");
  // Sizes in 64 bits: nodes * gpus overflows int long before it is refused.
  if (n.gpus > kMaxGpus)
    fail("node.gpus", "at most " + std::to_string(kMaxGpus) + " GPUs per node");
  if (n.nics > kMaxNics)
    fail("node.nics", "at most " + std::to_string(kMaxNics) + " NICs per node");
  const int64_t gpus = int64_t{p.nodes} * n.gpus;
  if (gpus > kMaxGpus)
    fail("nodes", std::to_string(p.nodes) + " nodes of " + std::to_string(n.gpus) + " GPUs make " +
                      std::to_string(gpus) + " GPUs; at most " + std::to_string(kMaxGpus));
  const int64_t nics = int64_t{p.nodes} * n.nics;
  if (nics > kMaxNics)
    fail("nodes", std::to_string(p.nodes) + " nodes of " + std::to_string(n.nics) + " NICs make " +
                      std::to_string(nics) + " NICs; at most " + std::to_string(kMaxNics));
  check_bandwidth(n.gpu_bandwidth_Bps, "node.gpu_bandwidth");
  check_latency(n.gpu_latency_s, "node.gpu_latency");
  check_bandwidth(n.nic_bandwidth_Bps, "node.nic_bandwidth");
  check_bandwidth(n.pcie_bandwidth_Bps, "node.pcie_bandwidth");
  check_latency(n.pcie_latency_s, "node.pcie_latency");
}

int64_t node_vertex_count(const NodeParams& node) { return int64_t{node.gpus} + node.nics + 1; }

int64_t node_cable_count(const NodeParams& node) {
  // nvswitch: GPU-switch and GPU-NIC per GPU; pcie: GPU-host per GPU and NIC-host per NIC.
  return node.fabric == NodeFabric::nvswitch ? 2 * int64_t{node.gpus}
                                             : int64_t{node.gpus} + node.nics;
}

// Names are built by appending: `"n" + std::to_string(i)` trips a false -Wrestrict in
// GCC 12 at -O3.
std::string node_prefix(int node) {
  std::string s(1, 'n');
  s += std::to_string(node);
  return s;
}

std::string gpu_name(int node, int j) {
  std::string s = node_prefix(node);
  s += ".gpu";
  s += std::to_string(j);
  return s;
}

std::string nic_name(int node, int j, int nics_per_node) {
  std::string s = node_prefix(node);
  if (nics_per_node == 1) return s;
  s += '.';
  s += std::to_string(j);
  return s;
}

NodeVertices add_nodes(Topology& t, TopologyKind kind, const NodeParams& n, int nodes) {
  NodeVertices v;
  v.gpus.reserve(static_cast<std::size_t>(nodes) * static_cast<std::size_t>(n.gpus));
  v.nics.reserve(static_cast<std::size_t>(nodes) * static_cast<std::size_t>(n.nics));
  v.switches.reserve(static_cast<std::size_t>(nodes));
  const bool nvswitch = n.fabric == NodeFabric::nvswitch;
  const std::string switch_suffix = nvswitch ? ".nvswitch" : ".host";
  for (int i = 0; i < nodes; ++i) {
    const std::size_t first_gpu = v.gpus.size(), first_nic = v.nics.size();
    for (int j = 0; j < n.gpus; ++j)
      v.gpus.push_back(t.add_vertex(VertexKind::gpu, i, j, 0, gpu_name(i, j)));
    for (int j = 0; j < n.nics; ++j)
      v.nics.push_back(t.add_vertex(VertexKind::nic, i, j, 0, nic_name(i, j, n.nics)));
    const VertexId sw =
        t.add_vertex(VertexKind::node_switch, i, 0, 0, node_prefix(i) += switch_suffix);
    v.switches.push_back(sw);
    if (nvswitch) {
      // GPU-switch cable first, then the GPU's PCIe cable to its affine NIC: each GPU's
      // out-links are [node switch, NIC], which BFS tie-breaking relies on.
      for (int j = 0; j < n.gpus; ++j) {
        const VertexId gpu = v.gpus[first_gpu + static_cast<std::size_t>(j)];
        const int nic = static_cast<int>(int64_t{j} * n.nics / n.gpus);
        t.add_cable(gpu, sw, n.gpu_bandwidth_Bps, n.gpu_latency_s, LinkKind::node_fabric);
        t.add_cable(gpu, v.nics[first_nic + static_cast<std::size_t>(nic)], n.pcie_bandwidth_Bps,
                    n.pcie_latency_s, LinkKind::pcie);
      }
    } else {
      // No NVLink: the host root complex joins every GPU and NIC of the node.
      for (int j = 0; j < n.gpus; ++j)
        t.add_cable(v.gpus[first_gpu + static_cast<std::size_t>(j)], sw, n.pcie_bandwidth_Bps,
                    n.pcie_latency_s, LinkKind::pcie);
      for (int j = 0; j < n.nics; ++j)
        t.add_cable(v.nics[first_nic + static_cast<std::size_t>(j)], sw, n.pcie_bandwidth_Bps,
                    n.pcie_latency_s, LinkKind::pcie);
    }
  }
  t.set_placement(kind, nodes, n.gpus, n.nics, v.gpus, v.nics, v.switches);
  t.set_node_fabric(n.fabric);
  return v;
}

}  // namespace cs::topo::detail
