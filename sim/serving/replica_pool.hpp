#pragma once
// A pool of identical replicas behind one load balancer: launches replicas (cold start),
// drains them on scale-in, routes requests, holds requests at the balancer while no replica
// can take them, and holds each replica's instance in the fleet's markets (serving_market.hpp:
// one fleet::InstancePool per market, billed in a fleet::CostLedger, with spot reclaims and
// failures from the fleet's processes).
//
// Lifecycle of a replica: [waiting (for capacity; not billed) ->] starting (instance held,
// cold start running, billed) -> ready (serving) -> draining (takes no requests; its queued
// ones go back through the balancer; in-flight ones finish) -> stopped (instance released).
// set_desired(n) keeps waiting + starting + ready = n: it launches, or removes waiting and
// starting replicas first (newest first) and then drains ready ones (fewest outstanding
// requests first, newest on ties), as Kubernetes' ReplicaSet prefers not-ready pods, then the
// least busy.
//
// Spot reclaims and failures (the instance pools' listener):
//   reclaim notice  the replica stops taking requests and drains for the warning; a successor
//                   waits for spot capacity (reclaims.capacity_return; on demand after
//                   fallback_after_s) and then starts. A replica still starting is stopped.
//   reclaim         whatever is still in flight when the warning ends is lost: sent again
//                   through the balancer (LostWork::retry, keeping its arrival time) or dropped.
//   failure         the replica's work in flight is lost at once; a successor waits for the
//                   replacement (failures.replacement), or, for a cause that leaves the node
//                   in service, restarts on the same instance (a new cold start).
// reclaim(id) gives a spot replica its notice now (a scripted reclaim).
// Cost: each replica is billed from launch to stop at its market's price per replica-hour:
// cost_usd() = sum over markets of replica-hours x price.
//
// Serverless (spec.market.serverless set): the pool scales itself by requests
// (serverless_scaling.hpp): requests wait at the balancer for a free slot, a waiting request
// starts a replica, an idle replica stops after the idle timeout (retire()).
//
// Balancer queue: requests wait there (FCFS) when no replica is ready, and with
// BalancePolicy::central_queue, or any policy once max_queue or queue_timeout_s is set, until a
// replica has a free slot (Replica::can_start_now: a plain server's slots, an LLM server's
// max_num_seqs), the policy then choosing among the replicas with one. Beyond max_queue a
// request is dropped; one that waited longer than queue_timeout_s when it would be dispatched
// is dropped then.
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/enum_table.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/engine/time_weighted.hpp"
#include "sim/fleet/cost_ledger.hpp"
#include "sim/fleet/instance_pool.hpp"
#include "sim/serving/cold_start.hpp"
#include "sim/serving/load_balancer.hpp"
#include "sim/serving/replica.hpp"
#include "sim/serving/serverless_scaling.hpp"
#include "sim/serving/serving_market.hpp"

