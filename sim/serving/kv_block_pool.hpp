#pragma once
// The KV-cache blocks of one LLM replica, counted, with vLLM v1's automatic prefix caching
// (vllm/v1/core/kv_cache_manager.py and block_pool.py): a freed block keeps its content and
// stays cached until it is reused for something else.
//
// Free blocks form one queue, least recently freed first: blocks never used, then blocks in
// the order they were freed. Allocation takes from the front; a cached block taken that way
// is evicted (its content lost). A sequence that frees its blocks frees them last block
// first (vLLM frees a request's blocks in reverse so that its tail is evicted before its
// head), so what survives of a cached run is always a prefix of it: its first blocks.
//
// Blocks are counted, not named: a run of cached blocks is a Handle with a count (`cached`)
// that eviction lowers. A sequence preempted with prefix caching frees its full blocks as a
// handle and its partial last block as uncached; when it is scheduled again it takes back
// what is still cached (`reuse`) and recomputes only the rest, as vLLM v1's recompute
// preemption does with prefix caching on. Blocks whose content nobody can ask for again (a
// finished request's) are freed as uncached; in the queue they are the same as cached ones
// but no handle loses anything when they are evicted.
//
// Invariants: 0 <= used() <= total(); free() = total() - used() counts cached and uncached
// free blocks; a handle's cached() <= what it was freed with. O(1) amortized per call
// (eviction walks the front of the queue, each run at most once).
#include <cstdint>
#include <deque>
#include <vector>

namespace cs::serving {

class KvBlockPool {
 public:
  using Handle = uint32_t;
  static constexpr Handle kNone = ~Handle{0};

  explicit KvBlockPool(int64_t total_blocks) : total_(total_blocks), never_used_(total_blocks) {}

  int64_t total() const { return total_; }
  int64_t used() const { return used_; }
  int64_t free() const { return total_ - used_; }

  // Takes n <= free() blocks into use, evicting cached ones from the front of the queue.
  // Inline when never-used blocks, or the front run of uncached blocks alone, hold them and no
  // emptied run waits at the front (a decode step's growth, mostly); else allocate_queued().
  void allocate(int64_t n) {
    const bool front_live = queue_.empty() || queue_.front().blocks != 0;
    if (n <= never_used_ && front_live) {
      used_ += n;
      never_used_ -= n;
    } else if (never_used_ == 0 && !queue_.empty() && queue_.front().owner == kNone && queue_.front().blocks > n &&
               n >= 0) {
      used_ += n;
      queue_.front().blocks -= n;
    } else {
      allocate_queued(n);
    }
  }
  // Frees n used blocks with no content worth keeping.
  void free_uncached(int64_t n);
  // Frees n used blocks that keep their content (a sequence's first n blocks); the handle
  // says how many of them are still cached until reuse() or forget().
  Handle free_cached(int64_t n);
  int64_t cached(Handle h) const { return h == kNone ? 0 : handles_[h].cached; }
  // Takes n <= cached(h) of the handle's blocks back into use (a cache hit: no allocation);
  // the rest stay in the queue as uncached. Ends the handle.
  void reuse(Handle h, int64_t n);
  // Ends the handle: its blocks stay in the queue, uncached. kNone is ignored.
  void forget(Handle h) { reuse(h, 0); }
  // Forgets every handle and frees every block (a replica aborted).
  void reset();

 private:
  struct Run {
    Handle owner;   // kNone: uncached blocks
    int64_t blocks;
  };
  struct Owned {
    int64_t cached = 0;
    uint64_t run = 0;  // absolute index of its run in the queue
  };
  Run& run_at(uint64_t index) { return queue_[static_cast<std::size_t>(index - popped_)]; }
  void allocate_queued(int64_t n);

  int64_t total_;
  int64_t used_ = 0;
  int64_t never_used_;      // at the front of the queue
  std::deque<Run> queue_;   // freed runs, oldest first
  uint64_t popped_ = 0;     // runs popped from the front so far
  std::vector<Owned> handles_;
  std::vector<Handle> free_handles_;
};

}  // namespace cs::serving
