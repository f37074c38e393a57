#pragma once
// The pending-event set of the engine: a priority queue with a total order and cancellation.
//
// Order: events come out by (time, priority, insertion sequence). Lower priority values come
// first among events at the same time; events with equal (time, priority) come out in the
// order they were pushed (FIFO). -0.0 and +0.0 are the same time. NaN times are rejected.
//
// Layout (why it is fast): the heap holds only 16-byte keys {time, order}, where `order`
// packs [priority: 8 bits | sequence: 30 bits | slot: 26 bits], so one key comparison is the
// whole total order. Payloads (target, tag, generation) live in a separate slot array
// indexed by the key's slot bits. The heap is 4-ary, 64-byte aligned and offset so that the
// four children of a node share one cache line. See event_queue.cpp for details. push(),
// pop(), pop_until() and pop_until_open() are inline (event_queue_inline.hpp, included at the
// end of this header), their rare paths (errors,
// growth, sifting through the heap, dead keys) out of line: a model's run is a few of them
// per event (a shared cluster's month at 85%: 665.8 M instructions before, 619.6 M after).
//
// Limits
// - priority must be in [kMinPriority, kMaxPriority] = [-128, 127] (std::out_of_range).
// - At most kMaxPending = 2^26 = 67,108,864 events pending at once, counting cancelled
//   events not yet discarded; beyond it push() throws std::length_error. Memory at that size
//   is about 2.7 GB (~40 bytes per pending event, see memory_bytes()).
// - The 30-bit insertion sequence is renumbered in place (order-preserving, O(n log n))
//   when it runs out, i.e. once per ~10^9 pushes; the order of events is unchanged.
// - An EventId carries a 32-bit generation of its slot: a handle is recognized as stale
//   after its event ran or was cancelled, even if the slot is reused, unless the very same
//   slot was reused 2^32 times in between.
//
// The lane: a key that would become the heap's root (earlier than every key in it), and is
// not earlier than the last key put in the lane, goes instead to the end of a sorted run of
// keys beside the heap; pop() takes the smaller of the lane's first key and the heap's root,
// so the order is the same total order. An event scheduled for the current instant (a
// model's once-per-instant pass at a later priority: half the events of some models'
// runs) is then pushed and popped without sifting through the heap.
//
// The open root: the Simulator's loop pops with pop_until_open(), which leaves the heap's
// root as a hole instead of refilling it from the last leaf; a push() before settle() fills
// the hole with its own key, sifted down from the root (one sift instead of a pop's and a
// push's: an event's handler mostly schedules the model's next event; a key at the popped
// key's instant goes to the lane instead, as it would have). settle(), after the
// handler, refills an unfilled hole and drops dead keys come first. The order is the same
// total order: only where keys sit in the heap differs.
//
// Cancellation is lazy: a cancelled event stays in the heap (or the lane) as a dead key until
// it comes first or the heap is compacted (when dead keys outnumber live ones), so dead keys
// never exceed live ones: dead_entries() <= size(). size() counts only live events.
//
// Not thread-safe: one queue belongs to one Simulator, used by one thread.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/engine/aligned_allocator.hpp"
#include "sim/engine/event_target.hpp"
#include "sim/engine/time.hpp"

namespace cs::engine {

// Handle of a pushed event. raw == 0 means "no event".
struct EventId {
  uint64_t raw = 0;
  bool valid() const { return raw != 0; }
  friend bool operator==(EventId, EventId) = default;
};

// What an event delivers: target->on_event(tag) at `time`.
struct QueuedEvent {
  Time time;
  EventTarget* target;
  uint64_t tag;
};

class EventQueue {
 public:
  static constexpr int kMinPriority = -128;
  static constexpr int kMaxPriority = 127;
  static constexpr unsigned kSlotBits = 26;
  static constexpr unsigned kSequenceBits = 30;
  static constexpr std::size_t kMaxPending = std::size_t{1} << kSlotBits;
  static constexpr uint64_t kSequenceLimit = uint64_t{1} << kSequenceBits;
  static constexpr unsigned kArity = 4;

  EventQueue() : EventQueue(kSequenceLimit) {}
  // For tests only: renumber sequences once `sequence_limit` (<= kSequenceLimit, >= 2) pushes
  // have been numbered. Throws std::length_error if the live events alone exhaust the limit.
  explicit EventQueue(uint64_t sequence_limit);

