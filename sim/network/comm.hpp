#pragma once
// The communication layer: the one interface through which every workload moves bytes
// (training steps, serving replicas, fleets, raw traffic and collective benchmarks), whatever
// network model runs underneath. network.model is read once, by make_comm (comm_factory.hpp):
// the flow model (max-min over flows) and the analytical model (stage fluid) implement it
// alike, and agree where nothing contends.
//
// What it offers
// - Groups: a communicator over workload ranks, registered once (group()); plans, routes and
//   the tuner's choices are cached per group.
// - send(): point-to-point bytes from one rank to another; send_together(): several that
//   start at once, routed together.
// - collective(): an op of nccl-tests size S on a group, with an algorithm (or auto: the
//   tuner picks per size, as NCCL does) and a protocol (or the layer's default).
// - Any number of sends and collectives in flight at once, several on one group too (a
//   training rank's tensor-parallel all-reduce beside its data-parallel reduce-scatter).
// - cancel() of any of them at any time, reporting the payload bytes already delivered; a
//   cancelled transfer leaves the links at once (others speed up) and is never reported done.
// - Per-link usage and active-transfer counts from whichever model runs (samplers, adaptive
//   routing).
//
// Ranks are the workload's: a Placement (placement.hpp) maps them to GPUs of the topology.
//
// Invariants
// - A transfer's observer hears of it exactly once, at the simulated time its last byte is
//   delivered, unless it was cancelled first. The callback may start and cancel transfers.
// - TransferId 0 is never a transfer; ids are not reused within a Comm's life.
// - Deterministic: same calls in the same order, same times.
//
// Units: bytes, seconds.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/network/collective_costs.hpp"
#include "workloads/collective.hpp"

namespace cs::topo {
struct Route;  // topology/routing.hpp
}  // namespace cs::topo

namespace cs::net {

using TransferId = uint64_t;
using GroupId = uint32_t;

// A request the layer cannot serve: an algorithm with no plan for the op or group, in-network
// reduction where the fabric has none, ranks out of range, bad bytes. `field` names what was
// wrong, as the collective workload's keys name it ("algorithm", "protocol", "ranks",
// "bytes"); the scenario layer turns it into a JSON path.
class CommError : public std::invalid_argument {
 public:
  CommError(std::string field, const std::string& what, std::string hint = "")
      : std::invalid_argument(what), field_(std::move(field)), hint_(std::move(hint)) {}
  const std::string& field() const noexcept { return field_; }
  const std::string& hint() const noexcept { return hint_; }

 private:
  std::string field_, hint_;
};

class TransferObserver {
 public:
  virtual ~TransferObserver() = default;
  // Called at the simulated time transfer `id` completes, with the caller's `tag`.
  virtual void on_transfer_done(TransferId id, uint64_t tag) = 0;
};

struct CollectiveOptions {
  work::CollectiveAlgorithm algorithm = work::CollectiveAlgorithm::automatic;
  // nullopt: the layer's default (the scenario's network.protocol).
  std::optional<Protocol> protocol;
};

// What the tuner chose for one collective (algorithm never automatic; protocol never
// automatic: the protocol it runs with, Simple for NVLS and SHARP whatever was asked).
struct CollectiveChoice {
  work::CollectiveAlgorithm algorithm = work::CollectiveAlgorithm::ring;
  Protocol protocol = Protocol::simple;
};

// Per directed topology link, up to now. busy_s and peak_utilization may be empty when the
// model does not measure them.
struct LinkUsage {
  std::vector<double> bytes;             // bytes carried (a byte crossing k links counts k times)
  std::vector<double> busy_s;            // seconds with bytes crossing the link
  std::vector<double> peak_utilization;  // largest fraction of capacity in use, [0, 1]
  double elapsed_s = 0;                  // simulated time so far
};

class Comm {
 public:
  virtual ~Comm();

  // Workload ranks the placement holds.
  virtual int ranks() const = 0;
  // The model underneath ("flow", "analytical") and its own counters (the flow model's flows
  // and max-min solves, ...), for reports.
  virtual std::string_view model_name() const = 0;
  virtual std::vector<std::pair<std::string, uint64_t>> counters() const = 0;

