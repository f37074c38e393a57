#pragma once
// The analytical network model: alpha-beta with topology-aware bottlenecks.
//
// A plan's stage costs its latency (stage_latency_s: steps x the slowest transfer's step
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
// Several collectives at once (estimate_concurrent): each stage's links also carry every
// other collective's bytes on them, as if the others overlapped it completely; exact for
// identical collectives that share a bottleneck, an upper bound otherwise.
//
// Units: bytes, bytes/s, seconds.
#include <cstdint>
#include <span>
#include <vector>

#include <Eigen/SparseCore>

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

// A plan with its routing: one sparse matrix per stage, built once and reused for every
// size and cost table.
class RoutedPlan {
 public:
  RoutedPlan(Network& network, const work::CollectivePlan& plan);
  const work::CollectivePlan& plan() const { return plan_; }
  std::size_t stages() const { return routing_.size(); }
  // links x transfers of stage s (row = topology link id).
  const Eigen::SparseMatrix<double>& routing(std::size_t s) const { return routing_[s]; }
  // Transfer shares of stage s (bytes / S), in plan order.
  const Eigen::VectorXd& shares(std::size_t s) const { return shares_[s]; }

 private:
  friend class AnalyticalModel;
  const work::CollectivePlan& plan_;
  std::vector<Eigen::SparseMatrix<double>> routing_;
  std::vector<Eigen::VectorXd> shares_;
  std::vector<std::vector<double>> step_wire_s_;  // per stage, per transfer: route latency
  std::vector<std::vector<uint8_t>> class_;        // per stage, per transfer: TransferClass
};

class AnalyticalModel {
 public:
  explicit AnalyticalModel(Network& network);

  // One collective of `bytes` alone on the fabric.
  CollectiveEstimate estimate(const RoutedPlan& plan, double bytes, const CollectiveCosts& costs);

  // Several collectives starting together (see the header comment).
  struct Job {
    const RoutedPlan* plan;
    double bytes;
    const CollectiveCosts* costs;
  };
  std::vector<CollectiveEstimate> estimate_concurrent(std::span<const Job> jobs);

  // Bytes carried by each topology link over every estimate made so far.
  const std::vector<double>& link_bytes() const { return link_bytes_; }
  // Busy time of each link (sum of load / capacity over estimates): the link's share of time
  // at full rate.
  const std::vector<double>& link_busy_s() const { return link_busy_s_; }

 private:
  Network& network_;
  std::vector<double> capacity_Bps_;
  std::vector<double> link_bytes_, link_busy_s_;
};

}  // namespace cs::net
