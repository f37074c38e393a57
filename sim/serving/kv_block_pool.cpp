#include "sim/serving/kv_block_pool.hpp"

#include <algorithm>

#include "common/free_slots.hpp"

namespace cs::serving {

void KvBlockPool::allocate_queued(int64_t n) {
  used_ += n;
  const int64_t fresh = std::min(n, never_used_);
  never_used_ -= fresh;
  n -= fresh;
  while (n > 0) {
    Run& front = queue_.front();
    const int64_t take = std::min(n, front.blocks);
    front.blocks -= take;
    n -= take;
    // The run's last blocks go first: what stays cached is the owner's first blocks.
    if (front.owner != kNone) handles_[front.owner].cached -= take;
    if (front.blocks == 0) {
      queue_.pop_front();
      ++popped_;
    }
  }
  // Drop emptied runs (handles reused or evicted elsewhere) so the front is a live one.
  while (!queue_.empty() && queue_.front().blocks == 0) {
    queue_.pop_front();
    ++popped_;
  }
}

void KvBlockPool::free_uncached(int64_t n) {
  if (n <= 0) return;
  used_ -= n;
  if (!queue_.empty() && queue_.back().owner == kNone) queue_.back().blocks += n;
  else queue_.push_back({kNone, n});
}

KvBlockPool::Handle KvBlockPool::free_cached(int64_t n) {
  if (n <= 0) return kNone;
  used_ -= n;
  const Handle h = take_slot(handles_, free_handles_);
  handles_[h] = {n, popped_ + queue_.size()};
  queue_.push_back({h, n});
  return h;
}

void KvBlockPool::reuse(Handle h, int64_t n) {
  if (h == kNone) return;
  Owned& o = handles_[h];
  if (o.cached > 0) {
    Run& run = run_at(o.run);
    run.blocks -= n;
    used_ += n;
    run.owner = kNone;  // what is left of it is no one's
  }
  o.cached = 0;
  free_handles_.push_back(h);
}

void KvBlockPool::reset() {
  used_ = 0;
  never_used_ = total_;
  queue_.clear();
  popped_ = 0;
  handles_.clear();
  free_handles_.clear();
}

}  // namespace cs::serving
