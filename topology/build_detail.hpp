#pragma once
// Internal to the builders: parameter checks that throw BuildError, and the per-family
// builders that build_topology() dispatches to. Not part of the public interface.
#include <cstdint>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace cs::topo::detail {

[[noreturn]] void fail(std::string param, const std::string& what);
// bandwidth: finite and > 0 (bytes/s).
void check_bandwidth(double value, const std::string& param);
// latency: finite and >= 0 (s).
void check_latency(double value, const std::string& param);

// Vertices of the nodes, in placement order (rank order for GPUs, global NIC order for NICs).
struct NodeVertices {
  std::vector<VertexId> gpus, nics, switches;
};

// Checks nodes and the node parameters (counts, bandwidths, latencies, size limits).
void check_nodes(const TopologyParams& p);
// Vertices and cables one node contributes (for reserve()).
int64_t node_vertex_count(const NodeParams& node);
int64_t node_cable_count(const NodeParams& node);
// Adds every node's GPUs, NICs, node switch and node-internal cables, and records the
// placement in the topology. Assumes check_nodes passed.
NodeVertices add_nodes(Topology& t, TopologyKind kind, const NodeParams& node, int nodes);
// Vertex names, shared with the custom builder's name resolution.
std::string node_prefix(int node);  // "n<node>"
std::string gpu_name(int node, int j);
std::string nic_name(int node, int j, int nics_per_node);

// Vertices and cables a family's fabric adds beyond the nodes' own, from the parameters alone
// (after the family's checks): what the builder reserves, and what topology_size() reports.
struct FabricSize {
  int64_t vertices = 0, cables = 0;
};
FabricSize fat_tree_fabric_size(const TopologyParams& p);   // fat_tree.cpp
FabricSize dragonfly_fabric_size(const TopologyParams& p);  // dragonfly.cpp
FabricSize torus_fabric_size(const TopologyParams& p);      // torus.cpp

void build_fat_tree(Topology& t, const TopologyParams& p);
void build_custom(Topology& t, const TopologyParams& p);
void build_dragonfly(Topology& t, const TopologyParams& p);  // dragonfly.cpp
void build_torus(Topology& t, const TopologyParams& p);      // torus.cpp

}  // namespace cs::topo::detail
