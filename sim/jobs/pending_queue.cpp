#include "sim/jobs/pending_queue.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace cs::jobs {

std::size_t PendingQueue::lower_bound(int64_t id) const {
  const auto it = std::lower_bound(entries_.begin(), entries_.end(), id,
                                   [](const Entry& e, int64_t v) { return e.id < v; });
  return static_cast<std::size_t>(it - entries_.begin());
}

void PendingQueue::add_to_block(std::size_t i) {
  const Entry& e = entries_[i];
  if (i / kBlock == blocks_.size()) blocks_.push_back({0, e.gpus, e.remaining_s});
  BlockSummary& b = blocks_[i / kBlock];
  ++b.live;
  b.min_gpus = std::min(b.min_gpus, e.gpus);
  b.min_remaining_s = std::min(b.min_remaining_s, e.remaining_s);
}

void PendingQueue::rebuild_blocks(std::size_t first) {
  // A block's summary in one tight loop over its entries (this runs over every entry from
  // `first` on, at each compaction and shift: in an overloaded cluster's queues of thousands
  // of jobs, a call per entry was a twentieth of the run).
  blocks_.resize(first);
  for (std::size_t begin = first * kBlock; begin < entries_.size(); begin += kBlock) {
    BlockSummary b{0, std::numeric_limits<int32_t>::max(), std::numeric_limits<double>::infinity()};
    const std::size_t end = std::min(entries_.size(), begin + kBlock);
    for (std::size_t i = begin; i < end; ++i) {
      const Entry& e = entries_[i];
      if (e.slot < 0) continue;
      ++b.live;
      b.min_gpus = std::min(b.min_gpus, e.gpus);
      b.min_remaining_s = std::min(b.min_remaining_s, e.remaining_s);
    }
    blocks_.push_back(b);
  }
}

bool PendingQueue::insert(const Entry& e) {
  if (e.slot < 0) throw std::logic_error("PendingQueue: an entry needs a slot");
  if (entries_.empty() || e.id > entries_.back().id) {
    entries_.push_back(e);  // a new submission: no live entry moves
    add_to_block(entries_.size() - 1);
    ++live_;
    return true;
  }
  const std::size_t at = lower_bound(e.id);
  std::size_t where;
  if (entries_[at].id == e.id) {
    if (entries_[at].slot >= 0) return false;
    where = at;  // a requeued job's own tombstone
  } else if (at > 0 && entries_[at - 1].slot < 0) {
    where = at - 1;  // a tombstone between its neighbours: the order holds without a shift
  } else {
    entries_.insert(entries_.begin() + static_cast<std::ptrdiff_t>(at), e);
    ++layout_;
    rebuild_blocks(at / kBlock);  // the entries before `at` did not move
    front_ = std::min(front_, at);
    ++live_;
    return true;
  }
  entries_[where] = e;
  add_to_block(where);
  front_ = std::min(front_, where);
  ++live_;
  return true;
}

bool PendingQueue::erase(int64_t id) {
  // The first pending job, as a start nearly always takes: no search.
  const std::size_t at = front_ < entries_.size() && entries_[front_].id == id ? front_ : lower_bound(id);
  if (at == entries_.size() || entries_[at].id != id || entries_[at].slot < 0) return false;
  entries_[at].slot = -1;
  --blocks_[at / kBlock].live;  // its bounds stay bounds
  --live_;
  if (at == front_)
    while (front_ < entries_.size() && entries_[front_].slot < 0) ++front_;
  // Tombstones at the end hold no place between live entries: drop them (nothing moves).
  while (!entries_.empty() && entries_.back().slot < 0) entries_.pop_back();
  blocks_.resize((entries_.size() + kBlock - 1) / kBlock);
  front_ = std::min(front_, entries_.size());
  // Bounded garbage: compaction costs O(entries), paid for by the erasures since the last one;
  // every pass walks the tombstones between live entries, so few are kept (an eighth of the
  // live entries and 4: a queue of 500 compacts every 66 erasures, moving 8 entries each).
  if (entries_.size() - live_ > live_ / 8 + 4) compact();
  return true;
}

void PendingQueue::compact() {
  std::erase_if(entries_, [](const Entry& e) { return e.slot < 0; });
  front_ = 0;
  ++layout_;
  rebuild_blocks();
}

void PendingQueue::check() const {
  std::size_t live = 0;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (i > 0 && !(entries_[i - 1].id < entries_[i].id)) throw std::logic_error("PendingQueue: ids out of order");
    if (entries_[i].slot >= 0) {
      ++live;
      if (i < front_) throw std::logic_error("PendingQueue: a live entry before the front");
    }
  }
  if (live != live_) throw std::logic_error("PendingQueue: live count disagrees");
  if (blocks_.size() != (entries_.size() + kBlock - 1) / kBlock) throw std::logic_error("PendingQueue: a block without a summary");
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    std::size_t block_live = 0;
    for (std::size_t i = b * kBlock; i < std::min(entries_.size(), (b + 1) * kBlock); ++i) {
      const Entry& e = entries_[i];
      if (e.slot < 0) continue;
      ++block_live;
      if (e.gpus < blocks_[b].min_gpus || e.remaining_s < blocks_[b].min_remaining_s)
        throw std::logic_error("PendingQueue: a block's bounds above an entry");
    }
    if (block_live != blocks_[b].live) throw std::logic_error("PendingQueue: a block's live count disagrees");
  }
  if (!entries_.empty() && entries_.back().slot < 0) throw std::logic_error("PendingQueue: a tombstone at the end");
}

}  // namespace cs::jobs
