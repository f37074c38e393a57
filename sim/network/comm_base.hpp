#pragma once
// What both network models' communication layers share (comm.hpp): groups and their plans
// (built when first asked for, never moved), NCCL's tuner with its cost tables, the table of
// transfers in flight and their observers. A model says how a send and a plan run, how a send
// is cancelled, and what its links carry (flow_comm.hpp, fluid_comm.hpp).
//
// The tuner: for a collective of S bytes, the fastest (algorithm, protocol) by the analytical
// model's estimate alone on the fabric (AnalyticalModel::time_s), as NCCL's tuner picks from
// its model: when the algorithm is auto, among the algorithms NCCL runs for the op
// (work::tuned_algorithms_for: all_reduce ring, tree, in_network where the fabric reduces, torus
// on a torus fabric with one rank per node; all_gather and reduce_scatter ring, torus;
// broadcast and reduce ring; all_to_all and send_recv direct) that have a plan for the group
// (in_network not where ranks share a node two at most: NCCL 2.18-2.20 turn NVLS off for two
// GPUs, src/transport/nvls.cc ncclNvlsInit: gpuCount <= 2),
// and among LL, LL128 and Simple when the protocol is auto. Ties go to the first, in that order
// and LL, LL128, Simple. A choice is remembered
// per (group, op, bytes, request): a training step repeats the same collectives.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sim/network/analytical_model.hpp"
#include "sim/network/collective_runner.hpp"
#include "sim/network/comm.hpp"
#include "sim/network/comm_config.hpp"
#include "sim/network/flow_model.hpp"
#include "sim/network/nccl_tuning.hpp"
#include "sim/network/network.hpp"
#include "sim/network/placement.hpp"
#include "workloads/collective_plan.hpp"

namespace cs::net {

class CommBase : public Comm {
 public:
  using Comm::collective;
  using Comm::group;
  using Comm::send;

  int ranks() const override { return placement_.ranks(); }
  GroupId group(std::span<const int> ranks, int channels) override;
  std::span<const int> members(GroupId group) const override;
  TransferId send(int src, int dst, double bytes, TransferObserver* observer, uint64_t tag,
                  uint64_t flow_key = 0) override;
  std::vector<TransferId> send_together(std::span<const SendRequest> sends, TransferObserver* observer) override;
  TransferId collective(GroupId group, work::CollectiveOp op, double bytes, TransferObserver* observer, uint64_t tag,
                        const CollectiveOptions& options = {}) override;
  CollectiveChoice choice(TransferId id) const override;
  CollectiveChoice choose(GroupId group, work::CollectiveOp op, double bytes,
                          const CollectiveOptions& options = {}) override;
  double alone_time_s(GroupId group, work::CollectiveOp op, double bytes,
                      const CollectiveOptions& options = {}) override;
  // Known once asked: plan() is tried once per (group, op, algorithm) and a refusal remembered.
  bool refuses(GroupId group, work::CollectiveOp op, work::CollectiveAlgorithm algorithm) override;
  double cancel(TransferId id) override;
  const topo::Route* route_of(TransferId id) const override;
  std::size_t active_transfers() const override { return active_; }
  uint64_t transfers_completed() const override { return completed_; }

  // The plan `group` runs for `op` with `algorithm` (not automatic), over the group's GPUs
  // (topology ranks). Throws CommError("algorithm") when there is none.
  const work::CollectivePlan& plan(GroupId group, work::CollectiveOp op, work::CollectiveAlgorithm algorithm);
  // The algorithms auto chooses among for `op` on `group` (see the header comment).
  std::vector<work::CollectiveAlgorithm> candidates(GroupId group, work::CollectiveOp op);

  Network& network() { return network_; }
  const Network& network() const { return network_; }
  double now() const { return network_.sim().now(); }
  const Placement& placement() const { return placement_; }
  const CommConfig& config() const { return config_; }

 protected:
  CommBase(Network& network, Placement placement, const CommConfig& config);

  // A transfer in flight: what the model needs to cancel it.
  struct Slot {
    uint32_t generation = 1;  // the high half of its TransferId
    bool active = false;
    TransferObserver* observer = nullptr;
    uint64_t tag = 0;
    double bytes = 0;
    CollectiveRunner* runner = nullptr;  // collectives; null for sends
    RunHandle run;                       // collectives, and sends on the stage fluid
    FlowId flow = 0;                     // sends on the flow model
    const topo::Route* route = nullptr;  // sends: the path taken
    CollectiveChoice choice;
  };
  const Slot& slot_of(TransferId id) const { return slots_[id & 0xffffffffu]; }
  Slot& slot_of(TransferId id) { return slots_[id & 0xffffffffu]; }

