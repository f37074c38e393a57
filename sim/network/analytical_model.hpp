#pragma once
// The analytical network model: alpha-beta with topology-aware bottlenecks.
//
// A plan's stage costs its latency (StageLatency, collective_costs.hpp: steps x the slowest
// latency) plus its bandwidth term: the bytes of every link divided by the link's capacity,
// at the busiest link. Link loads come from a sparse routing matrix R (links x transfers,
// R[l][t] = how many times transfer t's route crosses link l) times the stage's traffic
// vector (bytes per transfer, share x S / protocol efficiency): loads = R t.
//
// This is exact, and equal to the flow model, whenever each link's load is one pipeline's or
// one transfer's (nothing contends), and when one pipeline crosses a link several times (the
// flow model then gives it 1/m of the link). Under contention between independent transfers
// it is the bound max-min reaches only when the busiest link stays busy to the end.
//
// Several collectives at once, and collectives beside other traffic, share the fabric over
// time: stage_fluid.hpp runs routed plans on the simulator, stage by stage.
//
// Units: bytes, bytes/s, seconds.
#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "sim/network/collective_costs.hpp"
#include "sim/network/network.hpp"
#include "workloads/collective_plan.hpp"

namespace cs::net {

struct StageEstimate {
  double latency_s = 0;
  double bandwidth_s = 0;   // max over links of load / capacity
  topo::LinkId bottleneck = 0;  // the link that sets bandwidth_s (topology link id)
};

struct CollectiveEstimate {
  double time_s = 0;  // base latency + sum over stages of (latency + bandwidth)
  std::vector<StageEstimate> stages;
};

// A plan with its routing, reduced per stage to what the models need: the links its routes
// cross with their unit loads (R shares, R the stage's routing matrix, never stored: links x
// transfers, R[l][t] = how many times transfer t's route crosses link l) and crossings (R 1),
// its busiest link per byte, and what prices its latency. Built once and reused for every
// size and cost table. Keeps a reference to `plan`, which must outlive it. Routes are those
// of network.route(src, dst) (flow key 0, or flow_key's), as stage_latency_s and the flow
// model's runs use.
//
// A stage's link loads scale with the collective's size: load = (R shares) x S / efficiency.
// So the unit loads and the busiest link per byte are computed here once, and a lone estimate
// costs O(stages), whatever the fabric's size.
//
// An all-pairs stage (work::Stage::all_pairs: a direct exchange) is streamed where the routing
// computes routes without caching them (Router::route_into: every routing but adaptive, ugal
// and shortest) and no flow key is given: pair by pair on every core, counting crossings per
// link in integers (the same sums in any order, so the same numbers on any number of
// threads), keeping no route and no transfer. Its unit loads are crossings x the pair share.
// So an all-to-all over 16,384 GPUs (268 M pairs) costs memory in the fabric's links alone.
// A stage of fewer pairs than the fabric's links / kHopsPerPair is listed instead (the same
// result: streaming costs an array over every link per thread). Load-aware routings (adaptive,
// ugal) place pair after pair, each seeing the ones before (Network::StagePlacement): their
// all-pairs stages are streamed on one thread, in the listed order, routes computed and
// dropped (Network::place_into), so they too cost the fabric's links, not the pairs.
class RoutedPlan {
 public:
  // Flow key of transfer t of stage s, for routings that hash flows (ECMP); none: key 0.
  using FlowKeyOf = std::function<uint64_t(std::size_t stage, std::size_t transfer)>;
  RoutedPlan(Network& network, const work::CollectivePlan& plan, const FlowKeyOf& flow_key = {});
  const work::CollectivePlan& plan() const { return plan_; }
  std::size_t stages() const { return links_.size(); }
  // The payload stage s delivers per byte of S: the sum of its transfers' shares.
  double payload_share(std::size_t s) const { return payload_share_[s]; }
  // The model links stage s crosses (network.hpp: topology links, then bundles), ascending,
  // and beside each the bytes it carries per byte of S at efficiency 1 (R shares) and the
  // transfers crossing it (R 1: a transfer crossing it m times counts m times).
  std::span<const uint32_t> links(std::size_t s) const { return links_[s]; }
  std::span<const double> unit_loads(std::size_t s) const { return unit_load_[s]; }
  std::span<const double> crossings(std::size_t s) const { return crossings_[s]; }
  // Stage s alone: seconds per byte of S at efficiency 1 at its busiest link, and that link.
  double per_byte_s(std::size_t s) const { return per_byte_s_[s]; }
  topo::LinkId bottleneck(std::size_t s) const { return bottleneck_[s]; }
  // Stage s's weight when it shares links (stage_fluid.hpp): the smallest, over its links, of
  // flows crossing the link per unit load there (a pipeline is one flow, counted once per
  // crossing, as the flow model counts it).
  double flow_weight(std::size_t s) const { return flow_weight_[s]; }
  // Whether stage s was streamed (an all-pairs stage; see above) rather than listed.
  bool streamed(std::size_t s) const { return streamed_[s] != 0; }
  // Stage s's latency under `costs` (collective_costs.hpp).
  double latency_s(std::size_t s, const CollectiveCosts& costs) const { return latency_[s].seconds(costs); }