  // Adds target->on_event(tag) at time t. target must not be null; t must not be NaN.
  // (Inline, with pop and pop_until below: a model's run is a few of them per event.)
  EventId push(Time t, int priority, EventTarget* target, uint64_t tag);

  // Removes a pending event. False if it already ran, was cancelled, or the handle is unknown.
  bool cancel(EventId id) { return cancel_and_get(id).has_value(); }
  // Same, returning what the cancelled event would have delivered (its time is not kept:
  // QueuedEvent::time is NaN).
  std::optional<QueuedEvent> cancel_and_get(EventId id);
  // True if `id` names an event that is still pending.
  bool contains(EventId id) const;

  bool empty() const { return live_ == 0; }
  std::size_t size() const { return live_; }
  // Time of the next live event; kForever when empty.
  Time top_time() const {
    if (open_) [[unlikely]] return open_top_time();
    return live_ == 0 ? kForever : bits_to_time(first_key().time);
  }
  // Removes and returns the next live event. Precondition: !empty() (std::out_of_range).
  QueuedEvent pop();
  // Removes the next live event into `out` and returns true if its time is <= `until`; else
  // returns false and removes nothing (also when empty). `until` must not be NaN. One look at
  // the next key for the test and the removal (top_time() then pop() look twice).
  bool pop_until(Time until, QueuedEvent& out);
  // The same, leaving the queue open (see "The open root" above) until settle(); meanwhile
  // push(), cancel(), contains(), size(), empty() and top_time() may be called, and any other
  // call settles the queue first.
  bool pop_until_open(Time until, QueuedEvent& out) { return pop_until_open(Bound(until), out); }
  // `until` converted once to the keys' form: a loop that pops many events under one bound
  // (Simulator::run) converts it once. Not NaN.
  class Bound {
   public:
    explicit Bound(Time until) : bits_(time_to_bits(until)) {}

   private:
    friend class EventQueue;
    uint64_t bits_;
  };
  bool pop_until_open(Bound until, QueuedEvent& out);
  // Refills an open root and drops the dead keys that came first. A no-op when not open.
  void settle() {
    if (open_) {
      open_ = false;
      if (hole_ || dead_ != 0) close();
    }
  }

  // Drops every pending event; outstanding handles become stale.
  void clear();
  // Releases unused capacity (after a burst of events).
  void shrink_to_fit();

  // Introspection for benchmarks and tests.
  std::size_t dead_entries() const { return dead_; }
  std::size_t memory_bytes() const;  // bytes reserved by the heap and slot arrays
  uint64_t renumber_count() const { return renumbers_; }

 private:
  // Time is stored as its IEEE-754 bits mapped to an unsigned integer of the same order, so
  // that a key compares as one 128-bit unsigned integer (branch-free in the heap loops).
  struct Key {
    uint64_t time;   // time_to_bits(t)
    uint64_t order;  // [priority + 128 : 8 | sequence : 30 | slot : 26]
  };
  static_assert(sizeof(Key) == 16);
  struct Slot {
    EventTarget* target;  // nullptr: free or cancelled
    uint64_t tag;
    uint32_t generation;  // never 0; bumped whenever the event leaves the live state
    uint32_t next_free;   // free list link, kNoSlot at the end
  };
  static constexpr uint32_t kNoSlot = ~uint32_t{0};
  static constexpr uint64_t kSlotMask = (uint64_t{1} << kSlotBits) - 1;
  static constexpr uint64_t kSequenceMask = (uint64_t{1} << kSequenceBits) - 1;
  // Index of the root in heap_: the first kRoot keys are padding so that the children of a
  // node start on a multiple of kArity (one 64-byte line).
  static constexpr std::size_t kRoot = kArity - 1;

  static uint64_t time_to_bits(double t) {
    const uint64_t bits = std::bit_cast<uint64_t>(t + 0.0);  // + 0.0: -0.0 becomes +0.0
    return bits ^ (static_cast<uint64_t>(static_cast<int64_t>(bits) >> 63) | kSignBit);
  }
  static double bits_to_time(uint64_t key) {
    return std::bit_cast<double>(key ^ ((key & kSignBit) != 0 ? kSignBit : ~uint64_t{0}));
  }
  static constexpr uint64_t kSignBit = uint64_t{1} << 63;
  // One 128-bit integer of a key: the whole total order in one comparison (cmp + sbb).
  __extension__ using Wide = unsigned __int128;
  static Wide wide(const Key& k) { return (static_cast<Wide>(k.time) << 64) | k.order; }