  // The model's part. start_send fills the slot's route and its flow or run; cancel_send returns the bytes
  // delivered, or -1 when the send finished at this instant and its word is still to come.
  virtual void start_send(TransferId id, int src_gpu, int dst_gpu, double bytes, uint64_t flow_key) = 0;
  virtual double cancel_send(TransferId id) = 0;
  // The runner of `plan` on this model, built once per plan and kept.
  virtual CollectiveRunner& runner(const work::CollectivePlan& plan) = 0;
  // Throws CommError when the model cannot run `op` as requested (before any plan is built).
  virtual void check_request(work::CollectiveOp op, work::CollectiveAlgorithm algorithm) const {
    (void)op, (void)algorithm;
  }

  // The model calls this when transfer `id` has delivered its last byte; stale ids (a
  // transfer cancelled at the instant it finished) are ignored.
  void complete(TransferId id);
  // The routed plan of `plan` (built once, kept): the tuner's estimates, and the analytical
  // model's runs.
  const RoutedPlan& routed(const work::CollectivePlan& plan);
  // Whether routed(plan) was built while fabric_idle(): a load-aware routing then chose as it
  // would for a run that starts on the idle fabric, so such a run may reuse it.
  bool routed_on_idle(const work::CollectivePlan& plan) const;
  // Whether nothing of this model is in flight (no load a load-aware routing could see); the
  // model's part, false where it cannot tell.
  virtual bool fabric_idle() const { return false; }

 private:
  struct Group {
    std::vector<int> members;  // workload ranks
    work::GroupLayout layout;  // over GPUs
    std::map<std::pair<work::CollectiveOp, work::CollectiveAlgorithm>, std::unique_ptr<work::CollectivePlan>> plans;
    std::set<std::pair<work::CollectiveOp, work::CollectiveAlgorithm>> refused;  // plans plan() refused
    std::pair<bool, bool> spans{false, false};  // (spans several nodes, has ranks sharing a node)
    int nodes = 1;                              // nodes its ranks are on
    int most_on_a_node = 1;                     // the most of its ranks on one node
    int fewest_on_a_node = 1;                   // the fewest on a node holding some
  };
  // The tuner's choice for one request (op, requested algorithm and protocol, bytes) on a
  // group, and the runner of its plan once a run asked for it.
  struct Pick {
    work::CollectiveOp op = work::CollectiveOp::all_reduce;
    work::CollectiveAlgorithm requested = work::CollectiveAlgorithm::automatic;
    Protocol requested_protocol = Protocol::simple;
    double bytes = 0;
    CollectiveChoice choice;
    CollectiveCosts costs;  // the protocol's, refined as NCCL's tuner refines them
    const work::CollectivePlan* plan = nullptr;
    CollectiveRunner* runner = nullptr;  // runner(*plan), kept at the first run
  };
  // The costs `algorithm` runs `plan` with under `protocol` for `bytes`: NCCL's bandwidth factors
  // for its algorithms, LL's ceiling as a lower efficiency (exact for the collective alone), and
  // the fill and drain of NVLS's pipeline inside one node as a lower efficiency at that size.
  CollectiveCosts refined_costs(const Group& g, work::CollectiveOp op, const work::CollectivePlan& plan,
                                work::CollectiveAlgorithm algorithm, const ProtocolCosts& protocol, double bytes);
  // The reference holds until the next pick on the same group.
  Pick& pick(GroupId group, work::CollectiveOp op, double bytes, const CollectiveOptions& options);
  const std::vector<ProtocolCosts>& protocols(const CollectiveOptions& options);
  void check_in_network(const Group& g) const;
  TransferId open_slot(TransferObserver* observer, uint64_t tag, double bytes);
  void check_rank(int rank, const char* what) const;
  void check_bytes(double bytes) const;
  void check_send(int src, int dst, double bytes) const;  // a send's ranks and bytes

  Network& network_;
  Placement placement_;
  CommConfig config_;
  std::vector<Group> groups_;
  std::map<std::pair<std::vector<int>, int>, GroupId> group_ids_;
  // Protocol tables by requested protocol (index: Protocol).
  std::map<Protocol, std::vector<ProtocolCosts>> protocols_;
  // Per group, its picks: a group sees few distinct requests (one to four in a training step),
  // so a short list indexed by group is one cache line away, where a step's every collective
  // searched one ordered map over all groups' picks (a tenth of a 65,536-GPU step's time).
  std::vector<std::vector<Pick>> picks_;
  std::unordered_map<const work::CollectivePlan*, std::unique_ptr<RoutedPlan>> routed_;
  std::unordered_set<const work::CollectivePlan*> routed_on_idle_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  std::size_t active_ = 0;
  uint64_t completed_ = 0;
};

}  // namespace cs::net
