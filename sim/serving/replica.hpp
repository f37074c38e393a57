#pragma once
// A serving replica: what the pool, the load balancer and the autoscalers see of a plain
// server (server_replica.hpp) or an LLM server (llm_replica.hpp).
//
// Work: submit() hands a request over (precondition: accepting()); the replica queues or
// serves it and reports each completion to its ReplicaListener. Lifecycle, driven by the
// pool: begin_drain() stops new work (queued requests are handed back with take_queued()),
// in-flight work finishes, then on_drained() fires once; abort() stops at once and hands
// back everything in flight (a reclaimed spot node at the end of its warning).
//
// Load signals for balancers and autoscalers: in_service() (slots busy / sequences running),
// queued() (accepted, not yet started), outstanding() = both; and cumulative time integrals
// of them (LoadIntegrals) so a metric window's average is a difference of two snapshots.
//
// Invariants: 0 <= in_service() <= capacity(); outstanding() = in_service() + queued();
// integrals never decrease.
#include <cstdint>
#include <vector>

#include "sim/engine/event_target.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/serving/request.hpp"

namespace cs::serving {

class Replica;

class ReplicaListener {
 public:
  virtual ~ReplicaListener() = default;
  // `request` finished on `replica` at sim.now() (its start_s and first_token_s are set).
  virtual void on_complete(Replica& replica, const Request& request) = 0;
  // An LLM replica produced `request`'s first token at sim.now() (its first_token_s is set).
  virtual void on_first_token(Replica& /*replica*/, const Request& /*request*/) {}
  // A slot freed up and nothing was queued locally (a central queue may dispatch now).
  virtual void on_slot_free(Replica& replica) = 0;
  // A draining replica has no work left.
  virtual void on_drained(Replica& replica) = 0;
};

// Cumulative integrals since the replica was created, in request-seconds (or share-seconds).
struct LoadIntegrals {
  double time_s = 0;          // when they were taken
  double busy = 0;            // integral of in_service() / capacity(): utilization-seconds
  double in_service = 0;      // integral of in_service()
  double queued = 0;          // integral of queued()
  double kv_usage = 0;        // integral of KV-cache blocks used / blocks (LLM; 0 otherwise)
  uint64_t arrivals = 0;      // requests submitted so far
  uint64_t completions = 0;   // requests completed so far
};

class Replica : public engine::EventTarget {
 public:
  // `capacity`: its slots (plain server) or sequences (LLM), >= 1.
  Replica(engine::Simulator& sim, ReplicaListener& listener, uint32_t id, int capacity)
      : sim_(sim), listener_(listener), id_(id), capacity_(capacity),
        per_slot_(1.0 / capacity), last_change_s_(sim.now()) {}

  uint32_t id() const { return id_; }
  int capacity() const { return capacity_; }
  int in_service() const { return in_service_; }
  int queued() const { return queued_; }
  int outstanding() const { return in_service_ + queued_; }
  bool accepting() const { return !draining_; }
  bool draining() const { return draining_; }
  // A slot is free for one more request (central-queue dispatch asks this): what it serves and
  // what it accepted for its next start (an LLM engine admits its waiting sequences at the
  // next iteration, as vLLM's) stay under its capacity (a plain server's slots, an LLM
  // server's max_num_seqs), and it is not closed (a static batch running: nothing starts
  // before its end, when it reopens and reports its slots free).
  bool can_start_now() const { return !closed_ && in_service_ + queued_ < capacity_; }

  // False when the request could never be served here (too large for it); the pool drops it.
  virtual bool admissible(const Request&) const { return true; }
  virtual void submit(const Request& request) = 0;

  // Stop taking requests; queued ones are to be collected with take_queued(). on_drained()
  // fires (possibly from inside this call) once nothing is in flight.
  void begin_drain();
  // Removes every accepted-but-not-started request, appending it to `out` (FCFS order).
  virtual void take_queued(std::vector<Request>& out) = 0;
  // Stops now: cancels pending work and appends everything in flight or queued to `out`.
  virtual void abort(std::vector<Request>& out) = 0;

  LoadIntegrals integrals() const;

 protected:
  // Subclasses report every change of their load through these, so the integrals stay exact.
  // (Inline: a replica reports its load at every change of its batch; only a change costs.)
  void set_load(int in_service, int queued) {
    if (in_service != in_service_ || queued != queued_) change_load(in_service, queued, kv_share_);
  }
  // With the KV cache's share in use, in [0, 1] (an LLM replica): the integrals advanced once.
  void set_load(int in_service, int queued, double kv_share) {
    if (in_service != in_service_ || queued != queued_ || kv_share != kv_share_) change_load(in_service, queued, kv_share);
  }
  void count_arrival() { ++arrivals_; }
  void complete(const Request& request);  // notifies the listener, counts
  void first_token(const Request& request) { listener_.on_first_token(*this, request); }
  void slot_freed() {
    if (!draining_) listener_.on_slot_free(*this);
  }
  void maybe_drained();
  void set_closed(bool closed) { closed_ = closed; }
  bool closed() const { return closed_; }

  engine::Simulator& sim_;
  ReplicaListener& listener_;

 private:
  void advance_integrals();
  // The integrals advanced to now with the load so far, then the new load.
  void change_load(int in_service, int queued, double kv_share);

  uint32_t id_;
  int capacity_;
  double per_slot_;  // 1 / capacity
  int in_service_ = 0, queued_ = 0;
  double kv_share_ = 0;
  bool draining_ = false;
  bool closed_ = false;  // can start nothing until its running work ends (set_closed)
  bool drained_reported_ = false;
  double last_change_s_;
  LoadIntegrals integrals_;
  uint64_t arrivals_ = 0, completions_ = 0;
};

}  // namespace cs::serving
