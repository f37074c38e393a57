#pragma once
// A map from request id to a value, for the requests in flight: a fleet numbers its requests
// in arrival order, so those in flight are mostly a window of consecutive ids, held in a
// deque (an insert, a lookup and an erase are a few instructions, with no allocation per
// request); an id that does not extend the window goes to a hash map beside it.
//
// Invariants: window_[i] is the entry of id first_ + i, empty once erased; the window's front
// is always an entry in use (erased ones are popped from the front). Memory: when the window
// grows past kCompactAt entries with fewer than a quarter of them in use (a request stuck in
// flight while many after it finished), the entries in use move to the map and the window
// starts again: after an id joins it, the window holds at most kCompactAt entries, or at least
// a quarter of it is in use (more than kCompactAt requests in flight may fill it legitimately).
// Iteration order (for_each) is unspecified.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>

namespace cs::serving {

template <class Value>
class RequestsById {
 public:
  // Adds `value` under `id` unless the id is already held (as std::unordered_map::emplace).
  void emplace(uint64_t id, const Value& value) {
    if (find(id)) return;
    if (window_.empty()) first_ = id;
    if (id == first_ + window_.size()) {
      window_.emplace_back(value);
      ++in_window_;
      if (window_.size() > kCompactAt && in_window_ < window_.size() / 4) compact();
    } else {
      others_.emplace(id, value);
    }
  }
  // The value under `id`, or nullptr.
  Value* find(uint64_t id) {
    if (id - first_ < window_.size()) {
      std::optional<Value>& slot = window_[static_cast<std::size_t>(id - first_)];
      if (slot) return &*slot;
    }
    if (others_.empty()) return nullptr;
    const auto it = others_.find(id);
    return it == others_.end() ? nullptr : &it->second;
  }
  void erase(uint64_t id) {
    if (id - first_ < window_.size() && window_[static_cast<std::size_t>(id - first_)]) {
      window_[static_cast<std::size_t>(id - first_)].reset();
      --in_window_;
      while (!window_.empty() && !window_.front()) {
        window_.pop_front();
        ++first_;
      }
      return;
    }
    if (!others_.empty()) others_.erase(id);
  }
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = 0; i < window_.size(); ++i)
      if (window_[i]) f(first_ + i, *window_[i]);
    for (const auto& [id, value] : others_) f(id, value);
  }
  std::size_t size() const { return in_window_ + others_.size(); }
  // Entries the window holds, erased ones included (its memory; bounded as stated above).
  std::size_t window_entries() const { return window_.size(); }

 private:
  static constexpr std::size_t kCompactAt = std::size_t{1} << 16;
  void compact() {
    for (std::size_t i = 0; i < window_.size(); ++i)
      if (window_[i]) others_.emplace(first_ + i, *window_[i]);
    window_.clear();
    in_window_ = 0;
  }

  std::deque<std::optional<Value>> window_;
  uint64_t first_ = 0;
  std::size_t in_window_ = 0;
  std::unordered_map<uint64_t, Value> others_;
};

}  // namespace cs::serving
