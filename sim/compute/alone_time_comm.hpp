#pragma once
// A communication layer for screening many plans fast: every send and collective takes the
// time it would take alone on the idle fabric (the inner layer's estimate: the analytical
// model on the real topology, with its routes, bottlenecks, NCCL costs and the tuner), and
// transfers never contend. Groups, choices and estimates are the inner layer's; nothing moves
// on it. A step on it is a lower bound of the step on the inner layer wherever contention only
// slows transfers down.
#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "sim/compute/timed_comm.hpp"

namespace cs::compute {

class AloneTimeComm final : public TimedComm {
 public:
  // `inner` must outlive this; its model is never run.
  AloneTimeComm(engine::Simulator& sim, net::Comm& inner) : TimedComm(sim), inner_(inner) {}

  int ranks() const override { return inner_.ranks(); }
  std::string_view model_name() const override { return "alone_time"; }
  std::vector<std::pair<std::string, uint64_t>> counters() const override { return {}; }
  net::GroupId group(std::span<const int> ranks, int channels) override { return inner_.group(ranks, channels); }
  using net::Comm::group;
  std::span<const int> members(net::GroupId group) const override { return inner_.members(group); }
  // A send takes a two-rank send_recv's time alone on the wire (no NCCL costs, as the flow and
  // analytical models' sends).
  net::TransferId send(int src, int dst, double bytes, net::TransferObserver* observer, uint64_t tag,
                       uint64_t flow_key = 0) override;
  // The time send() gives a transfer of `bytes` from `src` to `dst`.
  double send_time_s(int src, int dst, double bytes);
  using net::Comm::send;
  net::TransferId collective(net::GroupId group, work::CollectiveOp op, double bytes, net::TransferObserver* observer,
                             uint64_t tag, const net::CollectiveOptions& options = {}) override;
  using net::Comm::collective;
  net::CollectiveChoice choice(net::TransferId id) const override;
  net::CollectiveChoice choose(net::GroupId group, work::CollectiveOp op, double bytes,
                               const net::CollectiveOptions& options = {}) override {
    return inner_.choose(group, op, bytes, options);
  }
  double alone_time_s(net::GroupId group, work::CollectiveOp op, double bytes,
                      const net::CollectiveOptions& options = {}) override;
  bool refuses(net::GroupId group, work::CollectiveOp op, work::CollectiveAlgorithm algorithm) override {
    return inner_.refuses(group, op, algorithm);
  }

 private:
  // What an estimate depends on: a step repeats its collectives (protocol -1: the tuner's).
  struct EstimateKey {
    net::GroupId group;
    work::CollectiveOp op;
    double bytes;
    int algorithm;
    int protocol;
    bool operator==(const EstimateKey&) const = default;
  };
  struct EstimateKeyHash {
    std::size_t operator()(const EstimateKey& k) const;
  };

  net::Comm& inner_;
  // Hash tables, not ordered maps: screening a plan looks an estimate up for every transfer of
  // its step (the lookups were a third of `clustersim plan`'s time).
  std::unordered_map<EstimateKey, double, EstimateKeyHash> seconds_;
  std::unordered_map<uint64_t, net::GroupId> pair_groups_;  // (src << 32 | dst) -> the pair's group
};

}  // namespace cs::compute
