#include "sim/compute/alone_time_comm.hpp"

#include <stdexcept>

namespace cs::compute {

double AloneTimeComm::alone_time_s(net::GroupId group, work::CollectiveOp op, double bytes,
                                   const net::CollectiveOptions& options) {
  const int protocol = options.protocol ? int(*options.protocol) : -1;
  auto [it, added] = seconds_.try_emplace({group, op, bytes, int(options.algorithm), protocol}, 0.0);
  if (added) it->second = inner_.alone_time_s(group, op, bytes, options);
  return it->second;
}

net::TransferId AloneTimeComm::send(int src, int dst, double bytes, net::TransferObserver* observer, uint64_t tag,
                                    uint64_t) {
  // A raw send pays the wire alone (the route's latency and bottleneck), not NCCL's costs.
  const int pair[2] = {src, dst};
  const net::CollectiveOptions wire{work::CollectiveAlgorithm::direct, net::Protocol::none};
  return start(alone_time_s(inner_.group(pair), work::CollectiveOp::send_recv, bytes, wire), bytes, observer, tag);
}

net::TransferId AloneTimeComm::collective(net::GroupId group, work::CollectiveOp op, double bytes,
                                          net::TransferObserver* observer, uint64_t tag,
                                          const net::CollectiveOptions& options) {
  return start(alone_time_s(group, op, bytes, options), bytes, observer, tag);
}

net::CollectiveChoice AloneTimeComm::choice(net::TransferId id) const {
  if (!active(id)) throw std::out_of_range("AloneTimeComm::choice: not active");
  return {};
}

}  // namespace cs::compute
