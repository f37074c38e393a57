#pragma once
// The inline paths of EventQueue (push, pop, pop_until, pop_until_open and what they share):
// included only at the end of event_queue.hpp, where the class they define is declared; the
// order, the lane, the open root and the dead keys are described there.
#include <cstdint>

#include "sim/engine/event_queue.hpp"

namespace cs::engine {

inline EventId EventQueue::push(Time t, int priority, EventTarget* target, uint64_t tag) {
  // The range test in unsigned arithmetic: priority - kMinPriority in int would overflow (undefined
  // behaviour) for a priority within 128 of INT_MAX.
  if (t != t ||
      static_cast<unsigned>(priority) - static_cast<unsigned>(kMinPriority) > unsigned{kMaxPriority - kMinPriority} ||
      target == nullptr) [[unlikely]] {
    reject_push(t, priority);
  }
  if (next_sequence_ >= sequence_limit_) [[unlikely]] renumber();
  uint32_t s = free_head_;
  if (s != kNoSlot) [[likely]] {
    free_head_ = slots_[s].next_free;
  } else {
    s = allocate_slot();
  }
  Slot& slot = slots_[s];
  slot.target = target;
  slot.tag = tag;
  const uint64_t order = (static_cast<uint64_t>(priority - kMinPriority) << (kSlotBits + kSequenceBits)) |
                         (next_sequence_ << kSlotBits) | s;
  ++next_sequence_;
  const Key key{time_to_bits(t), order};
  const Wide k = wide(key);
  if (hole_) {
    push_open(key);
  } else if ((heap_.size() == kRoot || k < wide(heap_[kRoot])) && (lane_empty() || wide(lane_.back()) < k)) {
    lane_.push_back(key);  // the earliest yet, after the lane's last: the lane stays sorted
  } else {
    push_heap(key);
  }
  ++live_;
  return EventId{(static_cast<uint64_t>(slot.generation) << 32) | s};
}

template <bool open>
inline QueuedEvent EventQueue::take_first(bool from_lane) {
  const Key top = from_lane ? lane_[lane_head_] : heap_[kRoot];
  const auto s = static_cast<uint32_t>(top.order & kSlotMask);
  Slot& slot = slots_[s];
  const QueuedEvent ev{bits_to_time(top.time), slot.target, slot.tag};
  bump_generation(slot.generation);
  release_slot(s);
  --live_;
  if (from_lane) {
    advance_lane();
  } else if constexpr (open) {
    hole_ = true;
  } else {
    remove_top();
  }
  if constexpr (open) {
    open_ = true;
    // The bound on dead keys holds open too (compaction wants the queue settled).
    if (dead_ > live_) [[unlikely]] settle();
  } else {
    tidy();
  }
  return ev;
}

template <bool open>
inline bool EventQueue::take_until(Bound until, QueuedEvent& out) {
  settle();
  if (live_ == 0) return false;
  const bool from_lane = lane_first();
  // The time's bits order as the times do (time_to_bits): no conversion of the key back.
  if ((from_lane ? lane_[lane_head_] : heap_[kRoot]).time > until.bits_) return false;
  out = take_first<open>(from_lane);
  return true;
}

inline QueuedEvent EventQueue::pop() {
  settle();
  if (live_ == 0) [[unlikely]] pop_empty();
  return take_first<false>(lane_first());
}

inline bool EventQueue::pop_until(Time until, QueuedEvent& out) { return take_until<false>(Bound(until), out); }

inline bool EventQueue::pop_until_open(Bound until, QueuedEvent& out) { return take_until<true>(until, out); }

inline void EventQueue::advance_lane() {
  ++lane_head_;
  if (lane_head_ == lane_.size()) {
    lane_.clear();
    lane_head_ = 0;
  } else if (lane_head_ >= 64 && 2 * lane_head_ >= lane_.size()) [[unlikely]] {
    trim_lane();
  }
}

}  // namespace cs::engine
