#include "sim/network/collective_costs.hpp"

#include <algorithm>

namespace cs::net {

TransferClass transfer_class(const topo::Topology& topology, int src_rank, int dst_rank) {
  if (topology.node_of_rank(src_rank) != topology.node_of_rank(dst_rank)) return TransferClass::net;
  return topology.node_fabric() == topo::NodeFabric::pcie ? TransferClass::pcie : TransferClass::nvlink;
}

double stage_latency_s(Network& network, const work::Stage& stage, const CollectiveCosts& costs) {
  double step = 0;
  for (const work::Transfer& t : stage.transfers) {
    const double wire = network.route(t.src, t.dst).latency_s;
    const auto cls = static_cast<std::size_t>(transfer_class(network.topology(), t.src, t.dst));
    step = std::max(step, wire + costs.step_latency_s[cls]);
  }
  return stage.steps * step;
}

}  // namespace cs::net
