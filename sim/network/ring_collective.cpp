#include "sim/network/ring_collective.hpp"

#include <map>
#include <stdexcept>

namespace cs::net {

RingAllReduce::RingAllReduce(Network& network, std::vector<int> ranks, double bytes,
                             std::function<void()> on_done, const CollectiveCosts& costs)
    : network_(network), ranks_(std::move(ranks)), on_done_(std::move(on_done)) {
  const std::size_t n = ranks_.size();
  if (n < 2) throw std::invalid_argument("RingAllReduce: at least 2 ranks");
  if (!(bytes > 0)) throw std::invalid_argument("RingAllReduce: bytes must be > 0");
  chunk_bytes_ = bytes / static_cast<double>(n) / costs.bandwidth_efficiency;
  efficiency_ = costs.bandwidth_efficiency;
  base_latency_s_ = costs.base_latency_s;
  steps_ = 2 * static_cast<int>(n - 1);
  // Each rank talks only to its successor: resolve the n routes once, not once per step.
  to_next_.resize(n);
  step_extra_s_.resize(n);
  for (std::size_t p = 0; p < n; ++p) {
    const int next = ranks_[(p + 1) % n];
    to_next_[p] = network_.path(ranks_[p], next, p);
    const auto cls = static_cast<std::size_t>(transfer_class(network_.topology(), ranks_[p], next));
    // The flow spends its route's own latency in flight; the step's cost beyond it is extra.
    const double wire = network_.route(ranks_[p], next, p).latency_s;
    step_extra_s_[p] = step_cost_s(wire, costs.step_latency_s[cls]) - wire;
  }
  started_.assign(n, 0);
  sent_.assign(n, 0);
  received_.assign(n, 0);
  in_flight_.assign(n, kNoFlow);
}

void RingAllReduce::start() {
  remaining_sends_ = static_cast<uint64_t>(steps_) * ranks_.size();
  for (std::size_t p = 0; p < ranks_.size(); ++p) try_start(p);
}

void RingAllReduce::try_start(std::size_t p) {
  const int k = started_[p];
  if (k >= steps_) return;
  // Step k needs our step k-1 send delivered and our predecessor's step k-1 chunk received.
  if (k > 0 && (sent_[p] < k || received_[p] < k)) return;
  ++started_[p];
  in_flight_[p] =
      network_.flows().start(to_next_[p], chunk_bytes_, this, p, step_extra_s_[p] + (k == 0 ? base_latency_s_ : 0.0));
}

double RingAllReduce::cancel() {
  if (cancelled_) return -1;
  cancelled_ = true;
  double wire = 0;
  for (std::size_t p = 0; p < ranks_.size(); ++p) {
    wire += chunk_bytes_ * sent_[p];
    if (in_flight_[p] == kNoFlow) continue;
    const double part = network_.flows().cancel(in_flight_[p], this, p);
    // -1: delivered at this instant, its completion not told yet (it will be ignored).
    wire += part >= 0 ? part : chunk_bytes_;
  }
  return wire * efficiency_;
}

void RingAllReduce::on_flow_done(FlowId /*flow*/, uint64_t tag) {
  if (cancelled_) return;
  const std::size_t p = tag;
  in_flight_[p] = kNoFlow;
  const std::size_t next = (p + 1) % ranks_.size();
  ++sent_[p];
  ++received_[next];
  --remaining_sends_;
  try_start(p);
  try_start(next);
  if (remaining_sends_ == 0 && on_done_) on_done_();
}

StepRingRun::StepRingRun(Network& network, const work::CollectivePlan& plan) : network_(network) {
  if (plan.op != work::CollectiveOp::all_reduce || plan.algorithm != work::CollectiveAlgorithm::ring ||
      plan.stages.size() != 1)
    throw std::invalid_argument("StepRingRun: needs a ring all_reduce plan");
  std::map<int32_t, std::vector<const work::Transfer*>> chains;
  for (const work::Transfer& t : plan.stages.front().transfers) chains[t.chain].push_back(&t);
  for (const auto& [chain, edges] : chains) {
    Channel c;
    for (const work::Transfer* t : edges) c.members.push_back(t->src);  // edges in ring order
    // A chain's share is 2(n-1)/n of its part of S: its part is share x n / (2(n-1)).
    const double n = static_cast<double>(c.members.size());
    c.part = edges.front()->share * n / (2 * (n - 1));
    channels_.push_back(std::move(c));
  }
}

RunHandle StepRingRun::start(double bytes, const CollectiveCosts& costs, std::function<void()> on_done) {
  // Slots are never reused: a finished ring may be the one calling (a run started from its
  // callback), so its instance stays whole. Step rings run one benchmark size at a time.
  const std::size_t slot = instances_.size();
  Instance& in = instances_.emplace_back();
  in.left = channels_.size();
  in.active = true;
  in.on_done = std::move(on_done);
  ++active_;
  const uint64_t serial = in.serial;
  for (const Channel& c : channels_)
    in.rings.push_back(std::make_unique<RingAllReduce>(network_, c.members, bytes * c.part, [this, slot, serial] {
      Instance& done = instances_[slot];
      if (done.serial != serial || --done.left > 0) return;
      auto callback = std::move(done.on_done);
      done.active = false;
      ++done.serial;
      --active_;
      if (callback) callback();
    }, costs));
  for (auto& r : in.rings) r->start();
  return {slot, serial};
}

double StepRingRun::cancel(RunHandle run) {
  if (run.slot >= instances_.size()) return -1;
  Instance& in = instances_[run.slot];
  if (!in.active || in.serial != run.serial) return -1;
  double delivered = 0;
  for (auto& r : in.rings) {
    const double part = r->cancel();
    if (part >= 0) delivered += part;
  }
  in.active = false;
  in.on_done = nullptr;
  ++in.serial;
  --active_;
  return delivered;
}



}  // namespace cs::net
