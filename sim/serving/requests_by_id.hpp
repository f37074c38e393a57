#pragma once
// A map from request id to a value, for the requests in flight: a fleet numbers its requests
// in arrival order, so those in flight are mostly a window of consecutive ids, held in a ring
// indexed by the id's low bits (an insert, a lookup and an erase are a few instructions, with
// no allocation per request); an id that does not extend the window goes to a hash map beside
// it.
//
// Invariants: the window holds the ids [first_, first_ + count_), the entry of id i at
// ring_[i & (ring_.size() - 1)], empty once erased; the ring's size is a power of two, at least
// count_; the window's front is always an entry in use (erased ones are dropped from the
// front). Memory: when the window grows past kCompactAt entries with fewer than a quarter of
// them in use (a request stuck in flight while many after it finished), the entries in use
// move to the map and the window starts again: after an id joins it, the window holds at most
// kCompactAt entries, or at least a quarter of it is in use (more than kCompactAt requests in
// flight may fill it legitimately); the ring keeps the size of the longest window so far (a
// power of two: at most twice it). Iteration order (for_each) is unspecified.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cs::serving {

template <class Value>
class RequestsById {
 public:
  // Adds `value` under `id` unless the id is already held (as std::unordered_map::emplace).
  void emplace(uint64_t id, const Value& value) {
    if (count_ == 0) first_ = id;
    // An id that extends the window is not in it: only the map can hold it already.
    if (id == first_ + count_) {
      if (!others_.empty() && others_.count(id) != 0) return;
      if (count_ == ring_.size()) grow();
      ring_[slot_of(id)].emplace(value);
      ++count_;
      ++in_window_;
      if (count_ > kCompactAt && in_window_ < count_ / 4) compact();
    } else if (!find(id)) {
      others_.emplace(id, value);
    }
  }
  // The value under `id`, or nullptr.
  Value* find(uint64_t id) {
    if (id - first_ < count_) {
      std::optional<Value>& slot = ring_[slot_of(id)];
      if (slot) return &*slot;
    }
    if (others_.empty()) return nullptr;
    const auto it = others_.find(id);
    return it == others_.end() ? nullptr : &it->second;
  }
  void erase(uint64_t id) {
    if (id - first_ < count_) {
      std::optional<Value>& slot = ring_[slot_of(id)];
      if (slot) {
        slot.reset();
        --in_window_;
        while (count_ != 0 && !ring_[slot_of(first_)]) {
          ++first_;
          --count_;
        }
        return;
      }
    }
    if (!others_.empty()) others_.erase(id);
  }
  template <class F>
  void for_each(F&& f) const {
    for (uint64_t id = first_; id != first_ + count_; ++id)
      if (const std::optional<Value>& slot = ring_[slot_of(id)]) f(id, *slot);
    for (const auto& [id, value] : others_) f(id, value);
  }
  std::size_t size() const { return in_window_ + others_.size(); }
  // Entries the window holds, erased ones included (bounded as stated above).
  std::size_t window_entries() const { return count_; }

 private:
  static constexpr std::size_t kCompactAt = std::size_t{1} << 16;
  std::size_t slot_of(uint64_t id) const { return static_cast<std::size_t>(id) & (ring_.size() - 1); }
  // Doubles the ring (16 entries at first), each entry at its id's slot in the new size.
  void grow() {
    std::vector<std::optional<Value>> bigger(ring_.empty() ? 16 : 2 * ring_.size());
    for (uint64_t id = first_; id != first_ + count_; ++id)
      bigger[static_cast<std::size_t>(id) & (bigger.size() - 1)] = std::move(ring_[slot_of(id)]);
    ring_ = std::move(bigger);
  }
  void compact() {
    for (uint64_t id = first_; id != first_ + count_; ++id) {
      std::optional<Value>& slot = ring_[slot_of(id)];
      if (slot) others_.emplace(id, *slot);
      slot.reset();
    }
    count_ = 0;
    in_window_ = 0;
  }

  std::vector<std::optional<Value>> ring_;
  uint64_t first_ = 0;
  std::size_t count_ = 0;  // the window's length, erased entries inside it included
  std::size_t in_window_ = 0;
  std::unordered_map<uint64_t, Value> others_;
};

}  // namespace cs::serving
