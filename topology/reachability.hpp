#pragma once
// Which nodes can reach each other, as routes go: from a node's NICs through fabric switches
// (any number) to another node's NICs, or over a cable joining two nodes' NICs directly. A NIC
// never forwards for a third node, and neither does a GPU (routing.hpp: "transit only through
// fabric switches and the source and destination nodes' NICs and node switches"). The
// builders' fabrics connect every pair; a custom fabric of NIC-to-NIC cables may not: this is
// what the scenario checks before a run, for every pair the workload needs.
#include <cstdint>
#include <vector>

#include "topology/topology.hpp"

namespace cs::topo {

class NodeReachability {
 public:
  explicit NodeReachability(const Topology& topology);
  // Whether a route joins node a and node b (a == b: always).
  bool connected(int a, int b) const;
  // Whether every pair of `nodes` is connected; if not, one pair that is not.
  bool all_connected(const std::vector<int>& nodes, int* a = nullptr, int* b = nullptr) const;

 private:
  // Per node: the components of fabric switches (joined by switch-to-switch cables) its NICs
  // are cabled to, sorted, and the nodes its NICs are cabled to directly, sorted.
  std::vector<std::vector<uint32_t>> components_;
  std::vector<std::vector<int>> direct_;
};

}  // namespace cs::topo
