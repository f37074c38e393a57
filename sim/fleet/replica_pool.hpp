#pragma once
// A pool of identical replicas behind one load balancer: launches replicas (cold start),
// drains them on scale-in, routes requests, holds requests at the balancer while no replica
// can take them, bills replica-time per market, and takes spot reclaims.
//
// Lifecycle of a replica: starting (launched, cold start running, billed) -> ready (serving)
// -> draining (takes no requests; its queued ones go back through the balancer; in-flight
// ones finish) -> stopped. set_desired(n) keeps starting + ready = n: it launches, or removes
// starting replicas first (newest first) and then drains ready ones (fewest outstanding
// requests first, newest on ties), as Kubernetes' ReplicaSet prefers not-ready pods, then
// the least busy.
//
// The seam for spot capacity (the fleet's market and reclaim process drive it):
//   reclaim(id, warning_s)  the replica stops taking requests at once and drains; whatever
//                           is still in flight when the warning ends is lost: sent again
//                           through the balancer (LostWork::retry, keeping its arrival time)
//                           or dropped. A replacement is launched at once.
//   set_spot_available(b)   while false, launches that want spot go on-demand
//                           (fallback_to_on_demand) or wait; true ("capacity is back")
//                           launches what is missing.
// Markets: a launch goes to spot while spot replicas are below spot_share of the pool.
// Cost: each replica is billed from launch to stop at its market's price per replica-hour:
// cost_usd() = sum over markets of replica-hours x price.
//
// Balancer queue: requests wait there (FCFS) when no replica is ready, and always with
// BalancePolicy::central_queue until a replica has a free slot. Beyond max_queue a request
// is dropped; one that waited longer than queue_timeout_s when it would be dispatched is
// dropped then.
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/fleet/cold_start.hpp"
#include "sim/fleet/load_balancer.hpp"
#include "sim/fleet/replica.hpp"
#include "sim/fleet/time_weighted.hpp"

namespace cs::serving {

enum class Market : uint8_t { on_demand, spot };
enum class ReplicaState : uint8_t { starting, ready, draining, stopped };
enum class LostWork : uint8_t { retry, drop };
enum class DropReason : uint8_t { queue_full, timeout, lost, too_large };

std::string_view to_string(Market market);
std::string_view to_string(DropReason reason);

struct MarketSpec {
  // USD per replica-hour. Placeholders until the fleet's price catalog supplies them: a
  // single-H100 on-demand instance-hour is a few dollars; spot is often 40-70% less.
  double on_demand_per_hour = 4.0;
  double spot_per_hour = 1.6;
  double spot_share = 0;              // share of replicas to run on spot, [0, 1]
  bool fallback_to_on_demand = true;  // launch on-demand while spot capacity is unavailable

  double price_per_hour(Market m) const { return m == Market::spot ? spot_per_hour : on_demand_per_hour; }
};

struct PoolSpec {
  std::string name = "serving";  // random streams "<name>/cold_start", "<name>/balancer"
  BalancePolicy balance = BalancePolicy::power_of_two;  // Envoy's least-request default
  ColdStartSpec cold_start;
  MarketSpec market;
  LostWork lost_work = LostWork::retry;
  std::size_t max_queue = std::numeric_limits<std::size_t>::max();
  double queue_timeout_s = std::numeric_limits<double>::infinity();
};

// Where a pool's requests end.
class RequestSink {
 public:
  virtual ~RequestSink() = default;
  // `replica`: the id, in its pool, of the replica that served it.
  virtual void on_complete(const Request& request, uint32_t replica) = 0;
  virtual void on_dropped(const Request& request, DropReason reason) = 0;
};

using ReplicaFactory = std::function<std::unique_ptr<Replica>(ReplicaListener&, uint32_t id)>;

struct ReplicaInfo {
  uint32_t id = 0;
  Market market = Market::on_demand;
  ReplicaState state = ReplicaState::starting;
  double launched_s = 0;
  double ready_s = -1;
  double stopped_s = -1;
  Replica* replica = nullptr;  // while ready or draining
};

class ReplicaPool final : public ReplicaListener, public engine::EventTarget {
 public:
  ReplicaPool(engine::Simulator& sim, PoolSpec spec, ReplicaFactory factory, RequestSink& sink);
  ~ReplicaPool() override;
  ReplicaPool(const ReplicaPool&) = delete;
  ReplicaPool& operator=(const ReplicaPool&) = delete;

