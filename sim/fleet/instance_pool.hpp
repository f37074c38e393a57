#pragma once
// A pool of instances of one type in one market: what a training run holds its nodes in and
// what a serving fleet holds its replicas in.
//
// The pool owns the stochastic life of its instances: hardware and software failures
// (failures.hpp), spot reclaims with their notice (spot_reclaims.hpp), replacements that take
// time, and the fallback of a capacity request to another pool (spot -> on-demand). It books
// the instances it holds in a CostLedger account, and tells its owner what happens through
// InstancePoolListener:
//   on_reclaim_notice  "instances i.. will be reclaimed in w seconds" (they stay held until then)
//   on_interruption    "instances i.. failed / were reclaimed now"
//   on_ready           "instances i.. are ready" (capacity back, or new capacity)
//   on_fallback        "the request for instance i moved to pool P as instance j"
// The owner decides what an interruption means for its work (a training job restarts from a
// checkpoint, a serving fleet loses a replica); the pool only keeps its capacity: unless
// `replace_lost` is false, every instance lost is asked for again.
//
// Instances are identified by a slot index, stable for the life of the instance and reused by
// its replacement (so failure domains of consecutive slots stay put). Slots: empty ->
// requested -> held -> (noticed ->) empty or requested again.
//
// Random streams: "<name>/failures", "<name>/reclaims", "<name>/provisioning" (one draw order
// per stream, so a run is reproducible from the seed and the configuration).
// Not thread-safe; one pool belongs to one Simulator.
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/fleet/cost_ledger.hpp"
#include "sim/fleet/failures.hpp"
#include "sim/fleet/market.hpp"
#include "sim/fleet/spot_reclaims.hpp"
#include "sim/sources/distribution.hpp"

namespace cs::fleet {

class InstancePool;

enum class LossKind : unsigned char { spot_reclaim, hardware_failure };

struct Interruption {
  LossKind kind = LossKind::hardware_failure;
  bool instances_lost = true;  // false: a fault that crashes the work; the instances stay held
  bool correlated = false;     // a failure domain or a correlated reclaim (several at once)
  int cause = -1;              // index into FailureConfig::causes; -1 for reclaims and traces
};

class InstancePoolListener {
 public:
  virtual ~InstancePoolListener() = default;
  // `ids` will be taken at now + warning_s; until then they stay held and billed.
  virtual void on_reclaim_notice(InstancePool& pool, std::span<const int> ids,
                                 double warning_s) = 0;
  // `ids` failed or were reclaimed now (no longer held if event.instances_lost).
  virtual void on_interruption(InstancePool& pool, std::span<const int> ids,
                               const Interruption& event) = 0;
  // `ids` are ready: held and billed from now.
  virtual void on_ready(InstancePool& pool, std::span<const int> ids) = 0;
  // The pending request for `id` waited longer than the fallback policy allows: it was
  // cancelled here and asked for in `to` as `new_id` (whose on_ready comes from `to`).
  virtual void on_fallback(InstancePool& /*from*/, int /*id*/, InstancePool& /*to*/, int /*new_id*/) {}
};

struct InstancePoolConfig {
  std::string name = "pool";  // names the random streams and the ledger account
  Market market = Market::on_demand;
  double usd_per_hour = 0.0;  // per instance
  FailureConfig failures;
  SpotReclaimConfig reclaims;  // only used when market == spot
  sources::Distribution provisioning = sources::Distribution::constant(0.0);  // delay of request()ed instances
  bool replace_lost = true;    // ask for a replacement of every instance taken

  void validate() const;
};

// Capacity that does not come back in time is bought elsewhere: a pending request older than
// `after_s` is cancelled here and asked for in `pool` instead (its provisioning delay).
struct FallbackPolicy {
  InstancePool* pool = nullptr;
  double after_s = std::numeric_limits<double>::infinity();
};

struct PoolStats {
  int64_t failures = 0;              // instance failures (correlated ones count each instance)
  int64_t failure_events = 0;        // failure events (a domain failure is one)
  int64_t correlated_failure_events = 0;
  int64_t restart_only_failures = 0;  // failures whose cause leaves the node in service
  int64_t reclaim_notices = 0;       // instances given a notice
  int64_t reclaims = 0;              // instances taken after their notice
  int64_t reclaim_events = 0;        // reclaim events (a correlated reclaim is one)
  int64_t fallbacks = 0;             // requests moved to the fallback pool
  int64_t ready = 0;                 // instances that became ready after a request
};

class InstancePool final : public engine::EventTarget {
 public:
  InstancePool(engine::Simulator& sim, InstancePoolConfig config, CostLedger& ledger,
               InstancePoolListener* listener = nullptr);
  InstancePool(const InstancePool&) = delete;
  InstancePool& operator=(const InstancePool&) = delete;
  // Cancels the pool's pending events (the Simulator must outlive the pool).
  ~InstancePool() override;

  void set_listener(InstancePoolListener* listener) { listener_ = listener; }
  void set_fallback(FallbackPolicy fallback) { fallback_ = fallback; }