 private:
  friend class AnalyticalModel;
  static constexpr double kHopsPerPair = 4;
  static bool worth_streaming(const Network& network, const work::Stage& stage);
  // An all-pairs stage streamed (see above); false, adding nothing, where the routing cannot.
  bool stream_pairs(Network& network, const work::Stage& stage);
  // The same on one thread for a load-aware routing, pair after pair.
  bool place_pairs(Network& network, const work::Stage& stage);
  // A listed stage (or an all-pairs one the routing cannot stream), transfer by transfer.
  void route_listed(Network& network, const work::Stage& stage, const FlowKeyOf& flow_key);
  // Appends an all-pairs stage from its crossings per model link and slowest wire per class.
  void add_pairs_stage(const Network& network, const work::Stage& stage, std::span<const uint64_t> crossings,
                       const std::array<double, 3>& max_wire_s);
  // Appends a stage from its links (ascending), unit loads and crossings.
  void add_stage(const Network& network, std::vector<uint32_t> links, std::vector<double> loads,
                 std::vector<double> crossings, double payload_share, StageLatency latency);

  const work::CollectivePlan& plan_;
  std::vector<uint8_t> streamed_;
  std::vector<double> payload_share_;
  // Per stage, the links its routes cross, ascending: the model touches only these, so
  // recording usage costs the plan's size, not the fabric's.
  std::vector<std::vector<uint32_t>> links_;
  // Per stage, aligned with links_: bytes on each link per byte of S at efficiency 1, and
  // transfers crossing it.
  std::vector<std::vector<double>> unit_load_, crossings_;
  // Per stage: max over its links of unit load / capacity (s per byte of S), and that link
  // (ties: the lowest id; none: 0, 0).
  std::vector<double> per_byte_s_;
  std::vector<topo::LinkId> bottleneck_;
  std::vector<double> flow_weight_;
  std::vector<StageLatency> latency_;  // per stage, priced per estimate
};

class AnalyticalModel {
 public:
  explicit AnalyticalModel(Network& network);

  // One collective of `bytes` (>= 0) alone on the fabric. A stage's bandwidth term is the max
  // over the links it crosses (none: 0, bottleneck 0). `plan` must come from this model's
  // network. Adds the loads to link_bytes() and link_busy_s(). Throws std::invalid_argument
  // on negative or non-finite bytes or an efficiency outside (0, 1].
  CollectiveEstimate estimate(const RoutedPlan& plan, double bytes, const CollectiveCosts& costs);
  // estimate(...).time_s alone, recording nothing: O(stages). For tuners that compare many
  // candidates.
  static double time_s(const RoutedPlan& plan, double bytes, const CollectiveCosts& costs);

  // Bytes carried by each model link over every estimate made so far (in lane crossings under
  // a routing of several lanes: Network::fold_bytes turns them into bytes per topology link).
  const std::vector<double>& link_bytes() const { return link_bytes_; }
  // Busy time of each link (sum of load / capacity over estimates): the link's share of time
  // at full rate.
  const std::vector<double>& link_busy_s() const { return link_busy_s_; }

 private:
  // Adds stage s's loads at `scale` (bytes / efficiency) to link_bytes_ and link_busy_s_.
  void record(const RoutedPlan& plan, std::size_t s, double scale);

  std::vector<double> capacity_Bps_;
  std::vector<double> link_bytes_, link_busy_s_;
};

}  // namespace cs::net