  // `warm` replicas ready now (no cold start); the desired count becomes `warm`.
  void start(int warm);
  // A request reaching the pool.
  void route(const Request& request);
  void set_desired(int replicas);
  int desired() const { return desired_; }

  int ready_count() const { return ready_; }
  int starting_count() const { return starting_; }
  int draining_count() const { return draining_; }
  int billed_count() const { return starting_ + ready_ + draining_; }
  // Ids of every replica not stopped, in increasing order.
  const std::vector<uint32_t>& live() const { return live_; }
  const ReplicaInfo& info(uint32_t id) const { return slots_.at(id).info; }
  std::span<Replica* const> ready_replicas() const { return ready_list_; }
  std::size_t balancer_queue() const { return queue_.size(); }
  uint64_t routed() const { return routed_; }
  const PoolSpec& spec() const { return spec_; }

  // Spot seam (see above). reclaim() returns false when the replica is unknown or stopped.
  bool reclaim(uint32_t id, double warning_s);
  void set_spot_available(bool available);
  bool spot_available() const { return spot_available_; }
  std::vector<uint32_t> replicas_in(Market market) const;
  uint64_t reclaims() const { return reclaims_; }

  // Billing.
  double replica_seconds(Market market) const;
  double cost_usd() const;
  const TimeWeighted& billed_over_time() const { return billed_tw_; }
  const TimeWeighted& ready_over_time() const { return ready_tw_; }
  const TimeWeighted& queue_over_time() const { return queue_tw_; }

  // ReplicaListener
  void on_complete(Replica& replica, const Request& request) override;
  void on_slot_free(Replica& replica) override;
  void on_drained(Replica& replica) override;
  // EventTarget: cold starts ending, reclaim warnings ending.
  void on_event(uint64_t tag) override;

 private:
  enum EventKind : uint64_t { kReady = 0, kDeadline = 1 };
  struct Slot {
    ReplicaInfo info;
    std::unique_ptr<Replica> replica;
    engine::EventId pending;  // cold start or reclaim deadline
    bool in_idle = false;     // on the central queue's idle stack
  };

  void reconcile();
  bool launch(bool warm);
  void make_ready(uint32_t id);
  void drain(uint32_t id);
  void stop(uint32_t id);
  void set_state(Slot& s, ReplicaState state);
  void forward(Request request);  // route without counting an arrival
  void dispatch(Replica& replica, const Request& request);
  void enqueue(const Request& request);
  Request pop_queue();
  void flush_queue();
  bool expired(const Request& request) const;
  Replica* pop_idle();
  void push_idle(Replica& replica);
  void reroute(std::vector<Request>& requests, bool lost);
  int active_in(Market market) const;

  engine::Simulator& sim_;
  PoolSpec spec_;
  ReplicaFactory factory_;
  RequestSink& sink_;
  engine::RandomStream& cold_start_rng_;
  LoadBalancer balancer_;

  std::vector<Slot> slots_;         // by id
  std::vector<uint32_t> live_;      // ids not stopped, increasing
  std::vector<Replica*> ready_list_;  // ready replicas by id
  std::vector<uint32_t> idle_;      // central queue: replicas that can start a request now
  std::vector<std::unique_ptr<Replica>> graveyard_;  // stopped, freed at a safe point
  std::deque<Request> queue_;
  std::vector<Request> scratch_;

  int desired_ = 0;
  int starting_ = 0, ready_ = 0, draining_ = 0;
  bool spot_available_ = true;
  uint64_t routed_ = 0;
  uint64_t reclaims_ = 0;
  double closed_seconds_[2] = {0, 0};  // billed seconds of stopped replicas, by market
  TimeWeighted billed_tw_, ready_tw_, queue_tw_;
};

}  // namespace cs::serving