  // The group of these ranks, in this order (ranks[0] is the root of rooted ops). At least 2
  // distinct ranks in [0, ranks()). `channels`: NCCL channels of its rings (one per NIC rail
  // across nodes; 0: the node's NIC count). The same list and channels give the same id.
  // Throws CommError("ranks").
  virtual GroupId group(std::span<const int> ranks, int channels) = 0;
  GroupId group(std::span<const int> ranks) { return group(ranks, 0); }
  virtual std::span<const int> members(GroupId group) const = 0;

  // `bytes` (> 0, finite) from rank src to rank dst (src != dst), starting now. `flow_key`
  // picks among equal paths where the routing hashes flows (ECMP).
  virtual TransferId send(int src, int dst, double bytes, TransferObserver* observer, uint64_t tag,
                          uint64_t flow_key = 0) = 0;

  // Sends that start now together (a traffic workload's flows of one instant), as send()
  // one after another, except that a routing that chooses a batch together (ugal_packet:
  // topo::Router::rounds_together) routes them as one, each against all the others, before
  // any starts. Their ids, in order. Throws as send() does. By default: send() one after
  // another.
  struct SendRequest {
    int src = 0, dst = 0;
    double bytes = 0;
    uint64_t tag = 0, flow_key = 0;
  };
  virtual std::vector<TransferId> send_together(std::span<const SendRequest> sends, TransferObserver* observer);

  // `op` of nccl-tests size `bytes` (> 0, finite) on `group`, starting now. Throws CommError
  // when the algorithm has no plan for the op and group. The choice is made here, before
  // anything moves, and can be read back with choice(id) while the transfer is active.
  virtual TransferId collective(GroupId group, work::CollectiveOp op, double bytes, TransferObserver* observer,
                                uint64_t tag, const CollectiveOptions& options = {}) = 0;

  // The algorithm and protocol a collective runs with (throws std::out_of_range when `id` is
  // not active). What collective() would choose, without starting it:
  virtual CollectiveChoice choice(TransferId id) const = 0;
  virtual CollectiveChoice choose(GroupId group, work::CollectiveOp op, double bytes,
                                  const CollectiveOptions& options = {}) = 0;
  // Seconds the collective would take alone on an idle fabric (the analytical model's
  // estimate, whichever model runs): for planners and tuners; records nothing.
  virtual double alone_time_s(GroupId group, work::CollectiveOp op, double bytes,
                              const CollectiveOptions& options = {}) = 0;
  // Whether `algorithm` (not automatic) has no plan for `op` on `group`, so that a request for
  // it throws CommError whatever its bytes: a tuner trying every algorithm asks first, since a
  // refusal's exception costs more than the estimate. false: it may still be refused (by
  // default nothing is known).
  virtual bool refuses(GroupId group, work::CollectiveOp op, work::CollectiveAlgorithm algorithm) {
    (void)group, (void)op, (void)algorithm;
    return false;
  }

  // Stops transfer `id` now. Returns the payload bytes it had delivered (for a collective,
  // summed over its transfers, share by share). Its observer is never called. Returns -1 if
  // `id` is not active (finished, cancelled or unknown).
  virtual double cancel(TransferId id) = 0;

  // The path a send in flight takes (the router's route: stable while the network lives), or
  // null when `id` is not an active send (a collective, finished, cancelled).
  virtual const topo::Route* route_of(TransferId id) const = 0;

  // Sends and collectives started and neither done nor cancelled.
  virtual std::size_t active_transfers() const = 0;
  // Flows (flow model) or moving stages (analytical model) using bandwidth now.
  virtual std::size_t active_flows() const = 0;
  virtual uint64_t transfers_completed() const = 0;

  virtual LinkUsage link_usage() const = 0;
  // Transfers using each directed link now (flows, or stages crossing it).
  virtual uint32_t link_load(uint32_t link) const = 0;

  // Conveniences: a callable instead of an observer (one allocation per transfer). cancel()
  // drops the callable.
  TransferId send(int src, int dst, double bytes, std::function<void()> on_done, uint64_t flow_key = 0);
  TransferId collective(GroupId group, work::CollectiveOp op, double bytes, std::function<void()> on_done,
                        const CollectiveOptions& options = {});

 protected:
  // Implementations call this when they cancel `id`: a callable given for it is dropped.
  void forget_callback(TransferId id);

 private:
  class Callbacks;  // the observer behind the conveniences
  Callbacks& callbacks();
  std::unique_ptr<Callbacks> callbacks_;

 public:
  Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
};

}  // namespace cs::net
