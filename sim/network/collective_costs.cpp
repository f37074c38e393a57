#include "sim/network/collective_costs.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/network/network.hpp"
#include "topology/all_pairs.hpp"

namespace cs::net {

std::string_view to_string(Protocol protocol) { return name_of(kProtocolNames, protocol); }

TransferClass transfer_class(const topo::Topology& topology, int src_rank, int dst_rank) {
  if (topology.node_of_rank(src_rank) != topology.node_of_rank(dst_rank)) return TransferClass::net;
  return topology.node_fabric() == topo::NodeFabric::pcie ? TransferClass::pcie : TransferClass::nvlink;
}

std::array<double, 3> max_wire_by_class(const topo::Topology& topology, int member, const topo::PairLoads& count) {
  std::array<double, 3> max_wire_s{-1, -1, -1};
  max_wire_s[static_cast<std::size_t>(transfer_class(topology, member, member))] = count.max_latency_same_node_s;
  max_wire_s[static_cast<std::size_t>(TransferClass::net)] = count.max_latency_across_s;
  return max_wire_s;
}

StageLatency::StageLatency(Network& network, const work::Stage& stage)
    : steps_(stage.steps), inter_node_steps_(stage.inter_node_steps) {
  stage.for_each([&](const work::Transfer& t) {
    add(t, {network.route(t.src, t.dst).latency_s, transfer_class(network.topology(), t.src, t.dst)});
  });
  finish();
}

StageLatency::StageLatency(const work::Stage& stage, std::span<const Wire> wires)
    : steps_(stage.steps), inter_node_steps_(stage.inter_node_steps) {
  if (wires.size() != stage.size()) throw std::invalid_argument("StageLatency: one wire per transfer");
  for (std::size_t i = 0; i < wires.size(); ++i) add(stage.transfer(i), wires[i]);
  finish();
}

void StageLatency::add(const work::Transfer& t, Wire wire) {
  const auto cls = static_cast<std::size_t>(wire.cls);
  if (t.chain < 0) {
    max_wire_s_[cls] = std::max(max_wire_s_[cls], wire.latency_s);
    return;
  }
  if (static_cast<std::size_t>(t.chain) >= pipelines_.size()) pipelines_.resize(t.chain + 1);
  pipelines_[t.chain].wires[cls].push_back(wire.latency_s);
}

void StageLatency::finish() {
  for (Pipeline& p : pipelines_)
    for (std::size_t c = 0; c < 3; ++c) {
      std::sort(p.wires[c].begin(), p.wires[c].end());
      p.prefix[c].assign(1, 0.0);
      for (double w : p.wires[c]) p.prefix[c].push_back(p.prefix[c].back() + w);
    }
}

double StageLatency::seconds(const CollectiveCosts& costs) const {
  double step = 0;
  for (std::size_t c = 0; c < 3; ++c)
    if (max_wire_s_[c] >= 0) step = std::max(step, step_cost_s(max_wire_s_[c], costs.step_latency_s[c]));
  double pipeline_s = 0;  // the slowest pipeline's whole latency, where steps are split by class
  for (const Pipeline& p : pipelines_) {
    // Sum and count of the edges' step costs, inside nodes (nvlink, pcie) and across (net).
    std::array<double, 2> total{0, 0};
    std::array<std::size_t, 2> n{0, 0};
    for (std::size_t c = 0; c < 3; ++c) {
      const std::vector<double>& w = p.wires[c];
      const double h = costs.step_latency_s[c];
      // Edges whose wire is at most h cost h; the others their wire.
      const auto below = static_cast<std::size_t>(std::upper_bound(w.begin(), w.end(), h) - w.begin());
      const std::size_t across = c == static_cast<std::size_t>(TransferClass::net) ? 1 : 0;
      total[across] += h * static_cast<double>(below) + (p.prefix[c].back() - p.prefix[c][below]);
      n[across] += w.size();
    }
    if (n[0] + n[1] == 0) continue;
    const double mean = (total[0] + total[1]) / static_cast<double>(n[0] + n[1]);
    if (inter_node_steps_ < 0) {
      step = std::max(step, mean);
      continue;
    }
    const double inside = n[0] > 0 ? total[0] / static_cast<double>(n[0]) : mean;
    const double across = n[1] > 0 ? total[1] / static_cast<double>(n[1]) : mean;
    pipeline_s = std::max(pipeline_s, (steps_ - inter_node_steps_) * inside + inter_node_steps_ * across);
  }
  return std::max(steps_ * step, pipeline_s);
}

double stage_latency_s(Network& network, const work::Stage& stage, const CollectiveCosts& costs) {
  return StageLatency(network, stage).seconds(costs);
}

}  // namespace cs::net
