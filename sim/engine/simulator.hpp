#pragma once
// The discrete-event engine: a clock, a queue of pending events with a total order, and
// per-entity random streams. It knows nothing of GPUs or networks.
//
// Invariants
// - Events run in (time, priority, insertion sequence) order: a total order, so a run is
//   deterministic. Lower priority values run first among events at the same time.
// - now() never decreases. Scheduling in the past (or at a non-finite time) is a
//   programming error: std::logic_error, in every build type.
// - Priorities are in [-128, 127] (EventQueue::kMinPriority..kMaxPriority).
// - Handlers may schedule and cancel events; run() and step() may not be called from inside
//   an event (std::logic_error).
// - No process-global state: two Simulators in one process are fully independent.
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

#include "sim/engine/event_queue.hpp"
#include "sim/engine/event_target.hpp"
#include "sim/engine/random.hpp"
#include "sim/engine/recorder.hpp"
#include "sim/engine/time.hpp"

namespace cs::engine {

// Thrown by Simulator::run() (or poll_interrupt()) when the simulator's interrupt check says
// to stop: a user's Ctrl-C, a cancelled sweep. The simulation is abandoned, not resumable.
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

class Simulator {
 public:
  explicit Simulator(uint64_t seed = 0);
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;
  ~Simulator();

  Time now() const { return now_; }
  uint64_t seed() const { return seed_; }

  // Schedule target.on_event(tag) at absolute time t (t >= now()). Inline (below), as are
  // step() and step_until(): a model's run makes a few of these calls per event.
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
  // `until`. Events at exactly `until` run. Unless stop() ended it, a run with a finite
  // `until` leaves now() == max(now(), until), also when the queue ran empty before `until`
  // (so `run(now() + dt)` in a loop always makes progress). A NaN `until` throws
  // std::invalid_argument.
  void run(Time until = kForever);
  // Run exactly one event, if any. Returns false when the queue is empty.
  bool step() { return step_until(kForever); }
  // Run the next event if it is at or before `until` (true); else run nothing (false), also
  // when the queue is empty. The clock is not moved to `until`. A NaN `until` throws
  // std::invalid_argument. (One look at the queue: a loop of top_time() and step() looks twice.)
  bool step_until(Time until);
  // Ask run() to return after the current event (the clock stays at that event's time).
  // The request is cleared when run() starts and when it honours it.
  void stop() { stop_requested_ = true; }

  // Cancellation. run() calls `check` every `every_events` events (and long computations
  // inside an event may call poll_interrupt()); when it returns true, run() throws
  // Interrupted. The check belongs to this simulator, never to the process: a binding sets
  // one per run (Python's: PyErr_CheckSignals under the GIL, or a sweep's cancel flag). An
  // empty function removes it. every_events >= 1.
  void set_interrupt_check(std::function<bool()> check, uint64_t every_events = 4096);
  // The check (empty: none), for work of this run done on another simulator (a step simulated
  // inside an event) to poll the same.
  const std::function<bool()>& interrupt_check() const { return interrupt_check_; }
  // Throws Interrupted when the check says so; a no-op without a check.
  void poll_interrupt() {
    if (interrupt_check_ && interrupt_check_()) throw Interrupted();
  }

  uint64_t events_processed() const { return events_processed_; }
  std::size_t pending() const { return queue_.size(); }

  // The random stream of a named entity ("spot_market", "flow_hash", "node/17"...). The same
  // (seed, name) gives the same sequence whatever other streams exist or were used.
  RandomStream& random(std::string_view entity);

  Recorder& recorder() { return recorder_; }
  const Recorder& recorder() const { return recorder_; }

  // The pending events (read-only: sizes and memory for benchmarks and diagnostics).
  const EventQueue& queue() const { return queue_; }

 private:
  class FunctionTarget;
  // Clears a flag on scope exit, also when an event handler throws.
  struct FlagGuard {
    bool& flag;
    explicit FlagGuard(bool& f) : flag(f) { flag = true; }
    ~FlagGuard() { flag = false; }
    FlagGuard(const FlagGuard&) = delete;
    FlagGuard& operator=(const FlagGuard&) = delete;
  };
  // step_until() without its checks of the call (run() makes them once, not per event).
  bool dispatch_until(EventQueue::Bound until);
  // The errors of the inline calls, built out of line.
  [[noreturn, gnu::noinline]] static void bad_time(Time t, Time now);
  [[noreturn, gnu::noinline]] static void bad_step(Time until);
  // Hash for heterogeneous lookup: random(name) finds a stream without building a string.
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  uint64_t seed_;
  Time now_ = 0.0;
  uint64_t events_processed_ = 0;
  bool stop_requested_ = false;
  bool dispatching_ = false;  // inside on_event: run() and step() may not be re-entered
  std::function<bool()> interrupt_check_;
  uint64_t interrupt_every_ = 4096;
  EventQueue queue_;
  std::unique_ptr<FunctionTarget> functions_;
  std::unordered_map<std::string, std::unique_ptr<RandomStream>, NameHash, std::equal_to<>>
      streams_;
  Recorder recorder_;
};

inline EventId Simulator::schedule_at(Time t, EventTarget& target, uint64_t tag, int priority) {
  // Not before now, and finite: given t >= now (finite), t <= the largest double says t < inf.
  if (!(t >= now_ && t <= std::numeric_limits<double>::max())) [[unlikely]] bad_time(t, now_);
  return queue_.push(t, priority, &target, tag);
}

inline bool Simulator::step_until(Time until) {
  if (dispatching_ || until != until) [[unlikely]] bad_step(until);
  return dispatch_until(EventQueue::Bound(until));
}

inline bool Simulator::dispatch_until(EventQueue::Bound until) {
  QueuedEvent ev{};
  // Open: the event's handler mostly schedules its model's next event, which then fills the
  // heap's root in one sift (EventQueue, "The open root"); settled after the handler.
  if (!queue_.pop_until_open(until, ev)) return false;
  now_ = ev.time;  // >= the previous now_: events are never scheduled in the past
  ++events_processed_;
  {
    FlagGuard guard(dispatching_);
    ev.target->on_event(ev.tag);
  }
  queue_.settle();
  return true;
}

}  // namespace cs::engine
