// make_router() and the node-side legs shared by all routings.
#include "topology/routing.hpp"

#include <stdexcept>
#include <string>

#include "topology/routing_detail.hpp"

namespace cs::topo {
namespace detail {
namespace {

LinkId need_link(const Topology& t, VertexId a, VertexId b) {
  if (const auto l = t.find_link(a, b)) return *l;
  throw std::logic_error("topology has no link " + t.vertex(a).name + " -> " + t.vertex(b).name);
}

// from -> PCIe switch a -> (the host -> PCIe switch b, when b is another switch) -> to.
void append_via_pcie(const Topology& t, int node, VertexId from, VertexId a, VertexId b,
                     VertexId to, std::vector<LinkId>& out) {
  out.push_back(need_link(t, from, a));
  if (a != b) {
    out.push_back(need_link(t, a, t.host(node)));
    out.push_back(need_link(t, t.host(node), b));
  }
  out.push_back(need_link(t, b, to));
}

}  // namespace

void append_gpu_to_nic(const Topology& t, int rank, std::vector<LinkId>& out) {
  const int node = t.node_of_rank(rank);
  const VertexId gpu = t.gpu(rank);
  const int local = t.local_of_rank(rank), j = t.nic_of_local_gpu(local);
  const VertexId nic = t.nic(node, j);
  if (t.pcie_switches_per_node() > 0) {
    // Up to the GPU's PCIe switch, across the host if the NIC is behind another one, down.
    append_via_pcie(t, node, gpu, t.pcie_switch(node, t.pcie_switch_of_gpu(local)),
                    t.pcie_switch(node, t.pcie_switch_of_nic(j)), nic, out);
    return;
  }
  if (const auto direct = t.find_link(gpu, nic)) {
    out.push_back(*direct);
    return;
  }
  const VertexId sw = t.node_switch(node);
  out.push_back(need_link(t, gpu, sw));
  out.push_back(need_link(t, sw, nic));
}

void append_nic_to_gpu(const Topology& t, int rank, std::vector<LinkId>& out) {
  const std::size_t first = out.size();
  append_gpu_to_nic(t, rank, out);
  // Reverse both the order and each link's direction.
  for (std::size_t i = first, j = out.size() - 1; i < j; ++i, --j) std::swap(out[i], out[j]);
  for (std::size_t i = first; i < out.size(); ++i) out[i] = reverse(out[i]);
}

void append_same_node(const Topology& t, int src, int dst, std::vector<LinkId>& out) {
  if (!t.has_node_switch()) {
    append_mesh_path(t, src, dst, out);
    return;
  }
  const int node = t.node_of_rank(src);
  if (t.node_fabric() == NodeFabric::pcie && t.pcie_switches_per_node() > 0) {
    // No NVLink: through the GPUs' PCIe switches, and the host between two of them.
    append_via_pcie(t, node, t.gpu(src),
                    t.pcie_switch(node, t.pcie_switch_of_gpu(t.local_of_rank(src))),
                    t.pcie_switch(node, t.pcie_switch_of_gpu(t.local_of_rank(dst))), t.gpu(dst),
                    out);
    return;
  }
  const VertexId sw = t.node_switch(node);
  out.push_back(need_link(t, t.gpu(src), sw));
  out.push_back(need_link(t, sw, t.gpu(dst)));
}

void finish(const Topology& t, Route& r) {
  r.latency_s = 0.0;
  for (LinkId l : r.links) r.latency_s += t.link(l).latency_s;
}

namespace {

std::invalid_argument needs_family(RoutingKind kind, TopologyKind family, const Topology& t) {
  return std::invalid_argument(std::string("routing '") + std::string(to_string(kind)) + "' needs a " +
                               std::string(to_string(family)) + " topology, not " +
                               std::string(to_string(t.kind())) + "; use 'shortest'");
}

}  // namespace
}  // namespace detail

std::unique_ptr<AllPairsCounter> Router::start_pairs_counter(std::span<const int> ranks) const {
  (void)ranks;
  return nullptr;
}

std::unique_ptr<AllPairsCounter> Router::choosing_pairs_counter(std::span<const int> ranks) {
  (void)ranks;
  return nullptr;
}

std::unique_ptr<Router> make_router(const Topology& topology, RoutingKind kind, uint64_t seed) {
  if (const auto family = routing_family(kind); family && topology.kind() != *family)
    throw detail::needs_family(kind, *family, topology);
  if (topology.has_failures() && kind == RoutingKind::dor)
    throw std::invalid_argument("routing 'dor' cannot route around failed cables (dimension order gives each pair one "
                                "path); use 'shortest', which routes over the live cables");
  if (topology.has_failures() && kind == RoutingKind::spray)
    throw std::invalid_argument("routing 'spray' models the even split of an intact fat-tree; on a degraded fabric "
                                "use 'ecmp' or 'adaptive'");
  switch (kind) {
    case RoutingKind::dmodk:
    case RoutingKind::ecmp:
    case RoutingKind::adaptive:
    case RoutingKind::spray: return detail::make_fat_tree_router(topology, kind, seed);
    case RoutingKind::shortest: return detail::make_shortest_router(topology);
    case RoutingKind::minimal:
    case RoutingKind::valiant:
    case RoutingKind::ugal:
    case RoutingKind::valiant_packet:
    case RoutingKind::ugal_packet: {
      auto router = detail::make_dragonfly_router(topology, kind, seed);
      if (!topology.has_failures()) return router;
      return detail::make_repairing_router(topology, std::move(router), seed);
    }
    case RoutingKind::dor: return detail::make_torus_router(topology);
  }
  throw std::invalid_argument("unknown routing kind");
}

}  // namespace cs::topo
