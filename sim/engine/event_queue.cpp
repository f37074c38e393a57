#include "sim/engine/event_queue.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace cs::engine {

namespace {

constexpr unsigned kPriorityShift = EventQueue::kSlotBits + EventQueue::kSequenceBits;
static_assert(kPriorityShift + 8 == 64, "priority, sequence and slot must fill 64 bits");
static_assert(EventQueue::kArity == 4 || EventQueue::kArity == 8);
// The padding must put the first child of the root at a multiple of kArity, and kArity keys
// must fill whole 64-byte lines for the alignment to mean anything.
static_assert((EventQueue::kArity * 16) % 64 == 0);

}  // namespace

EventQueue::EventQueue(uint64_t sequence_limit) : sequence_limit_(sequence_limit) {
  if (sequence_limit < 2 || sequence_limit > kSequenceLimit) {
    throw std::invalid_argument("EventQueue: sequence_limit must be in [2, 2^30]");
  }
  // Capacity a power of two from the start (the padding keys included), so that doubling
  // never leaves the vector at 1.5x of a round size.
  heap_.reserve(64);
  heap_.resize(kRoot);
}

// Comparison on (time, order): `order` already encodes priority, then sequence, so this is
// the whole total order. Sequences are unique among keys in the heap, so the slot bits never
// decide. As one 128-bit integer (wide()) the comparison is cmp + sbb, and choosing the
// smallest child compiles to conditional moves: the outcomes are random, so branches would
// mispredict.

[[gnu::always_inline]] inline std::size_t EventQueue::min_child(const Key* h, std::size_t parent, std::size_t n) {
  const std::size_t first = kArity * (parent - kArity + 2);
  if (first + kArity <= n) {
    const Key* c = h + first;
    // Tournament instead of a linear scan: independent comparisons overlap in the CPU. Each
    // comparison made once, its outcome picking both the key and its index (conditional moves).
    const auto pick = [](Wide& w, std::size_t& at, Wide w2, std::size_t at2) {
      const bool second = w2 < w;
      w = second ? w2 : w;
      at = second ? at2 : at;
    };
    // The smaller of children i and i + 1.
    const auto pair = [c, &pick](std::size_t i, Wide& w, std::size_t& at) {
      w = wide(c[i]);
      at = i;
      pick(w, at, wide(c[i + 1]), i + 1);
    };
    Wide wa, wb;
    std::size_t a, b;
    pair(0, wa, a);
    pair(2, wb, b);
    if constexpr (kArity == 8) {
      Wide wd, we;
      std::size_t d, e;
      pair(4, wd, d);
      pair(6, we, e);
      pick(wa, a, wb, b);
      pick(wd, d, we, e);
      wb = wd;
      b = d;
    }
    // Written with a mask: as a ?: the compiler emits a branch that mispredicts half the time.
    const std::size_t take_b = std::size_t{0} - static_cast<std::size_t>(wb < wa);
    return first + ((b & take_b) | (a & ~take_b));
  }
  if (first >= n) return n;
  std::size_t best = first;
  for (std::size_t i = first + 1; i < n; ++i) {
    if (wide(h[i]) < wide(h[best])) best = i;
  }
  return best;
}

void EventQueue::reject_push(Time t, int priority) {
  if (std::isnan(t)) throw std::invalid_argument("EventQueue::push: time is NaN");
  if (priority < kMinPriority || priority > kMaxPriority) {
    throw std::out_of_range("EventQueue::push: priority " + std::to_string(priority) +
                            " outside [-128, 127]");
  }
  throw std::invalid_argument("EventQueue::push: null target");
}

void EventQueue::pop_empty() { throw std::out_of_range("EventQueue::pop: queue is empty"); }

void EventQueue::push_heap(Key key) {
  heap_.emplace_back();
  sift_up(heap_.size() - 1, key, kRoot);
}

std::optional<QueuedEvent> EventQueue::cancel_and_get(EventId id) {
  const auto s = static_cast<uint32_t>(id.raw);
  const auto g = static_cast<uint32_t>(id.raw >> 32);
  if (g == 0 || s >= slots_.size()) return std::nullopt;
  Slot& slot = slots_[s];
  if (slot.generation != g || slot.target == nullptr) return std::nullopt;
  QueuedEvent ev{std::numeric_limits<double>::quiet_NaN(), slot.target, slot.tag};
  // The key stays in the heap (we do not know where it is); the slot is released when the
  // key is discarded, so the slot index in the key cannot be reused meanwhile.
  slot.target = nullptr;
  bump_generation(slot.generation);
  --live_;
  ++dead_;
  // Keep the invariant "the first key is live" that top_time() relies on (open, settle()
  // keeps it).
  if (!open_ && (first_key().order & kSlotMask) == s) discard_dead_tops();
  // Bound the garbage: dead keys never outnumber live ones. Compaction costs O(heap), paid
  // for by the (at least live_) cancellations since the previous one.
  if (dead_ > live_) {
    settle();
    if (dead_ > live_) compact();
  }
  return ev;
}

