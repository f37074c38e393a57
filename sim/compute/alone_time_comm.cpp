#include "sim/compute/alone_time_comm.hpp"

#include <functional>
#include <stdexcept>

namespace cs::compute {

std::size_t AloneTimeComm::EstimateKeyHash::operator()(const EstimateKey& k) const {
  std::size_t h = std::hash<double>()(k.bytes);
  for (const uint64_t v : {uint64_t(k.group), uint64_t(k.op), uint64_t(uint32_t(k.algorithm)), uint64_t(uint32_t(k.protocol))})
    h ^= std::hash<uint64_t>()(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

double AloneTimeComm::alone_time_s(net::GroupId group, work::CollectiveOp op, double bytes,
                                   const net::CollectiveOptions& options) {
  const int protocol = options.protocol ? int(*options.protocol) : -1;
  const EstimateKey key{group, op, bytes, int(options.algorithm), protocol};
  if (const auto it = seconds_.find(key); it != seconds_.end()) return it->second;
  // Asked before it is kept: an estimate the inner layer refuses (no plan) is not cached.
  const double seconds = inner_.alone_time_s(group, op, bytes, options);
  seconds_.emplace(key, seconds);
  return seconds;
}

double AloneTimeComm::send_time_s(int src, int dst, double bytes) {
  // A raw send pays the wire alone (the route's latency and bottleneck), not NCCL's costs.
  const uint64_t key = uint64_t(uint32_t(src)) << 32 | uint32_t(dst);
  auto it = pair_groups_.find(key);
  if (it == pair_groups_.end()) {
    const int pair[2] = {src, dst};
    it = pair_groups_.emplace(key, inner_.group(pair)).first;
  }
  const net::CollectiveOptions wire{work::CollectiveAlgorithm::direct, net::Protocol::none};
  return alone_time_s(it->second, work::CollectiveOp::send_recv, bytes, wire);
}

net::TransferId AloneTimeComm::send(int src, int dst, double bytes, net::TransferObserver* observer, uint64_t tag,
                                    uint64_t) {
  return start(send_time_s(src, dst, bytes), bytes, observer, tag);
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