namespace cs::serving {

using fleet::Market;
enum class ReplicaState : uint8_t { waiting, starting, ready, draining, stopped };
enum class LostWork : uint8_t { retry, drop };
enum class DropReason : uint8_t { queue_full, timeout, lost, too_large };
// fleet.lost_work: the requests in flight on a replica that is reclaimed or fails.
inline constexpr auto kLostWorkNames = std::to_array<EnumName<LostWork>>({
    {"retry", LostWork::retry, "sent again through the balancer, keeping their arrival time"},
    {"drop", LostWork::drop, "dropped"},
});
static_assert(names_every_value<kLostWorkNames>());
// The summary's drops by reason.
inline constexpr auto kDropReasonNames = std::to_array<EnumName<DropReason>>({
    {"queue_full", DropReason::queue_full, "the balancer queue held max_queue requests", NameUse::output_only},
    {"timeout", DropReason::timeout, "waited at the balancer longer than queue_timeout", NameUse::output_only},
    {"lost", DropReason::lost, "lost with a reclaimed or failed replica (lost_work drop)", NameUse::output_only},
    {"too_large", DropReason::too_large, "more than a replica can ever admit", NameUse::output_only},
});
static_assert(names_every_value<kDropReasonNames>());

std::string_view to_string(DropReason reason);

struct PoolSpec {
  // Random streams "<name>/cold_start", "<name>/balancer"; instance pools "<name>/<market>".
  std::string name = "serving";
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
  // A replica produced the request's first token at sim.now().
  virtual void on_first_token(const Request& /*request*/) {}
};

using ReplicaFactory = std::function<std::unique_ptr<Replica>(ReplicaListener&, uint32_t id)>;

struct ReplicaInfo {
  uint32_t id = 0;
  Market market = Market::on_demand;
  ReplicaState state = ReplicaState::starting;
  bool noticed = false;  // under a spot reclaim notice
  // Placement: the lowest slot no other live replica holds at its launch (slot k stands for
  // the pool's k-th group of GPUs when the replicas are placed on a topology).
  uint32_t slot = 0;
  double launched_s = 0;
  double ready_s = -1;
  double stopped_s = -1;
  Replica* replica = nullptr;  // while ready or draining
};

class ReplicaPool final : public ReplicaListener,
                          public engine::EventTarget,
                          private fleet::InstancePoolListener {
 public:
  ReplicaPool(engine::Simulator& sim, PoolSpec spec, ReplicaFactory factory, RequestSink& sink);
  ~ReplicaPool() override;
  ReplicaPool(const ReplicaPool&) = delete;
  ReplicaPool& operator=(const ReplicaPool&) = delete;

  // `warm` replicas ready now (no cold start); the desired count becomes `warm`.
  void start(int warm);
  // A request reaching the pool.
  void route(const Request& request);
  // The ready replica the balancer would send a request to now (kNoReplica: none, or a
  // central queue, which picks when a slot frees), and a request sent to it later: to that
  // replica if it is still ready, else through the balancer (route()). Disaggregated serving
  // picks the decode replica when a prefill ends, so the KV cache moves to it.
  uint32_t pick();
  void route_to(uint32_t id, const Request& request);
  static constexpr uint32_t kNoReplica = ~uint32_t{0};
  void set_desired(int replicas);
  int desired() const { return desired_; }
  // Drains ready replica `id` and lowers the desired count by one (a serverless scale-down).
  void retire(uint32_t id);
  // The serverless platform's scaling, or nullptr.
  const ServerlessScaling* serverless() const { return serverless_.get(); }

  int ready_count() const { return ready_; }
  int starting_count() const { return starting_; }
  int waiting_count() const { return waiting_; }
  int draining_count() const { return draining_; }
  int billed_count() const { return starting_ + ready_ + draining_; }
  // Ids of every replica not stopped, in increasing order.
  const std::vector<uint32_t>& live() const { return live_; }
  const ReplicaInfo& info(uint32_t id) const { return slots_.at(id).info; }
  std::span<Replica* const> ready_replicas() const { return ready_list_; }
  std::size_t balancer_queue() const { return queue_.size(); }
  uint64_t routed() const { return routed_; }
  const PoolSpec& spec() const { return spec_; }

  // A scripted reclaim (see above): false when the replica holds no spot instance.
  bool reclaim(uint32_t id);
  // Replicas not stopped whose instance is (or will be) in `market`.
  std::vector<uint32_t> replicas_in(Market market) const;
  const fleet::InstancePool& instances(Market market) const { return *instances_[fleet::index(market)]; }
  uint64_t reclaims() const;  // spot replicas given a reclaim notice

  // Billing (the ledger's exact integrals).
  double replica_seconds(Market market) const;
  double cost_usd(Market market) const;
  double cost_usd() const;
  fleet::Money money() const;  // cost_usd by market or term of ownership, and energy
  const engine::TimeWeighted& billed_over_time() const { return billed_tw_; }
  const engine::TimeWeighted& ready_over_time() const { return ready_tw_; }
  const engine::TimeWeighted& queue_over_time() const { return queue_tw_; }

  // ReplicaListener
  void on_complete(Replica& replica, const Request& request) override;
  void on_first_token(Replica&, const Request& request) override { sink_.on_first_token(request); }
  void on_slot_free(Replica& replica) override;
  void on_drained(Replica& replica) override;
  // EventTarget: cold starts ending.
  void on_event(uint64_t tag) override;

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};
  struct Slot {
    ReplicaInfo info;
    std::unique_ptr<Replica> replica;
    engine::EventId cold_start;
    int instance = -1;        // held (or, while waiting, requested) in info.market's pool
    bool in_idle = false;     // on the central queue's idle stack
  };

