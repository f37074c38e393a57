#pragma once
// One queue's pending jobs in submission order (by id), walked by every scheduling pass.
//
// A sorted array with lazy erasure: an erased entry stays in place as a tombstone (slot < 0,
// its id kept, so the array stays sorted) until tombstones outnumber an eighth of the live
// entries and 4, when the array is compacted. New submissions (the highest id so far) are
// appended; a requeued job takes back its own tombstone when it is still there, or the
// tombstone just before its place, and only otherwise shifts the array. A pass reads consecutive 24-byte entries instead of
// following a balanced tree's nodes scattered over the heap (which took a third of a run), and
// an entry carries what a pass needs to pass over a job without reading the job itself.
//
// Each aligned block of kBlock entries has a summary: its live entries' count and lower
// bounds on their GPUs and remaining work (exact after a rebuild; an erasure leaves them as
// they were, so they stay lower bounds). A pass over the jobs that cannot backfill then tests
// a whole block against its summary and crosses it without reading its entries when none of
// them could start (the overloaded cluster's passes walk hundreds of such jobs).
//
// A Cursor walks the live entries in id order with the semantics of an iterator into an
// ordered set: an entry inserted before the cursor's next entry is not visited, one inserted
// after it is; the entry a cursor rests on must not be erased while the cursor is in use (a
// pass moves past a job before starting it). Cursors survive compaction and shifts (they find
// their entry again by id). Not thread-safe.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace cs::jobs {

class PendingQueue {
 public:
  struct Entry {
    int64_t id = 0;
    int32_t slot = -1;  // the job's slot in the JobBook; < 0: erased
    int32_t gpus = 0;
    double remaining_s = 0.0;  // the job's work still to do (seconds), fixed while it pends
  };
  static_assert(sizeof(Entry) == 24);

  class Cursor {
    friend class PendingQueue;
    static constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();
    std::size_t index_ = 0;
    int64_t id_ = kEnd;  // id of the entry at index_ (kEnd: past the last)
    uint64_t layout_ = 0;
  };

  // Adds a job (ids are unique); false if it is already pending.
  bool insert(const Entry& e);
  // Removes the job with this id; false if it is not pending.
  bool erase(int64_t id);
  std::size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }

  // A cursor on the first pending job. (Inline, as are peek and advance: a pass calls them
  // for every job it examines.)
  Cursor begin() const {
    Cursor c;
    settle(c, front_);
    return c;
  }
  // The entry the cursor rests on; nullptr when it is past the last.
  const Entry* peek(Cursor& c) const {
    if (c.id_ == Cursor::kEnd) return nullptr;
    if (c.layout_ != layout_) settle(c, lower_bound(c.id_));
    return c.index_ < entries_.size() ? &entries_[c.index_] : nullptr;
  }
  // Moves the cursor to the next pending job (precondition: peek(c) != nullptr).
  void advance(Cursor& c) const { settle(c, c.index_ + 1); }
  // Moves the cursor past the pending jobs, from the one it rests on, with ids below
  // `id_bound` for which skip(entry) is true, at most `limit` of them; returns how many it
  // passed. (A pass with a reservation set passes over the jobs that cannot backfill in one
  // tight loop instead of a peek and an advance each.) `skip` must be monotone: skip(e) implies
  // skip(f) for every f with f.gpus >= e.gpus and f.remaining_s >= e.remaining_s; a block
  // whose summary's bounds, as an entry, are skipped is crossed whole.
  template <class Skip>
  std::size_t pass_over(Cursor& c, int64_t id_bound, std::size_t limit, Skip skip) const {
    if (c.id_ == Cursor::kEnd) return 0;
    if (c.layout_ != layout_) settle(c, lower_bound(c.id_));
    std::size_t i = c.index_, passed = 0;
    const std::size_t n = entries_.size();
    while (i < n && passed < limit) {
      if (i % kBlock == 0 && i + kBlock <= n) {
        const BlockSummary& b = blocks_[i / kBlock];
        if (b.live <= limit - passed && entries_[i + kBlock - 1].id < id_bound &&
            skip(Entry{0, 0, b.min_gpus, b.min_remaining_s})) {
          passed += b.live;
          i += kBlock;
          continue;
        }
      }
      const Entry& e = entries_[i];
      if (e.slot >= 0) {
        if (e.id >= id_bound || !skip(e)) break;
        ++passed;
      }
      ++i;
    }
    settle(c, i);
    return passed;
  }

  // Throws std::logic_error when an invariant does not hold (tests).
  void check() const;

 private:
  std::size_t lower_bound(int64_t id) const;
  // Rests `c` on the first live entry at or after index i.
  void settle(Cursor& c, std::size_t i) const {
    while (i < entries_.size() && entries_[i].slot < 0) ++i;
    c.index_ = i;
    c.id_ = i < entries_.size() ? entries_[i].id : Cursor::kEnd;
    c.layout_ = layout_;
  }
  void compact();
  // The summaries of the blocks from `first` on, exact, from the entries (after entries moved
  // from that block on); those before are kept.
  void rebuild_blocks(std::size_t first = 0);
  // Entry i (live) joins its block's summary.
  void add_to_block(std::size_t i);

  static constexpr std::size_t kBlock = 16;
  struct BlockSummary {
    uint32_t live = 0;             // live entries in the block
    int32_t min_gpus = 0;          // <= each live entry's gpus
    double min_remaining_s = 0.0;  // <= each live entry's remaining_s
  };

  std::vector<Entry> entries_;  // sorted by id, tombstones included
  std::vector<BlockSummary> blocks_;  // entries_[b kBlock, (b + 1) kBlock): blocks_[b]
  std::size_t front_ = 0;       // entries before it are all tombstones
  std::size_t live_ = 0;
  uint64_t layout_ = 0;         // bumped whenever live entries move (a shift or a compaction)
};

}  // namespace cs::jobs
