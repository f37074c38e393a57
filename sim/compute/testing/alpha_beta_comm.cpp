#include "sim/compute/testing/alpha_beta_comm.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace cs::compute::testing {

using work::CollectiveOp;

AlphaBetaComm::AlphaBetaComm(engine::Simulator& sim, int ranks, AlphaBetaConfig config)
    : TimedComm(sim), ranks_(ranks), config_(std::move(config)) {}

AlphaBetaComm::~AlphaBetaComm() = default;

int AlphaBetaComm::node(int rank) const {
  if (!config_.node_of_rank.empty()) return config_.node_of_rank[std::size_t(rank)];
  return config_.ranks_per_node > 0 ? rank / config_.ranks_per_node : rank;
}

double AlphaBetaComm::op_time_s(std::span<const int> members, CollectiveOp op, double bytes) const {
  bool one_node = true;
  for (int r : members) one_node = one_node && node(r) == node(members[0]);
  const AlphaBeta& link = one_node ? config_.intra_node : config_.inter_node;
  const double a = link.latency_s;
  const double inv_b = link.bandwidth_Bps > 0 && std::isfinite(link.bandwidth_Bps) ? 1 / link.bandwidth_Bps : 0;
  const double n = double(members.size());
  switch (op) {
    case CollectiveOp::all_reduce: {
      const double ring = 2 * (n - 1) * (a + bytes * inv_b / n);
      const double tree = 2 * std::ceil(std::log2(n)) * a + 2 * bytes * inv_b;
      return std::min(ring, tree);
    }
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_gather:
    case CollectiveOp::all_to_all: return (n - 1) * (a + bytes * inv_b / n);
    case CollectiveOp::broadcast:
    case CollectiveOp::reduce: return (n - 1) * a + bytes * inv_b;
    case CollectiveOp::send_recv: return a + bytes * inv_b;
  }
  return 0;
}

net::GroupId AlphaBetaComm::group(std::span<const int> ranks, int /*channels*/) {
  std::vector<int> list(ranks.begin(), ranks.end());
  if (list.size() < 2) throw net::CommError("ranks", "a group needs at least 2 ranks");
  for (int r : list)
    if (r < 0 || r >= ranks_) throw net::CommError("ranks", "rank " + std::to_string(r) + " out of range");
  auto [it, inserted] = group_ids_.try_emplace(list, net::GroupId(groups_.size()));
  if (inserted) groups_.push_back(std::move(list));
  return it->second;
}

std::span<const int> AlphaBetaComm::members(net::GroupId group) const { return groups_.at(group); }

net::TransferId AlphaBetaComm::send(int src, int dst, double bytes, net::TransferObserver* observer, uint64_t tag,
                                    uint64_t) {
  if (src == dst || src < 0 || dst < 0 || src >= ranks_ || dst >= ranks_)
    throw net::CommError("ranks", "bad send " + std::to_string(src) + " -> " + std::to_string(dst));
  ++sends_;
  const int pair[2] = {src, dst};
  return start(op_time_s(pair, CollectiveOp::send_recv, bytes), bytes, observer, tag);
}

net::TransferId AlphaBetaComm::collective(net::GroupId group, CollectiveOp op, double bytes,
                                          net::TransferObserver* observer, uint64_t tag,
                                          const net::CollectiveOptions&) {
  ++collectives_;
  return start(op_time_s(members(group), op, bytes), bytes, observer, tag);
}

net::CollectiveChoice AlphaBetaComm::choice(net::TransferId id) const {
  if (!active(id)) throw std::out_of_range("AlphaBetaComm::choice: not active");
  return {};
}

net::CollectiveChoice AlphaBetaComm::choose(net::GroupId, CollectiveOp, double, const net::CollectiveOptions&) {
  return {};
}

double AlphaBetaComm::alone_time_s(net::GroupId group, CollectiveOp op, double bytes, const net::CollectiveOptions&) {
  return op_time_s(members(group), op, bytes);
}

}  // namespace cs::compute::testing
