#pragma once
// What a collective's transfers cost beyond the wire: per-step software and hardware latency
// and the protocol's payload efficiency, as NCCL's tuning model states them (the numbers are
// data: data/nccl_tuning.json, with sources). Both network models price a plan's stages with
// these, so they agree where nothing contends.
//
// One step of a transfer from a to b costs step_cost_s(route's wire latency, step_latency_s
// [class]), where the class is nvlink or pcie when a and b share a node (by the node's fabric)
// and net otherwise: the larger of the two. NCCL's per-step latencies are end-to-end figures
// fitted on real systems, so they already hold a typical link's wire latency; adding the
// topology's on top would count it twice, while a route slower than NCCL's figure (long
// cables, many switch hops) still shows. With no protocol ("none": all zero) a step is the
// wire alone. A pipeline's step costs the mean over its edges: a chunk crosses them in turn,
// so a ring of n ranks on k nodes pays k net steps per n (NCCL's model counts intra- and
// inter-node steps the same way). A stage costs `steps` times the largest step cost among its
// pipelines and independent transfers; a collective adds base_latency_s once. Where the plan
// states how many of its steps cross nodes (work::Stage::inter_node_steps: the tree across
// nodes, whose few inter-node levels are a small share of its edges but a large one of its
// critical path), a pipeline costs those steps at the mean over its net edges and the others
// at the mean over its edges inside nodes, as NCCL's tuner prices a tree.
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "sim/network/comm_config.hpp"
#include "workloads/collective_plan.hpp"

namespace cs::topo {
class Topology;
struct PairLoads;
}  // namespace cs::topo

namespace cs::net {

class Network;

enum class TransferClass : uint8_t { nvlink = 0, pcie = 1, net = 2 };

struct CollectiveCosts {
  double base_latency_s = 0;                           // once per collective, >= 0
  std::array<double, 3> step_latency_s{0, 0, 0};       // by TransferClass, >= 0
  double bandwidth_efficiency = 1;                     // payload / bytes on the wire, in (0, 1]
  bool operator==(const CollectiveCosts&) const = default;
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

// An all-pairs stage's longest route latency by TransferClass (-1 where the stage has no route
// of that class), from a count's maxima; `member` is any member (its node's fabric names the
// same-node class).
std::array<double, 3> max_wire_by_class(const topo::Topology& topology, int member, const topo::PairLoads& count);

// The latency of one step over a route with `wire_s` of its own, where NCCL's model says
// `step_latency_s` for the route's class (see the header comment).
inline double step_cost_s(double wire_s, double step_latency_s) { return std::max(wire_s, step_latency_s); }

// What a stage's latency depends on, gathered once (routing) and priced for any costs.
class StageLatency {
 public:
  StageLatency(Network& network, const work::Stage& stage);
  // What the latency needs of one transfer's route.
  struct Wire {
    double latency_s = 0;  // network.route(src, dst).latency_s
    TransferClass cls = TransferClass::net;  // transfer_class(topology, src, dst)
  };
  // The same from routes already looked up: wires[i] for stage.transfer(i), one each.
  StageLatency(const work::Stage& stage, std::span<const Wire> wires);
  // A stage of independent transfers only (an all-pairs stage), from its slowest wire per
  // TransferClass (-1: no transfer of the class).
  StageLatency(int steps, const std::array<double, 3>& max_wire_s) : max_wire_s_(max_wire_s), steps_(steps) {}
  double seconds(const CollectiveCosts& costs) const;

 private:
  void add(const work::Transfer& t, Wire wire);

  // A pipeline's edges' wire latencies by TransferClass, ascending, with prefix sums (a
  // leading 0): sum over edges of max(wire, h) = (sum of wires above h) + h x (count <= h).
  struct Pipeline {
    std::array<std::vector<double>, 3> wires, prefix;
  };
  void finish();  // sorts each pipeline's wires and sums them
  std::vector<Pipeline> pipelines_;
  std::array<double, 3> max_wire_s_{-1, -1, -1};  // independent transfers, by class; -1: none
  int steps_ = 1;
  int inter_node_steps_ = -1;  // work::Stage::inter_node_steps
};

// The latency of one stage (StageLatency, for one use).
double stage_latency_s(Network& network, const work::Stage& stage, const CollectiveCosts& costs);

}  // namespace cs::net
