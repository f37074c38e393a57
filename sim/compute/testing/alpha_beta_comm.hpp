#pragma once
// A closed-form communication layer (a test double of net::Comm, also used by benchmarks):
// every op costs the textbook alpha-beta time of its algorithm, scheduled on the engine, with
// no contention between transfers. Per op on a group of n ranks with link latency a and
// bandwidth B (the node's when every member shares a node, else the fabric's), for nccl-tests
// size S:
//   all_reduce      min(ring 2 (n-1) (a + S / (n B)), tree 2 ceil(log2 n) a + 2 S / B)
//   reduce_scatter, all_gather, all_to_all   (n-1) (a + S / (n B))
//   broadcast, reduce   (n-1) a + S / B (pipelined chain)
//   send            a + S / B
// With zero latency and infinite bandwidth every transfer completes at the time it starts
// (free communication). Deterministic; cancel() is supported.
#include <cstdint>
#include <map>
#include <vector>

#include "sim/compute/timed_comm.hpp"

namespace cs::compute::testing {

struct AlphaBeta {
  double latency_s = 0;
  double bandwidth_Bps = 0;  // 0 or infinity: no bandwidth term
};

struct AlphaBetaConfig {
  AlphaBeta intra_node;      // members on one node
  AlphaBeta inter_node;      // members on several nodes
  std::vector<int> node_of_rank;  // empty: every rank on its own node... unless ranks_per_node
  int ranks_per_node = 0;         // > 0: rank r is on node r / ranks_per_node
};

class AlphaBetaComm final : public TimedComm {
 public:
  AlphaBetaComm(engine::Simulator& sim, int ranks, AlphaBetaConfig config = {});
  ~AlphaBetaComm() override;

  // Seconds `op` of size `bytes` takes on `members`.
  double op_time_s(std::span<const int> members, work::CollectiveOp op, double bytes) const;

  int ranks() const override { return ranks_; }
  std::string_view model_name() const override { return "alpha_beta"; }
  std::vector<std::pair<std::string, uint64_t>> counters() const override {
    return {{"collectives", collectives_}, {"sends", sends_}};
  }
  // Channels do not change a closed form: groups are told apart by their ranks alone.
  net::GroupId group(std::span<const int> ranks, int channels) override;
  using net::Comm::group;
  std::span<const int> members(net::GroupId group) const override;
  net::TransferId send(int src, int dst, double bytes, net::TransferObserver* observer, uint64_t tag,
                       uint64_t flow_key = 0) override;
  using net::Comm::send;
  net::TransferId collective(net::GroupId group, work::CollectiveOp op, double bytes, net::TransferObserver* observer,
                             uint64_t tag, const net::CollectiveOptions& options = {}) override;
  using net::Comm::collective;
  net::CollectiveChoice choice(net::TransferId id) const override;
  net::CollectiveChoice choose(net::GroupId group, work::CollectiveOp op, double bytes,
                               const net::CollectiveOptions& options = {}) override;
  double alone_time_s(net::GroupId group, work::CollectiveOp op, double bytes,
                      const net::CollectiveOptions& options = {}) override;

  uint64_t collectives_started() const { return collectives_; }
  uint64_t sends_started() const { return sends_; }

 private:
  int node(int rank) const;

  int ranks_;
  AlphaBetaConfig config_;
  std::vector<std::vector<int>> groups_;
  std::map<std::vector<int>, net::GroupId> group_ids_;
  uint64_t collectives_ = 0, sends_ = 0;
};

}  // namespace cs::compute::testing