  // n instances held from now on, without a provisioning delay (the fleet at t = 0, or a
  // launch that finds capacity at once); returns their ids.
  std::vector<int> start_held(int n);
  // n more instances, each ready after a provisioning delay (config().provisioning, or
  // `delay`); returns their ids.
  std::vector<int> request(int n);
  std::vector<int> request(int n, const sources::Distribution& delay);
  // A scripted reclaim: these held instances get their notice now and are taken after the
  // warning, as a reclaim drawn by the pool would (spot pools only; instances not held, or
  // already under notice, are ignored).
  void reclaim(std::span<const int> ids);
  // Gives up these instances (held, noticed or requested): billing stops now, pending requests
  // are cancelled, and nothing replaces them (a scale-down). Unknown or empty ids are ignored.
  void release(std::span<const int> ids);
  // Give up everything: pending requests are cancelled, held instances stop being billed, and
  // the pool schedules nothing more. Used when the work is done.
  void release_all();

  const InstancePoolConfig& config() const { return config_; }
  const std::string& name() const { return config_.name; }
  Market market() const { return config_.market; }
  enum class InstanceState : unsigned char { empty, requested, held, noticed };
  InstanceState state(int id) const;
  // Held instances (noticed ones included), in no particular order.
  const std::vector<int>& held_ids() const { return held_.ids; }
  int held() const { return static_cast<int>(held_.size()); }  // noticed instances included
  int pending() const { return pending_; }                      // requested, not yet ready
  const PoolStats& stats() const { return stats_; }
  CostLedger::AccountId account() const { return account_; }
  // Instance-seconds during which instances were exposed to reclaims (held, no notice yet):
  // the exposure a reclaim count is compared against.
  double reclaim_exposure_s() const;

  void on_event(uint64_t tag) override;

 private:
  using SlotState = InstanceState;
  enum class Kind : unsigned char {
    failure,            // superposed exponential failures
    node_failure,       // one slot's own (Weibull) failure
    domain_failure,     // superposed correlated failure domains
    failure_trace,      // payload: trace index
    reclaim,            // superposed independent reclaims
    correlated_reclaim,
    reclaim_trace,      // payload: trace index
    reclaim_take,       // payload: batch index
    ready,              // payload: slot
    fallback,           // payload: slot
  };
  struct Slot {
    SlotState state = SlotState::empty;
    engine::EventId ready;      // pending ready event
    engine::EventId fallback;   // pending fallback event
    engine::EventId failure;    // the slot's own failure event (Weibull only)
    std::size_t held_pos = 0;   // index in held_ (while held or noticed)
    std::size_t exposed_pos = 0;  // index in exposed_ (while held)
    std::size_t batch = 0;      // the notice batch (while noticed)
  };
  // A set of instances kept in a vector with O(1) insert, erase and uniform draw.
  struct IndexedSet {
    std::vector<int> ids;
    void insert(std::vector<Slot>& slots, int id, std::size_t Slot::*pos);
    void erase(std::vector<Slot>& slots, int id, std::size_t Slot::*pos);
    std::size_t size() const { return ids.size(); }
  };

  static uint64_t tag(Kind k, uint64_t payload = 0) { return static_cast<uint64_t>(k) | payload << 8; }
  engine::EventId schedule(engine::Time t, Kind k, uint64_t payload = 0);
  int new_slot();
  void ask_for(int slot, const sources::Distribution& delay);
  void make_ready(int slot);
  // Takes `ids` out of service (billing stops) and asks for replacements.
  void take(std::span<const int> ids, const sources::Distribution& replacement);
  void fail(std::vector<int> ids, const Interruption& event);
  void notice(std::vector<int> ids, bool correlated);
  void take_batch(std::size_t batch);
  void fall_back(int slot);
  // Draws k distinct instances uniformly from `from`.
  std::vector<int> draw(const IndexedSet& from, std::size_t k, engine::RandomStream& rng) const;
  int draw_cause();
  void schedule_node_failure(int slot);
  // Superposed processes: redrawn when the population they run over changes.
  void redraw_failures();
  void redraw_reclaims();
  void schedule_domain_failure();
  void schedule_correlated_reclaim();
  void set_exposed_accounting();
  void cancel_events();
  void book_count();

  engine::Simulator& sim_;
  InstancePoolConfig config_;
  CostLedger& ledger_;
  InstancePoolListener* listener_;
  FallbackPolicy fallback_;
  CostLedger::AccountId account_;
  engine::RandomStream& failure_rng_;
  engine::RandomStream& reclaim_rng_;
  engine::RandomStream& provisioning_rng_;
  std::vector<double> cause_weights_;
  bool per_node_failures_;
  bool released_ = false;

  std::vector<Slot> slots_;
  std::vector<int> free_slots_;
  IndexedSet held_;     // held or noticed
  IndexedSet exposed_;  // held, no notice: exposed to reclaims
  int pending_ = 0;
  struct Batch {  // instances noticed together, taken together
    std::vector<int> ids;
    bool correlated = false;
    engine::EventId take;
  };
  std::vector<Batch> batches_;
  std::vector<std::size_t> free_batches_;

  engine::EventId failure_event_;
  engine::EventId domain_event_;
  engine::EventId reclaim_event_;
  engine::EventId correlated_reclaim_event_;
  engine::EventId failure_trace_event_;
  engine::EventId reclaim_trace_event_;
  std::size_t domain_count_ = 0;  // domains the current domain event was drawn for
  double exposure_closed_s_ = 0.0;
  engine::Time exposure_since_ = 0.0;
  PoolStats stats_;
};

}  // namespace cs::fleet
