#pragma once
// The discrete-event engine: a clock, a queue of pending events with a total order, and
// per-entity random streams. It knows nothing of GPUs or networks.
//
// Invariants
// - Events run in (time, priority, insertion sequence) order: a total order, so a run is
//   deterministic. Lower priority values run first among events at the same time.
// - now() never decreases. Scheduling in the past is a programming error (asserted).
// - No process-global state: two Simulators in one process are fully independent.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "sim/engine/event_queue.hpp"
#include "sim/engine/event_target.hpp"
#include "sim/engine/random.hpp"
#include "sim/engine/recorder.hpp"
#include "sim/engine/time.hpp"

namespace cs::engine {

class Simulator {
 public:
  explicit Simulator(uint64_t seed = 0);
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;
  ~Simulator();

  Time now() const { return now_; }
  uint64_t seed() const { return seed_; }

  // Schedule target.on_event(tag) at absolute time t (t >= now()).
  EventId schedule_at(Time t, EventTarget& target, uint64_t tag = 0, int priority = 0);
  EventId schedule_in(Time delay, EventTarget& target, uint64_t tag = 0, int priority = 0) {
    return schedule_at(now_ + delay, target, tag, priority);
  }
  // Convenience for tests and glue code: a callable (slower: one allocation per event).
  EventId schedule_at(Time t, std::function<void()> fn, int priority = 0);
  EventId schedule_in(Time delay, std::function<void()> fn, int priority = 0) {
    return schedule_at(now_ + delay, std::move(fn), priority);
  }

  // Cancel a pending event. Returns false if it already ran, was cancelled, or is unknown.
  bool cancel(EventId id);

  // Run events until the queue is empty, stop() is called, or the next event is later than
  // `until`. If stopped by `until` (finite), the clock is advanced to `until`.
  void run(Time until = kForever);
  // Run exactly one event, if any. Returns false when the queue is empty.
  bool step();
  // Ask run() to return after the current event.
  void stop() { stop_requested_ = true; }

  uint64_t events_processed() const { return events_processed_; }
  std::size_t pending() const { return queue_.size(); }

  // The random stream of a named entity ("spot_market", "flow_hash", "node/17"...). The same
  // (seed, name) gives the same sequence whatever other streams exist or were used.
  RandomStream& random(std::string_view entity);

  Recorder& recorder() { return recorder_; }
  const Recorder& recorder() const { return recorder_; }

 private:
  class FunctionTarget;

  uint64_t seed_;
  Time now_ = 0.0;
  uint64_t events_processed_ = 0;
  bool stop_requested_ = false;
  EventQueue queue_;
  std::unique_ptr<FunctionTarget> functions_;
  std::unordered_map<std::string, std::unique_ptr<RandomStream>> streams_;
  Recorder recorder_;
};

}  // namespace cs::engine
