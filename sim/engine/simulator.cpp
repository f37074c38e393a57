#include "sim/engine/simulator.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cs::engine {

// Runs std::function events. Callables sit in a slot table and the event's tag is the slot
// index, so the queue keeps its 16-byte keys; freed slots are reused (LIFO, still in cache).
class Simulator::FunctionTarget final : public EventTarget {
 public:
  uint64_t store(std::function<void()> fn) {
    if (!free_.empty()) {
      const uint64_t slot = free_.back();
      free_.pop_back();
      functions_[slot] = std::move(fn);
      return slot;
    }
    functions_.push_back(std::move(fn));
    return functions_.size() - 1;
  }

  void discard(uint64_t slot) {
    functions_[slot] = nullptr;  // releases captured state now, not at the next reuse
    free_.push_back(slot);
  }

  void on_event(uint64_t slot) override {
    // Move the callable out first: it may schedule more callables, which can grow the table.
    std::function<void()> fn = std::move(functions_[slot]);
    discard(slot);
    fn();
  }

 private:
  std::vector<std::function<void()>> functions_;
  std::vector<uint64_t> free_;
};

void Simulator::bad_time(Time t, Time now) {
  throw std::logic_error("Simulator: cannot schedule an event at t=" + std::to_string(t) +
                         " s when now=" + std::to_string(now) + " s (past or non-finite time)");
}

void Simulator::bad_step(Time until) {
  if (std::isnan(until)) throw std::invalid_argument("Simulator::step_until: until is NaN");
  throw std::logic_error("Simulator::step: called from inside an event");
}

Simulator::Simulator(uint64_t seed) : seed_(seed), functions_(std::make_unique<FunctionTarget>()) {}

Simulator::~Simulator() = default;

EventId Simulator::schedule_at(Time t, std::function<void()> fn, int priority) {
  if (!(t >= now_) || !std::isfinite(t)) bad_time(t, now_);
  if (!fn) throw std::invalid_argument("Simulator::schedule_at: empty std::function");
  const uint64_t slot = functions_->store(std::move(fn));
  try {
    return queue_.push(t, priority, functions_.get(), slot);
  } catch (...) {
    functions_->discard(slot);
    throw;
  }
}

bool Simulator::cancel(EventId id) {
  const auto cancelled = queue_.cancel_and_get(id);
  if (!cancelled) return false;
  if (cancelled->target == functions_.get()) functions_->discard(cancelled->tag);
  return true;
}

void Simulator::run(Time until) {
  if (dispatching_) throw std::logic_error("Simulator::run: called from inside an event");
  if (std::isnan(until)) throw std::invalid_argument("Simulator::run: until is NaN");
  stop_requested_ = false;
  uint64_t until_poll = interrupt_every_;
  const EventQueue::Bound bound(until);  // converted once, not per event
  for (;;) {
    if (interrupt_check_ && --until_poll == 0) {
      // The check runs before an event that will run, as it always has: not after the last.
      if (queue_.empty() || queue_.top_time() > until) break;
      until_poll = interrupt_every_;
      poll_interrupt();
    }
    if (!dispatch_until(bound)) break;  // until is not NaN, and no event is running (above)
    if (stop_requested_) {
      stop_requested_ = false;
      return;
    }
  }
  // Advancing also when the queue ran dry keeps loops like `while (now() < T) run(now()+dt)`
  // from spinning without progress.
  if (std::isfinite(until) && until > now_) now_ = until;
}

void Simulator::set_interrupt_check(std::function<bool()> check, uint64_t every_events) {
  if (every_events == 0) throw std::invalid_argument("Simulator::set_interrupt_check: every_events must be >= 1");
  interrupt_check_ = std::move(check);
  interrupt_every_ = every_events;
}

RandomStream& Simulator::random(std::string_view entity) {
  auto it = streams_.find(entity);
  if (it == streams_.end()) {
    it = streams_.emplace(std::string(entity), std::make_unique<RandomStream>(seed_, entity)).first;
  }
  return *it->second;
}

}  // namespace cs::engine