bool EventQueue::contains(EventId id) const {
  const auto s = static_cast<uint32_t>(id.raw);
  const auto g = static_cast<uint32_t>(id.raw >> 32);
  return g != 0 && s < slots_.size() && slots_[s].generation == g && slots_[s].target != nullptr;
}

void EventQueue::clear() {
  settle();
  for (std::size_t i = kRoot; i < heap_.size(); ++i) {
    Slot& slot = slots_[heap_[i].order & kSlotMask];
    if (slot.target != nullptr) bump_generation(slot.generation);
  }
  for (std::size_t i = lane_head_; i < lane_.size(); ++i) {
    Slot& slot = slots_[lane_[i].order & kSlotMask];
    if (slot.target != nullptr) bump_generation(slot.generation);
  }
  lane_.clear();
  lane_head_ = 0;
  heap_.resize(kRoot);
  free_head_ = kNoSlot;
  for (std::size_t i = slots_.size(); i-- > 0;) release_slot(static_cast<uint32_t>(i));
  live_ = 0;
  dead_ = 0;
  next_sequence_ = 0;
}

void EventQueue::shrink_to_fit() {
  settle();
  if (dead_ != 0) compact();
  heap_.shrink_to_fit();
  // The lane too: a burst at one instant leaves it as long as the burst.
  lane_.erase(lane_.begin(), lane_.begin() + static_cast<std::ptrdiff_t>(lane_head_));
  lane_head_ = 0;
  lane_.shrink_to_fit();
}

std::size_t EventQueue::memory_bytes() const {
  return (heap_.capacity() + lane_.capacity()) * sizeof(Key) + slots_.capacity() * sizeof(Slot);
}

uint32_t EventQueue::allocate_slot() {
  if (slots_.size() >= kMaxPending && dead_ != 0) {
    settle();
    if (dead_ != 0) compact();
  }
  if (free_head_ != kNoSlot) {
    const uint32_t s = free_head_;
    free_head_ = slots_[s].next_free;
    return s;
  }
  if (slots_.size() >= kMaxPending) {
    throw std::length_error("EventQueue: more than " + std::to_string(kMaxPending) +
                            " pending events");
  }
  slots_.push_back(Slot{nullptr, 0, 1, kNoSlot});
  return static_cast<uint32_t>(slots_.size() - 1);
}

void EventQueue::remove_first() {
  if (lane_first()) {
    advance_lane();
  } else {
    remove_top();
  }
}

// A lane never emptied would grow without bound: drop its gone keys, amortized O(1).
void EventQueue::trim_lane() {
  lane_.erase(lane_.begin(), lane_.begin() + static_cast<std::ptrdiff_t>(lane_head_));
  lane_head_ = 0;
}

void EventQueue::remove_top() {
  if (heap_.size() > kRoot + kPrefetchAbove) {
    // The next root will be the smallest child of this one (unless a push beats it): start
    // fetching its slot now, a whole pop and push ahead of the read. Slots are visited in
    // time order, which is random in memory, so in a large queue this read is otherwise a
    // cache miss. (A small queue's slots stay in cache: no scan of the children for it.)
    const Key* h = heap_.data();
    const std::size_t end = std::min(heap_.size(), kRoot + 1 + kArity);
    std::size_t best = kRoot + 1;
    for (std::size_t i = kRoot + 2; i < end; ++i) {
      if (wide(h[i]) < wide(h[best])) best = i;
    }
    __builtin_prefetch(&slots_[h[best].order & kSlotMask]);
  }
  const Key last = heap_.back();
  heap_.pop_back();
  if (heap_.size() > kRoot) sift_down_from(kRoot, last);
}

void EventQueue::close() {
  if (hole_) {
    hole_ = false;
    remove_top();
  }
  tidy();
}

Time EventQueue::open_top_time() const {
  if (live_ == 0) return kForever;
  // The lane is sorted: its first live key is its earliest. The heap's root, when a hole, is
  // the popped key's leftover (its slot may already hold a new event): skipped.
  const Key* best = nullptr;
  for (std::size_t i = lane_head_; i < lane_.size(); ++i) {
    if (slots_[lane_[i].order & kSlotMask].target != nullptr) {
      best = &lane_[i];
      break;
    }
  }
  for (std::size_t i = kRoot + (hole_ ? 1 : 0); i < heap_.size(); ++i) {
    if (slots_[heap_[i].order & kSlotMask].target != nullptr && (best == nullptr || wide(heap_[i]) < wide(*best)))
      best = &heap_[i];
  }
  return bits_to_time(best->time);
}

// The textbook sift-down (stop at the first level whose children all come after the key): an
// event at the current instant stays at the root after one look at its children.
void EventQueue::push_open(Key key) {
  const Wide k = wide(key);
  // The root's leftover is the key just popped: a key at its instant goes to the lane as it
  // would have, if the lane stays sorted (a model's once-per-instant pass: no sift for it).
  if (key.time == heap_[kRoot].time && (lane_empty() || wide(lane_.back()) < k)) {
    lane_.push_back(key);
    return;
  }
  hole_ = false;
  Key* h = heap_.data();
  const std::size_t n = heap_.size();
  std::size_t hole = kRoot;
  for (;;) {
    const std::size_t best = min_child(h, hole, n);
    if (best == n || !(wide(h[best]) < k)) break;
    h[hole] = h[best];
    hole = best;
  }
  h[hole] = key;
}

