#pragma once
// What a collective's transfers cost beyond the wire: per-step software and hardware latency
// and the protocol's payload efficiency, as NCCL's tuning model states them (the numbers are
// data: data/nccl_tuning.json, with sources). Both network models price a plan's stages with
// these, so they agree where nothing contends.
//
// One step of a transfer from a to b costs the route's wire latency (topology) plus
// step_latency_s[class], where the class is nvlink or pcie when a and b share a node (by the
// node's fabric) and net otherwise. A pipeline's step costs the mean over its edges: a chunk
// crosses them in turn, so a ring of n ranks on k nodes pays k net steps per n (NCCL's model
// counts intra- and inter-node steps the same way). A stage costs `steps` times the largest
// step cost among its pipelines and independent transfers; a collective adds base_latency_s
// once.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/network/network.hpp"
#include "workloads/collective_plan.hpp"

namespace cs::net {

enum class TransferClass : uint8_t { nvlink = 0, pcie = 1, net = 2 };

struct CollectiveCosts {
  double base_latency_s = 0;                           // once per collective, >= 0
  std::array<double, 3> step_latency_s{0, 0, 0};       // by TransferClass, >= 0
  double bandwidth_efficiency = 1;                     // payload / bytes on the wire, in (0, 1]
};

// Costs for every algorithm (index: work::CollectiveAlgorithm). Default: all zero, efficiency
// 1: the wire alone (closed-form tests use this).
struct CollectiveCostTable {
  std::array<CollectiveCosts, 8> by_algorithm{};
  const CollectiveCosts& operator[](work::CollectiveAlgorithm a) const {
    return by_algorithm[static_cast<std::size_t>(a)];
  }
  CollectiveCosts& operator[](work::CollectiveAlgorithm a) {
    return by_algorithm[static_cast<std::size_t>(a)];
  }
};

TransferClass transfer_class(const topo::Topology& topology, int src_rank, int dst_rank);

// What a stage's latency depends on, gathered once (routing) and priced for any costs.
class StageLatency {
 public:
  StageLatency(Network& network, const work::Stage& stage);
  // What the latency needs of one transfer's route.
  struct Wire {
    double latency_s = 0;  // network.route(src, dst).latency_s
    TransferClass cls = TransferClass::net;  // transfer_class(topology, src, dst)
  };
  // The same from routes already looked up: wires[i] for stage.transfers[i], one each.
  StageLatency(const work::Stage& stage, std::span<const Wire> wires);
  double seconds(const CollectiveCosts& costs) const;

 private:
  void add(const work::Transfer& t, Wire wire);

  struct Pipeline {
    double wire_s = 0;                     // sum over its edges of route latency
    std::array<uint32_t, 3> edges{0, 0, 0};  // edges by TransferClass
  };
  std::vector<Pipeline> pipelines_;
  std::array<double, 3> max_wire_s_{-1, -1, -1};  // independent transfers, by class; -1: none
  int steps_ = 1;
};

// The latency of one stage (StageLatency, for one use).
double stage_latency_s(Network& network, const work::Stage& stage, const CollectiveCosts& costs);

}  // namespace cs::net
