#include "sim/network/fluid_traffic.hpp"

#include <map>

namespace cs::net {

FluidTraffic::FluidTraffic(StageFluid& fluid, Network& network, const std::vector<work::FlowSpec>& flows)
    : fluid_(fluid), sim_(network.sim()), flows_(flows.size()) {
  std::map<double, std::vector<uint64_t>> by_start;  // flow indices by start time
  for (std::size_t i = 0; i < flows.size(); ++i) by_start[flows[i].start_s].push_back(i);
  for (const auto& [start_s, batch] : by_start) {
    auto b = std::make_unique<Batch>();
    b->start_s = start_s;
    b->plan.op = work::CollectiveOp::send_recv;
    b->plan.algorithm = work::CollectiveAlgorithm::direct;
    work::Stage& stage = b->plan.stages.emplace_back();
    stage.name = "traffic";
    for (uint64_t i : batch) stage.transfers.push_back({flows[i].src, flows[i].dst, flows[i].bytes, -1});
    b->flow = batch;
    const Batch& built = *b;
    b->routed = std::make_unique<RoutedPlan>(network, b->plan,
                                             [&built](std::size_t, std::size_t t) { return built.flow[t]; });
    batches_.push_back(std::move(b));
  }
}

void FluidTraffic::start() {
  for (std::size_t i = 0; i < batches_.size(); ++i) sim_.schedule_at(batches_[i]->start_s, *this, i);
}

void FluidTraffic::on_event(uint64_t batch) {
  const Batch& b = *batches_[batch];
  const std::size_t n = b.plan.stages.front().transfers.size();
  // The wire alone: each transfer's route latency, then its bytes (share x 1 byte).
  fluid_.start(*b.routed, 1.0, CollectiveCosts{}, [this, n] { completed_ += n; });
}

}  // namespace cs::net
