#include "sim/compute/tpu_slice.hpp"

#include <stdexcept>

namespace cs::compute {

void set_tpu_slice_topology(const GpuSpec& spec, const std::vector<int>& shape, topo::TopologyParams& p) {
  p.kind = topo::TopologyKind::torus;
  p.dims = shape;
  p.nodes = 1;
  for (int side : shape) p.nodes *= side;
  p.node.gpus = 1;
  p.node.nics = 1;
  p.node.fabric = topo::NodeFabric::nvlink_mesh;
  p.node.mesh = topo::NodeMesh::full;
  // The chip reaches its ICI ports at their sum; the host's PCIe is not on the path (a chip
  // sends over ICI directly), so the node's pcie cable carries the same rate.
  const double ports_Bps = spec.ici_links * spec.ici_link_Bps;
  p.node.nic_bandwidth_Bps = ports_Bps;
  p.node.pcie_bandwidth_Bps = ports_Bps;
  p.link_bandwidth_Bps = spec.ici_link_Bps;
  p.link_latency_s = kIciHopLatency_s;
}

std::vector<int> tpu_host_shape(const GpuSpec& spec, int chips) {
  if (chips < 1) throw std::invalid_argument("tpu_host_shape: chips must be >= 1");
  int a = 1;
  for (int d = 1; d * d <= chips; ++d)
    if (chips % d == 0) a = d;
  std::vector<int> shape{a, chips / a};
  if (spec.ici_links >= 6) shape.insert(shape.begin(), 1);  // a 3D generation's host: one layer
  return shape;
}

}  // namespace cs::compute
