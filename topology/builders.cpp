// build_topology(): common validation and dispatch to the family builders
// (node.cpp, fat_tree.cpp, custom.cpp, dragonfly.cpp, torus.cpp).
#include <cmath>
#include <string>

#include "topology/build_detail.hpp"
#include "topology/failures.hpp"
#include "topology/topology.hpp"

namespace cs::topo {
namespace detail {

void fail(std::string param, const std::string& what) { throw BuildError(std::move(param), what); }

void check_bandwidth(double value, const std::string& param) {
  // NaN fails the comparison too.
  if (!(value > 0.0) || !std::isfinite(value))
    fail(param, "bandwidth must be a finite number of bytes/s > 0, got " + std::to_string(value));
}

void check_latency(double value, const std::string& param) {
  if (!(value >= 0.0) || !std::isfinite(value))
    fail(param, "latency must be a finite number of seconds >= 0, got " + std::to_string(value));
}

}  // namespace detail

TopologySize topology_size(const TopologyParams& p) {
  detail::check_nodes(p);
  detail::FabricSize fabric;
  switch (p.kind) {
    case TopologyKind::single_node: break;
    case TopologyKind::fat_tree: fabric = detail::fat_tree_fabric_size(p); break;
    case TopologyKind::dragonfly: fabric = detail::dragonfly_fabric_size(p); break;
    case TopologyKind::torus: fabric = detail::torus_fabric_size(p); break;
    case TopologyKind::custom:
      fabric = {static_cast<int64_t>(p.switches.size()), static_cast<int64_t>(p.links.size())};
      break;
  }
  const int64_t nodes = p.kind == TopologyKind::single_node ? 1 : p.nodes;
  return {nodes * detail::node_vertex_count(p.node) + fabric.vertices,
          nodes * detail::node_cable_count(p.node) + fabric.cables};
}

Topology build_topology(const TopologyParams& p) {
  detail::check_nodes(p);
  Topology t;
  switch (p.kind) {
    case TopologyKind::single_node: {
      if (p.nodes != 1)
        detail::fail("nodes", "a single_node topology has exactly 1 node, got " +
                                  std::to_string(p.nodes) + " (use fat_tree or custom for more)");
      t.reserve(static_cast<std::size_t>(detail::node_vertex_count(p.node)),
                static_cast<std::size_t>(detail::node_cable_count(p.node)));
      detail::add_nodes(t, p.kind, p.node, 1);
      break;
    }
    case TopologyKind::fat_tree:
      detail::build_fat_tree(t, p);
      break;
    case TopologyKind::custom:
      detail::build_custom(t, p);
      break;
    case TopologyKind::dragonfly:
      detail::build_dragonfly(t, p);
      break;
    case TopologyKind::torus:
      detail::build_torus(t, p);
      break;
    default:
      detail::fail("kind", "unknown topology kind");
  }
  apply_failures(t, p.failed);
  return t;
}

}  // namespace cs::topo
