#include "sim/network/collective_run.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace cs::net {

CollectiveRun::CollectiveRun(Network& network, const work::CollectivePlan& plan)
    : network_(network), plan_(plan), stage_(plan.stages.size()) {
  stages_.reserve(plan.stages.size());
  for (const work::Stage& stage : plan.stages) {
    StageRoutes sr{{}, StageLatency(network_, stage)};
    std::map<int32_t, std::vector<std::pair<int, int>>> chains;
    std::map<int32_t, double> chain_share;
    for (const work::Transfer& t : stage.transfers) {
      if (t.chain < 0) continue;
      chains[t.chain].emplace_back(t.src, t.dst);
      chain_share[t.chain] = t.share;  // equal across a chain (collective_plan.hpp)
    }
    for (const auto& [chain, pairs] : chains)
      sr.flights.push_back({network_.chain_path(pairs), chain_share[chain], 0.0});
    for (const work::Transfer& t : stage.transfers)
      if (t.chain < 0)
        sr.flights.push_back({network_.path(t.src, t.dst), t.share, network_.route(t.src, t.dst).latency_s});
    stages_.push_back(std::move(sr));
  }
}

void CollectiveRun::start(double bytes, const CollectiveCosts& costs, std::function<void()> on_done) {
  if (running()) throw std::logic_error("CollectiveRun::start: already running");
  if (!(bytes > 0)) throw std::invalid_argument("CollectiveRun::start: bytes must be > 0");
  if (stages_.empty()) throw std::invalid_argument("CollectiveRun::start: the plan has no stages");
  bytes_ = bytes;
  costs_ = costs;
  on_done_ = std::move(on_done);
  stage_ = 0;
  start_stage(costs_.base_latency_s);
}

void CollectiveRun::start_stage(double extra_latency_s) {
  const StageRoutes& stage = stages_[stage_];
  const double latency = stage.latency.seconds(costs_) + extra_latency_s;
  const double scale = bytes_ / costs_.bandwidth_efficiency;
  outstanding_ = stage.flights.size();
  for (const Flight& f : stage.flights)
    // Every flow waits out the stage latency; a route's own latency is part of it.
    network_.flows().start(f.route, f.share * scale, this, 0, std::max(0.0, latency - f.wire_latency_s));
}

void CollectiveRun::on_flow_done(FlowId /*flow*/, uint64_t /*tag*/) {
  if (--outstanding_ > 0) return;
  if (++stage_ < stages_.size()) {
    start_stage(0.0);
    return;
  }
  // The callback may start this run again, which replaces on_done_: call a moved-out copy.
  if (auto done = std::move(on_done_)) done();
}

}  // namespace cs::net
