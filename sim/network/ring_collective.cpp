#include "sim/network/ring_collective.hpp"

#include <stdexcept>

namespace cs::net {

RingAllReduce::RingAllReduce(Network& network, std::vector<int> ranks, double bytes,
                             std::function<void()> on_done, const CollectiveCosts& costs)
    : network_(network), ranks_(std::move(ranks)), on_done_(std::move(on_done)) {
  const std::size_t n = ranks_.size();
  if (n < 2) throw std::invalid_argument("RingAllReduce: at least 2 ranks");
  if (!(bytes > 0)) throw std::invalid_argument("RingAllReduce: bytes must be > 0");
  chunk_bytes_ = bytes / static_cast<double>(n) / costs.bandwidth_efficiency;
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
  network_.flows().start(to_next_[p], chunk_bytes_, this, p, step_extra_s_[p] + (k == 0 ? base_latency_s_ : 0.0));
}

void RingAllReduce::on_flow_done(FlowId /*flow*/, uint64_t tag) {
  const std::size_t p = tag;
  const std::size_t next = (p + 1) % ranks_.size();
  ++sent_[p];
  ++received_[next];
  --remaining_sends_;
  try_start(p);
  try_start(next);
  if (remaining_sends_ == 0 && on_done_) on_done_();
}

}  // namespace cs::net
