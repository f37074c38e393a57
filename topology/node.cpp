// Servers: GPUs, NICs and the node switch (NVSwitch or PCIe host) or NVLink mesh, and their
// cables.
#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "topology/build_detail.hpp"

namespace cs::topo::detail {
namespace {

// Two GPUs of a node joined by `links` NVLinks (one cable carrying them all).
struct MeshPair {
  int a, b, links;
};

// DGX-1 with Tesla V100 ("DGX-1V"): a cube with a GPU at each corner, all 12 edges NVLink, and
// the diagonals of the faces 0-1-2-3 and 4-5-6-7, so each quad is fully connected and GPU i
// is joined to GPU i+4. Each V100 has 6 NVLinks of 25 GB/s per direction, so 8 of the 16
// neighbour pairs have two. Source: NVIDIA, "NVIDIA DGX-1 With Tesla V100 System
// Architecture", white paper WP-08437-002 (2017), section "DGX-1 NVLink Network Topology for
// Efficient Application Scaling" (its text: https://www.iitr.ac.in/dgx); the links per pair are
// those nvidia-smi topo -m reports on a DGX-1V (NV2 / NV1).
constexpr MeshPair kHybridCube[] = {
    {0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {1, 2, 2}, {1, 3, 1}, {2, 3, 2},  // quad 0-3
    {4, 5, 1}, {4, 6, 1}, {4, 7, 2}, {5, 6, 2}, {5, 7, 1}, {6, 7, 2},  // quad 4-7
    {0, 4, 2}, {1, 5, 2}, {2, 6, 1}, {3, 7, 1},                        // cube edges between
};
constexpr int kHybridCubeGpus = 8;
constexpr int kHybridCubeLinksPerGpu = 6;
// A full mesh needs gpus - 1 NVLink ports per GPU (18 on an H100); beyond this it is a typo.
constexpr int kMaxFullMeshGpus = 64;
// torus_4x4: AWS Neuron documentation, "Trn1/Trn1n Architecture" (16 Trainium chips per server in
// a 2D torus) and "Best practices for training on AWS Neuron" (trn2.48xlarge: NeuronLink-v3's 4 x 4
// torus).
constexpr int kTorusSide = 4;
constexpr int kTorusChips = kTorusSide * kTorusSide;

// The NVLink cables of one nvlink_mesh node, and how many NVLinks each GPU has.
std::vector<MeshPair> mesh_pairs(const NodeParams& n, int& links_per_gpu) {
  if (n.mesh == NodeMesh::hybrid_cube) {
    links_per_gpu = kHybridCubeLinksPerGpu;
    return {std::begin(kHybridCube), std::end(kHybridCube)};
  }
  if (n.mesh == NodeMesh::torus_4x4) {  // chip 4r + c joined to (r, c+1) and (r+1, c), wrapping
    links_per_gpu = 4;
    std::vector<MeshPair> pairs;
    for (int r = 0; r < kTorusSide; ++r)
      for (int c = 0; c < kTorusSide; ++c) {
        pairs.push_back({kTorusSide * r + c, kTorusSide * r + (c + 1) % kTorusSide, 1});
        pairs.push_back({kTorusSide * r + c, kTorusSide * ((r + 1) % kTorusSide) + c, 1});
      }
    return pairs;
  }
  if (n.mesh == NodeMesh::ring) {  // two GPUs: one cable carrying both links
    links_per_gpu = 2;
    if (n.gpus == 2) return {{0, 1, 2}};
    std::vector<MeshPair> pairs;
    for (int a = 0; a < n.gpus; ++a) pairs.push_back({std::min(a, (a + 1) % n.gpus), std::max(a, (a + 1) % n.gpus), 1});
    return pairs;
  }
  links_per_gpu = n.gpus - 1;
  std::vector<MeshPair> pairs;
  pairs.reserve(static_cast<std::size_t>(int64_t{n.gpus} * (n.gpus - 1) / 2));
  for (int a = 0; a < n.gpus; ++a)
    for (int b = a + 1; b < n.gpus; ++b) pairs.push_back({a, b, 1});
  return pairs;
}

int64_t mesh_cable_count(const NodeParams& n) {
  switch (n.mesh) {
    case NodeMesh::hybrid_cube: return static_cast<int64_t>(std::size(kHybridCube));
    case NodeMesh::torus_4x4: return 2 * kTorusChips;
    case NodeMesh::ring: return n.gpus == 2 ? 1 : n.gpus;
    case NodeMesh::full: break;
  }
  return int64_t{n.gpus} * (n.gpus - 1) / 2;
}

}  // namespace

void check_nodes(const TopologyParams& p) {
  const NodeParams& n = p.node;
  if (p.nodes < 1) fail("nodes", "need at least 1 node, got " + std::to_string(p.nodes));
  if (n.gpus < 1) fail("node.gpus", "need at least 1 GPU per node, got " + std::to_string(n.gpus));
  if (n.nics < 1) fail("node.nics", "need at least 1 NIC per node, got " + std::to_string(n.nics));
  if (n.fabric != NodeFabric::nvswitch && n.fabric != NodeFabric::pcie &&
      n.fabric != NodeFabric::nvlink_mesh)
    fail("node.fabric", "unknown node fabric (expected nvswitch, nvlink_mesh or pcie)");
  if (n.fabric == NodeFabric::nvlink_mesh) {
    if (n.mesh != NodeMesh::full && n.mesh != NodeMesh::hybrid_cube && n.mesh != NodeMesh::torus_4x4 &&
        n.mesh != NodeMesh::ring)
      fail("node.mesh", "unknown NVLink mesh (expected full, hybrid_cube, torus_4x4 or ring)");
    if (n.mesh == NodeMesh::torus_4x4 && n.gpus != kTorusChips)
      fail("node.mesh", "torus_4x4 is a 16-chip node; got " + std::to_string(n.gpus) + " GPUs per node");
    if (n.mesh == NodeMesh::ring && n.gpus < 2)
      fail("node.mesh", "a ring needs at least 2 GPUs per node; got " + std::to_string(n.gpus));
    if (n.mesh == NodeMesh::full && n.gpus > kMaxFullMeshGpus)
      fail("node.gpus", "a full NVLink mesh of " + std::to_string(n.gpus) + " GPUs needs " +
                            std::to_string(n.gpus - 1) + " NVLinks per GPU; at most " +
                            std::to_string(kMaxFullMeshGpus) + " GPUs (use nvswitch)");
    if (n.mesh == NodeMesh::hybrid_cube && n.gpus != kHybridCubeGpus)
      fail("node.mesh", "hybrid_cube is the 8-GPU DGX-1 mesh; got " + std::to_string(n.gpus) +
                            " GPUs per node (use full for an all-to-all mesh)");
  }
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
  if (n.pcie_switches < 0 || n.pcie_switches > n.gpus)
    fail("node.pcie_switches", "expected 1 to " + std::to_string(n.gpus) +
                                   " PCIe switches (at most one per GPU), got " +
                                   std::to_string(n.pcie_switches));
}

int64_t node_vertex_count(const NodeParams& node) {
  int64_t extra = 0;  // PCIe switches, and a host when the node switch is not the host
  if (node.pcie_switches > 0)
    extra = node.pcie_switches + (node.fabric == NodeFabric::pcie ? 0 : 1);
  return int64_t{node.gpus} + node.nics + (node.fabric == NodeFabric::nvlink_mesh ? 0 : 1) + extra;
}

int64_t node_cable_count(const NodeParams& node) {
  // nvswitch: GPU-switch and GPU-NIC per GPU; pcie: GPU-host per GPU and NIC-host per NIC;
  // nvlink_mesh: the GPU-GPU cables and GPU-NIC per GPU. With PCIe switches, GPU-switch per
  // GPU, NIC-switch per NIC and switch-host per switch replace the PCIe cables above.
  if (node.pcie_switches > 0) {
    const int64_t pcie = int64_t{node.gpus} + node.nics + node.pcie_switches;
    switch (node.fabric) {
      case NodeFabric::nvswitch: return node.gpus + pcie;
      case NodeFabric::pcie: return pcie;
      case NodeFabric::nvlink_mesh: return mesh_cable_count(node) + pcie;
    }
  }
  switch (node.fabric) {
    case NodeFabric::nvswitch: return 2 * int64_t{node.gpus};
    case NodeFabric::pcie: return int64_t{node.gpus} + node.nics;
    case NodeFabric::nvlink_mesh: return mesh_cable_count(node) + node.gpus;
  }
  return 0;
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

namespace {

// One nvlink_mesh node's cables: the NVLink cables (each of the GPU's share of gpu_bandwidth
// per NVLink it carries), then each GPU's PCIe cable to its affine NIC.
void add_mesh(Topology& t, const NodeParams& n, std::span<const VertexId> gpus,
              std::span<const VertexId> nics, const std::vector<MeshPair>& pairs,
              int links_per_gpu) {
  for (const MeshPair& m : pairs)
    t.add_cable(gpus[static_cast<std::size_t>(m.a)], gpus[static_cast<std::size_t>(m.b)],
                n.gpu_bandwidth_Bps * m.links / links_per_gpu, n.gpu_latency_s,
                LinkKind::node_fabric);
  if (n.pcie_switches > 0) return;  // GPUs reach NICs through the PCIe switches
  for (int j = 0; j < n.gpus; ++j)
    t.add_cable(gpus[static_cast<std::size_t>(j)],
                nics[static_cast<std::size_t>(int64_t{j} * n.nics / n.gpus)],
                n.pcie_bandwidth_Bps, n.pcie_latency_s, LinkKind::pcie);
}

// One node's PCIe switches ("n<i>.pcie<k>", appended to `out`), each with its uplink to the
// host, then the GPUs' and NICs' cables to their switches (see NodeParams::pcie_switches).
void add_pcie_switches(Topology& t, const NodeParams& n, int node, std::span<const VertexId> gpus,
                       std::span<const VertexId> nics, VertexId host, std::vector<VertexId>& out) {
  const std::size_t first = out.size();
  const int s = n.pcie_switches;
  for (int k = 0; k < s; ++k) {
    std::string name = node_prefix(node);
    name += ".pcie";
    name += std::to_string(k);
    const VertexId v = t.add_vertex(VertexKind::node_switch, node, k, 0, std::move(name));
    out.push_back(v);
    t.add_cable(v, host, n.pcie_bandwidth_Bps, n.pcie_latency_s, LinkKind::pcie);
  }
  for (int j = 0; j < n.gpus; ++j)
    t.add_cable(gpus[static_cast<std::size_t>(j)],
                out[first + static_cast<std::size_t>(int64_t{j} * s / n.gpus)],
                n.pcie_bandwidth_Bps, n.pcie_latency_s, LinkKind::pcie);
  for (int j = 0; j < n.nics; ++j)
    t.add_cable(nics[static_cast<std::size_t>(j)],
                out[first + static_cast<std::size_t>(int64_t{j} * s / n.nics)],
                n.pcie_bandwidth_Bps, n.pcie_latency_s, LinkKind::pcie);
}

}  // namespace

NodeVertices add_nodes(Topology& t, TopologyKind kind, const NodeParams& n, int nodes) {
  NodeVertices v;
  v.gpus.reserve(static_cast<std::size_t>(nodes) * static_cast<std::size_t>(n.gpus));
  v.nics.reserve(static_cast<std::size_t>(nodes) * static_cast<std::size_t>(n.nics));
  v.switches.reserve(static_cast<std::size_t>(nodes));
  const bool nvswitch = n.fabric == NodeFabric::nvswitch;
  const bool mesh = n.fabric == NodeFabric::nvlink_mesh;
  const std::string switch_suffix = nvswitch ? ".nvswitch" : ".host";
  int mesh_links_per_gpu = 0;
  const std::vector<MeshPair> pairs = mesh ? mesh_pairs(n, mesh_links_per_gpu)
                                           : std::vector<MeshPair>{};
  const bool pcie_switches = n.pcie_switches > 0;
  std::vector<VertexId> pcie, hosts;
  if (pcie_switches) {
    pcie.reserve(static_cast<std::size_t>(nodes) * static_cast<std::size_t>(n.pcie_switches));
    hosts.reserve(static_cast<std::size_t>(nodes));
  }
  for (int i = 0; i < nodes; ++i) {
    const std::size_t first_gpu = v.gpus.size(), first_nic = v.nics.size();
    for (int j = 0; j < n.gpus; ++j)
      v.gpus.push_back(t.add_vertex(VertexKind::gpu, i, j, 0, gpu_name(i, j)));
    for (int j = 0; j < n.nics; ++j)
      v.nics.push_back(t.add_vertex(VertexKind::nic, i, j, 0, nic_name(i, j, n.nics)));
    const auto node_gpus = std::span<const VertexId>(v.gpus).subspan(first_gpu);
    const auto node_nics = std::span<const VertexId>(v.nics).subspan(first_nic);
    if (mesh) {
      add_mesh(t, n, node_gpus, node_nics, pairs, mesh_links_per_gpu);
      if (pcie_switches) {
        hosts.push_back(t.add_vertex(VertexKind::node_switch, i, 0, 0, node_prefix(i) += ".host"));
        add_pcie_switches(t, n, i, node_gpus, node_nics, hosts.back(), pcie);
      }
      continue;
    }
    const VertexId sw =
        t.add_vertex(VertexKind::node_switch, i, 0, 0, node_prefix(i) += switch_suffix);
    v.switches.push_back(sw);
    if (pcie_switches) {
      // GPU-NVSwitch cables (nvswitch nodes), then the PCIe tree under the host.
      if (nvswitch)
        for (const VertexId gpu : node_gpus)
          t.add_cable(gpu, sw, n.gpu_bandwidth_Bps, n.gpu_latency_s, LinkKind::node_fabric);
      hosts.push_back(nvswitch ? t.add_vertex(VertexKind::node_switch, i, 1, 0,
                                              node_prefix(i) += ".host")
                               : sw);
      add_pcie_switches(t, n, i, node_gpus, node_nics, hosts.back(), pcie);
    } else if (nvswitch) {
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
  if (pcie_switches) t.set_pcie(n.pcie_switches, std::move(pcie), std::move(hosts));
  return v;
}

}  // namespace cs::topo::detail