  bool lane_empty() const { return lane_head_ == lane_.size(); }
  // Whether the next key is the lane's first (else the heap's root). Precondition: a key.
  bool lane_first() const {
    if (lane_empty()) return false;
    if (heap_.size() == kRoot) return true;
    const Key& l = lane_[lane_head_];
    const Key& h = heap_[kRoot];
    return l.time < h.time || (l.time == h.time && l.order < h.order);
  }
  const Key& first_key() const { return lane_first() ? lane_[lane_head_] : heap_[kRoot]; }
  // Removes the next key (the lane's first or the heap's root).
  void remove_first();
  // The next event, delivered: its slot released, its key removed (`open`: a key from the
  // heap leaves a hole at the root, and the dead keys after it stay until settle()).
  // Precondition: settled, a live key first (`from_lane`: lane_first()).
  template <bool open>
  QueuedEvent take_first(bool from_lane);
  template <bool open>
  bool take_until(Bound until, QueuedEvent& out);
  // After a removal: drops the dead keys now first, compacts when they outnumber the live.
  void tidy() {
    if (dead_ != 0) {
      // The next key looked at here, the call only when it is dead (a dead key deep in the heap
      // kept dead_ above 0 for most pops of a shared cluster's run: a call each).
      if ((heap_.size() > kRoot || !lane_empty()) && slots_[first_key().order & kSlotMask].target == nullptr)
        discard_dead_tops();
      // A pop takes a live key: dead ones may now outnumber the live (what cancel bounds).
      if (dead_ > live_) compact();
    }
  }
  // settle()'s work once no longer open: the hole refilled from the last leaf, then tidy().
  void close();
  // top_time() while open: the earliest live key, found by a scan (a handler that asks).
  Time open_top_time() const;
  // A push while the root is a hole: `key` fills it, sifted down from the root, or goes to
  // the lane when it is at the popped key's instant (out of line: push stays small inline).
  void push_open(Key key);
  // Drops the lane's first key (the lane's storage reclaimed now and then).
  void advance_lane();
  void trim_lane();
  // The errors of push(), in its order of checks (NaN time, priority, null target).
  [[noreturn, gnu::noinline]] static void reject_push(Time t, int priority);
  [[noreturn, gnu::noinline]] static void pop_empty();
  // A slot for a new event when the free list is empty: compacts at the limit, else grows.
  uint32_t allocate_slot();
  void release_slot(uint32_t s) {
    // LIFO: the slot just freed by pop() is the one the next push() gets, still in cache.
    slots_[s].target = nullptr;
    slots_[s].next_free = free_head_;
    free_head_ = s;
  }
  static void bump_generation(uint32_t& g) {
    ++g;
    if (g == 0) g = 1;  // 0 would make a handle that looks like "no event"
  }
  void push_heap(Key key);
  // Removes the heap's root; in a heap of more than kPrefetchAbove keys, starts fetching the
  // slot of the next root first.
  static constexpr std::size_t kPrefetchAbove = 1024;
  void remove_top();
  void discard_dead_tops();
  void sift_up(std::size_t hole, Key key, std::size_t stop);
  void sift_down_from(std::size_t hole, Key key);
  // The index of the smallest of the children of `parent` in a heap of n keys; n when none.
  static std::size_t min_child(const Key* h, std::size_t parent, std::size_t n);
  void compact();
  void renumber();

  std::vector<Key, detail::AlignedAllocator<Key, 64>> heap_;
  std::vector<Slot, detail::AlignedAllocator<Slot, 64>> slots_;
  std::vector<Key> lane_;       // sorted; the keys before lane_head_ are gone
  std::size_t lane_head_ = 0;
  uint32_t free_head_ = kNoSlot;
  std::size_t live_ = 0;
  std::size_t dead_ = 0;
  uint64_t next_sequence_ = 0;
  uint64_t sequence_limit_;
  uint64_t renumbers_ = 0;
  bool open_ = false;  // popped by pop_until_open(), not settled yet
  bool hole_ = false;  // open_, and heap_[kRoot] is the popped key's leftover (a hole)
};

}  // namespace cs::engine

// push(), pop(), pop_until() and pop_until_open(): inline, defined apart to keep this header short.
#include "sim/engine/event_queue_inline.hpp"
