#include "sim/network/collective_costs.hpp"

#include <algorithm>
#include <stdexcept>

namespace cs::net {

TransferClass transfer_class(const topo::Topology& topology, int src_rank, int dst_rank) {
  if (topology.node_of_rank(src_rank) != topology.node_of_rank(dst_rank)) return TransferClass::net;
  return topology.node_fabric() == topo::NodeFabric::pcie ? TransferClass::pcie : TransferClass::nvlink;
}

StageLatency::StageLatency(Network& network, const work::Stage& stage) : steps_(stage.steps) {
  for (const work::Transfer& t : stage.transfers)
    add(t, {network.route(t.src, t.dst).latency_s, transfer_class(network.topology(), t.src, t.dst)});
}

StageLatency::StageLatency(const work::Stage& stage, std::span<const Wire> wires) : steps_(stage.steps) {
  if (wires.size() != stage.transfers.size())
    throw std::invalid_argument("StageLatency: one wire per transfer");
  for (std::size_t i = 0; i < wires.size(); ++i) add(stage.transfers[i], wires[i]);
}

void StageLatency::add(const work::Transfer& t, Wire wire) {
  const auto cls = static_cast<std::size_t>(wire.cls);
  if (t.chain < 0) {
    max_wire_s_[cls] = std::max(max_wire_s_[cls], wire.latency_s);
    return;
  }
  if (static_cast<std::size_t>(t.chain) >= pipelines_.size()) pipelines_.resize(t.chain + 1);
  Pipeline& p = pipelines_[t.chain];
  p.wire_s += wire.latency_s;
  ++p.edges[cls];
}

double StageLatency::seconds(const CollectiveCosts& costs) const {
  double step = 0;
  for (std::size_t c = 0; c < 3; ++c)
    if (max_wire_s_[c] >= 0) step = std::max(step, max_wire_s_[c] + costs.step_latency_s[c]);
  for (const Pipeline& p : pipelines_) {
    const uint32_t n = p.edges[0] + p.edges[1] + p.edges[2];
    if (n == 0) continue;
    double total = p.wire_s;
    for (std::size_t c = 0; c < 3; ++c) total += p.edges[c] * costs.step_latency_s[c];
    step = std::max(step, total / n);
  }
  return steps_ * step;
}

double stage_latency_s(Network& network, const work::Stage& stage, const CollectiveCosts& costs) {
  return StageLatency(network, stage).seconds(costs);
}

}  // namespace cs::net
