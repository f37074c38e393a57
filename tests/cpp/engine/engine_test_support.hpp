#pragma once
// Shared by the engine tests: event targets that ignore or record what they receive, and a
// helper that drains an EventQueue.
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/engine/event_queue.hpp"
#include "sim/engine/event_target.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/engine/time.hpp"

namespace cs::engine::test {

// Ignores every event.
class NullTarget final : public EventTarget {
 public:
  void on_event(uint64_t) override {}
};

// Records the tag of every event it receives.
class Counter final : public EventTarget {
 public:
  void on_event(uint64_t tag) override { tags.push_back(tag); }
  std::vector<uint64_t> tags;
};

// Records (now, tag) of every event it receives; models may extend it to react as well.
class Log : public EventTarget {
 public:
  explicit Log(Simulator& sim) : sim_(sim) {}
  void on_event(uint64_t tag) override { seen.emplace_back(sim_.now(), tag); }
  std::vector<std::pair<Time, uint64_t>> seen;

 protected:
  Simulator& sim_;
};

// Pops every pending event and returns the tags in pop order.
inline std::vector<uint64_t> drain_tags(EventQueue& q) {
  std::vector<uint64_t> tags;
  while (!q.empty()) tags.push_back(q.pop().tag);
  return tags;
}

}  // namespace cs::engine::test