  // fleet::InstancePoolListener
  void on_reclaim_notice(fleet::InstancePool& pool, std::span<const int> ids, double warning_s) override;
  void on_interruption(fleet::InstancePool& pool, std::span<const int> ids,
                       const fleet::Interruption& event) override;
  void on_ready(fleet::InstancePool& pool, std::span<const int> ids) override;
  void on_fallback(fleet::InstancePool& from, int id, fleet::InstancePool& to, int new_id) override;

  void reconcile();
  void launch(bool warm);
  uint32_t new_replica(Market market, int instance, ReplicaState state);
  void begin_cold_start(uint32_t id);
  void wait_for(Market market, const sources::Distribution& delay);
  // Instance slot -> replica maps per market: the replica holding it, or waiting for it.
  uint32_t& holder(Market m, int instance);
  uint32_t& waiter(Market m, int instance);
  void lose(uint32_t id);  // its instance is gone: in-flight work lost, stopped
  void make_ready(uint32_t id);
  void drain(uint32_t id);
  void stop(uint32_t id);  // releases its instance, if it still holds one
  void set_state(Slot& s, ReplicaState state);
  void forward(Request request);  // route without counting an arrival
  void dispatch(Replica& replica, const Request& request);
  void enqueue(const Request& request);
  Request pop_queue();
  void flush_queue();
  bool expired(const Request& request) const;
  Replica* pop_idle();
  void push_idle(Replica& replica);
  // Whether requests wait at the balancer for a free slot (max_queue or queue_timeout set).
  bool holds_at_balancer() const;
  // The replica the policy sends a request to now (among those with a free slot when holding),
  // or nullptr: the request waits.
  Replica* balanced_target();
  void reroute(std::vector<Request>& requests, bool lost);
  fleet::PerMarket<int> active_by_market() const;

  engine::Simulator& sim_;
  PoolSpec spec_;
  ReplicaFactory factory_;
  RequestSink& sink_;
  engine::RandomStream& cold_start_rng_;
  LoadBalancer balancer_;
  fleet::CostLedger ledger_;
  std::array<std::unique_ptr<fleet::InstancePool>, fleet::kMarkets> instances_;
  std::array<std::vector<uint32_t>, fleet::kMarkets> holders_, waiters_;

  std::vector<Slot> slots_;         // by id
  std::vector<uint32_t> live_;      // ids not stopped, increasing
  std::vector<Replica*> ready_list_;  // ready replicas by id
  std::vector<uint32_t> idle_;      // central queue: replicas that can start a request now
  std::vector<Replica*> free_list_;  // balanced_target's scratch: ready replicas with a free slot
  std::vector<std::unique_ptr<Replica>> graveyard_;  // stopped, freed at a safe point
  std::deque<Request> queue_;
  std::vector<Request> scratch_;

  std::vector<uint32_t> free_placement_;  // min-heap of slots given back
  uint32_t next_placement_ = 0;
  int desired_ = 0;
  int waiting_ = 0, starting_ = 0, ready_ = 0, draining_ = 0;
  uint64_t routed_ = 0;
  engine::TimeWeighted billed_tw_, ready_tw_, queue_tw_;
  std::unique_ptr<ServerlessScaling> serverless_;
};

}  // namespace cs::serving
