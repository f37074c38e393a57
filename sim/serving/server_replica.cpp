#include "sim/serving/server_replica.hpp"

#include <stdexcept>

namespace cs::serving {

ServerReplica::ServerReplica(engine::Simulator& sim, ReplicaListener& listener, uint32_t id,
                             const ServerSpec& spec)
    : Replica(sim, listener, id, spec.concurrency) {
  if (spec.concurrency < 1) throw std::invalid_argument("replica.concurrency: must be >= 1");
  slots_.resize(static_cast<std::size_t>(spec.concurrency));
  // Lowest slot first: pop from the back.
  for (int i = spec.concurrency - 1; i >= 0; --i) free_slots_.push_back(static_cast<uint32_t>(i));
}

ServerReplica::~ServerReplica() {
  for (Slot& s : slots_) {
    if (s.busy) sim_.cancel(s.completion);
  }
}

void ServerReplica::start(uint32_t slot, const Request& request) {
  Slot& s = slots_[slot];
  s.request = request;
  if (s.request.start_s < 0) s.request.start_s = sim_.now();
  s.busy = true;
  s.completion = sim_.schedule_in(request.service_s, *this, slot);
}

void ServerReplica::submit(const Request& request) {
  count_arrival();
  if (!free_slots_.empty()) {
    const uint32_t slot = free_slots_.back();
    free_slots_.pop_back();
    start(slot, request);
  } else {
    queue_.push_back(request);
  }
  set_load(capacity() - static_cast<int>(free_slots_.size()), static_cast<int>(queue_.size()));
}

void ServerReplica::on_event(uint64_t tag) {
  const auto slot = static_cast<uint32_t>(tag);
  Slot& s = slots_[slot];
  s.busy = false;
  const Request done = s.request;
  if (!queue_.empty()) {
    start(slot, queue_.front());
    queue_.pop_front();
    set_load(capacity() - static_cast<int>(free_slots_.size()), static_cast<int>(queue_.size()));
    complete(done);
    return;
  }
  free_slots_.push_back(slot);
  set_load(capacity() - static_cast<int>(free_slots_.size()), 0);
  complete(done);
  slot_freed();
  maybe_drained();
}

void ServerReplica::take_queued(std::vector<Request>& out) {
  out.insert(out.end(), queue_.begin(), queue_.end());
  queue_.clear();
  set_load(capacity() - static_cast<int>(free_slots_.size()), 0);
  maybe_drained();
}

void ServerReplica::abort(std::vector<Request>& out) {
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (!s.busy) continue;
    sim_.cancel(s.completion);
    s.busy = false;
    out.push_back(s.request);
    free_slots_.push_back(i);
  }
  out.insert(out.end(), queue_.begin(), queue_.end());
  queue_.clear();
  set_load(0, 0);
}

}  // namespace cs::serving
