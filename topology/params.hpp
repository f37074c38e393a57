#pragma once
// What a topology is built from: plain parameters in SI units (bytes/s, seconds).
// Filled by the scenario loader (which validates them); consumed by the builders.
#include <cstdint>
#include <string>
#include <vector>

namespace cs::topo {

enum class NodeFabric : uint8_t { nvswitch, pcie };

// One server. GPUs reach each other over the node fabric; each GPU reaches its NIC (GPU i
// uses NIC floor(i * nics / gpus), its "affinity") over PCIe.
struct NodeParams {
  int gpus = 8;
  NodeFabric fabric = NodeFabric::nvswitch;
  double gpu_bandwidth_Bps = 450e9;   // per GPU, per direction, into the node fabric
  double gpu_latency_s = 0.7e-6;      // GPU <-> node fabric, one way
  int nics = 8;
  double nic_bandwidth_Bps = 50e9;    // 400 Gb/s, per direction
  double pcie_bandwidth_Bps = 64e9;   // GPU <-> NIC (and GPU <-> host for pcie nodes), per direction
  double pcie_latency_s = 0.5e-6;
};

enum class TopologyKind : uint8_t { single_node, fat_tree, custom };

struct CustomLink {
  std::string a, b;         // vertex names: a switch name, or "n<i>" / "n<i>.<j>" for a NIC
  double bandwidth_Bps = 0; // per direction
  double latency_s = 0;
};

struct TopologyParams {
  TopologyKind kind = TopologyKind::fat_tree;
  NodeParams node;
  int nodes = 1;
  double link_bandwidth_Bps = 50e9;  // fabric links, per direction
  double link_latency_s = 0.5e-6;    // fabric links, one way (cable + switch traversal)
  // fat_tree
  int tiers = 2;
  int switch_radix = 64;             // ports per switch
  double oversubscription = 1.0;     // leaf down-ports : up-ports
  bool rail_optimized = false;       // NIC j of every node goes to a rail-j leaf
  // custom
  std::vector<std::string> switches;
  std::vector<CustomLink> links;
};

enum class RoutingKind : uint8_t { dmodk, ecmp, shortest };

}  // namespace cs::topo
