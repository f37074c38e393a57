#include "sim/network/traffic_run.hpp"

#include <algorithm>
#include <numeric>

namespace cs::net {

TrafficRun::TrafficRun(Comm& comm, engine::Simulator& sim, std::vector<work::FlowSpec> flows)
    : comm_(comm), sim_(sim), specs_(std::move(flows)) {
  order_.resize(specs_.size());
  std::iota(order_.begin(), order_.end(), 0u);
  std::stable_sort(order_.begin(), order_.end(),
                   [&](uint32_t a, uint32_t b) { return specs_[a].start_s < specs_[b].start_s; });
  fct_.assign(specs_.size(), 0.0);
  finished_.assign(specs_.size(), 0);
  routes_.assign(specs_.size(), nullptr);
}

void TrafficRun::start() {
  if (order_.empty()) return;
  first_start_ = specs_[order_.front()].start_s;
  last_finish_ = first_start_;
  // One engine event per distinct start time; its tag is the first flow (in order_) to start.
  for (std::size_t i = 0; i < order_.size(); ++i)
    if (i == 0 || specs_[order_[i]].start_s != specs_[order_[i - 1]].start_s)
      sim_.schedule_at(specs_[order_[i]].start_s, *this, i);
}

void TrafficRun::on_event(uint64_t first) {
  // The flows of this instant start together (a routing may choose their routes together).
  const double t = specs_[order_[first]].start_s;
  std::vector<Comm::SendRequest> sends;
  for (std::size_t i = first; i < order_.size() && specs_[order_[i]].start_s == t; ++i) {
    const uint32_t idx = order_[i];
    const work::FlowSpec& f = specs_[idx];
    sends.push_back({f.src, f.dst, f.bytes, idx, idx});
  }
  const std::vector<TransferId> ids = comm_.send_together(sends, this);
  for (std::size_t i = 0; i < ids.size(); ++i) routes_[sends[i].tag] = comm_.route_of(ids[i]);
}

void TrafficRun::on_transfer_done(TransferId /*id*/, uint64_t tag) {
  const double now = sim_.now();
  fct_[tag] = now - specs_[tag].start_s;
  finished_[tag] = 1;
  last_finish_ = std::max(last_finish_, now);
  ++completed_;
}

}  // namespace cs::net
