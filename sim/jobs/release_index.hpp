#pragma once
// The jobs holding GPUs in the order they will release them, by (release time, id): EASY's
// reservation (easy_backfill.hpp) walks them from the earliest until enough GPUs come back.
//
// Sorted blocks: the entries are kept in order in a list of small sorted arrays (at most
// kBlock entries each, none empty), the blocks from the earliest entries to the latest, each
// block's entries from its latest to its earliest, so that the earliest of all is the first
// block's last: taking it out (a job releases at the earliest release time, as nearly every
// release does) is a pop, where an ascending block shifted all its entries. Each block's
// latest entry is also kept in one flat array, so that finding an entry's block is a binary
// search over contiguous keys rather than a pointer chase per probe. An insertion shifts at
// most kBlock entries within its block; a full block splits in two, and a block that falls
// under a quarter full merges into its successor when they fit in one (its entries go at the
// successor's end: no shift). This replaced a std::set (a node allocated per job start, the
// walk following pointers over the heap), a tenth of a run of a shared cluster at 85% load.
// Not thread-safe.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace cs::jobs {

class ReleaseIndex {
 public:
  struct Entry {
    double release_s = 0.0;  // when the job releases its GPUs (seconds)
    int64_t id = 0;          // the job's id: the order among equal release times
    int32_t slot = 0;        // the job's slot in the JobBook
    int32_t gpus = 0;        // GPUs it holds
  };
  static_assert(sizeof(Entry) == 24);
  static constexpr std::size_t kBlock = 64;

  // Adds a job (an equal (release_s, id) must not be present).
  void insert(const Entry& e);
  // Removes the job with this (release_s, id); false if it is not there.
  bool erase(double release_s, int64_t id);
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The earliest entry; nullptr when empty.
  const Entry* first() const { return blocks_.empty() ? nullptr : &blocks_.front().back(); }
  // The entry after the earliest; nullptr when there are fewer than two.
  const Entry* second() const {
    if (blocks_.empty()) return nullptr;
    if (blocks_.front().size() > 1) return &blocks_.front().end()[-2];
    return blocks_.size() > 1 ? &blocks_[1].back() : nullptr;
  }

  // Calls f(entry) on the entries from the earliest release on while f returns true.
  template <class F>
  void walk(F f) const {
    for (const std::vector<Entry>& b : blocks_)
      for (auto e = b.rbegin(); e != b.rend(); ++e)
        if (!f(*e)) return;
  }

  // Throws std::logic_error when an invariant does not hold (tests).
  void check() const;

 private:
  struct Key {
    double release_s;
    int64_t id;
  };
  // The first block whose latest entry is not before (release_s, id); blocks_.size() if none.
  std::size_t block_of(double release_s, int64_t id) const;

  // A block taken out of the list, kept (empty, with its capacity) for the next split.
  std::vector<Entry> take_spare();
  void drop_block(std::size_t b);
  void set_latest(std::size_t b) { latest_[b] = Key{blocks_[b].front().release_s, blocks_[b].front().id}; }

  std::vector<std::vector<Entry>> blocks_;  // each in descending order
  std::vector<Key> latest_;                 // blocks_[b].front()'s key
  std::vector<std::vector<Entry>> spare_;
  std::size_t size_ = 0;
};

}  // namespace cs::jobs
