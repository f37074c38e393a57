#include "sim/compute/timed_comm.hpp"

#include <cmath>

namespace cs::compute {

TimedComm::~TimedComm() = default;

net::TransferId TimedComm::start(double seconds, double bytes, net::TransferObserver* observer, uint64_t tag) {
  if (!(bytes > 0) || !std::isfinite(bytes)) throw net::CommError("bytes", "bytes must be > 0 and finite");
  const net::TransferId id = next_id_++;
  const engine::EventId event = sim_.schedule_at(sim_.now() + seconds, *this, id);
  active_.emplace(id, Active{observer, tag, event});
  return id;
}

double TimedComm::cancel(net::TransferId id) {
  auto it = active_.find(id);
  if (it == active_.end()) return -1;
  sim_.cancel(it->second.event);
  active_.erase(it);
  forget_callback(id);
  return 0;  // bytes delivered are not tracked: a transfer delivers all at its end
}

void TimedComm::on_event(uint64_t id) {
  auto it = active_.find(id);
  const Active a = it->second;
  active_.erase(it);
  ++completed_;
  if (a.observer) a.observer->on_transfer_done(id, a.tag);
}

}  // namespace cs::compute