void EventQueue::discard_dead_tops() {
  while (heap_.size() > kRoot || !lane_empty()) {
    const auto s = static_cast<uint32_t>(first_key().order & kSlotMask);
    if (slots_[s].target != nullptr) break;
    release_slot(s);
    --dead_;
    remove_first();
  }
}

void EventQueue::sift_up(std::size_t hole, Key key, std::size_t stop) {
  Key* h = heap_.data();
  const Wide k = wide(key);
  while (hole > stop) {
    const std::size_t parent = hole / kArity + kArity - 2;
    if (!(k < wide(h[parent]))) break;
    h[hole] = h[parent];
    hole = parent;
  }
  h[hole] = key;
}

// Places `key` in the subtree rooted at `hole` (whose own key is being replaced). The hole
// first travels down along the smallest children to a leaf, then `key` rises from there:
// the replacement usually belongs near the bottom (it is the former last leaf), so this
// costs one comparison per level fewer than the textbook sift-down.
void EventQueue::sift_down_from(std::size_t hole, Key key) {
  const std::size_t top = hole;
  Key* h = heap_.data();
  const std::size_t n = heap_.size();
  // A heap past the caches': fetch the grandchildren of `hole` (kArity^2 consecutive keys,
  // whole lines) now, so the next level's loads overlap this level's instead of following
  // them. (A small heap stays in cache: no fetching, no test per level.)
  const auto descend = [&]<bool prefetch>() {
    for (;;) {
      if constexpr (prefetch) {
        const std::size_t grand = kArity * (kArity * (hole - kArity + 2) - kArity + 2);
        if (grand < n) {
          const char* g = reinterpret_cast<const char*>(h + grand);
          for (std::size_t line = 0; line < kArity * kArity * sizeof(Key); line += 64) {
            __builtin_prefetch(g + line);
          }
        }
      }
      const std::size_t best = min_child(h, hole, n);
      if (best == n) return;
      h[hole] = h[best];
      hole = best;
    }
  };
  if (n > kRoot + kPrefetchAbove) {
    descend.template operator()<true>();
  } else {
    descend.template operator()<false>();
  }
  sift_up(hole, key, top);
}

void EventQueue::compact() {
  // Moves the live keys of keys[from, end) to keys[to, ...) in order, releasing the dead
  // ones' slots; returns the end of the live keys.
  const auto keep_live = [&](Key* keys, std::size_t from, std::size_t end, std::size_t to) {
    for (std::size_t r = from; r < end; ++r) {
      const auto s = static_cast<uint32_t>(keys[r].order & kSlotMask);
      if (slots_[s].target == nullptr) {
        release_slot(s);
      } else {
        keys[to++] = keys[r];
      }
    }
    return to;
  };
  const std::size_t w = keep_live(heap_.data(), kRoot, heap_.size(), kRoot);
  heap_.resize(w);
  lane_.resize(keep_live(lane_.data(), lane_head_, lane_.size(), 0));
  lane_head_ = 0;
  dead_ = 0;
  // Floyd's bottom-up heap construction: O(n).
  if (w > kRoot + 1) {
    const std::size_t last_parent = (w - 1) / kArity + kArity - 2;
    for (std::size_t p = last_parent + 1; p-- > kRoot;) sift_down_from(p, heap_[p]);
  }
}

// Replaces every sequence number by its rank among the keys in the heap. The map is
// monotone and priority bits are untouched, so every pairwise comparison keeps its outcome:
// the heap stays valid without being rebuilt, and FIFO order among ties is preserved.
void EventQueue::renumber() {
  settle();
  if (dead_ != 0) compact();
  // The heap's keys and the lane's, ranked together.
  std::vector<std::pair<uint64_t, uint64_t*>> by_sequence;
  by_sequence.reserve(heap_.size() - kRoot + lane_.size() - lane_head_);
  for (std::size_t i = kRoot; i < heap_.size(); ++i) {
    by_sequence.emplace_back((heap_[i].order >> kSlotBits) & kSequenceMask, &heap_[i].order);
  }
  for (std::size_t i = lane_head_; i < lane_.size(); ++i) {
    by_sequence.emplace_back((lane_[i].order >> kSlotBits) & kSequenceMask, &lane_[i].order);
  }
  std::sort(by_sequence.begin(), by_sequence.end());
  const uint64_t clear_sequence = ~(kSequenceMask << kSlotBits);
  for (std::size_t rank = 0; rank < by_sequence.size(); ++rank) {
    uint64_t& order = *by_sequence[rank].second;
    order = (order & clear_sequence) | (static_cast<uint64_t>(rank) << kSlotBits);
  }
  next_sequence_ = by_sequence.size();
  ++renumbers_;
  if (next_sequence_ >= sequence_limit_) {
    throw std::length_error("EventQueue: sequence limit " + std::to_string(sequence_limit_) +
                            " too small for " + std::to_string(live_) + " pending events");
  }
}

}  // namespace cs::engine
