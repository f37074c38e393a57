#include "sim/jobs/release_index.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <utility>

namespace cs::jobs {
namespace {

// (a.release_s, a.id) < (release_s, id).
template <class A>
bool release_before(const A& a, double release_s, int64_t id) {
  return a.release_s < release_s || (a.release_s == release_s && a.id < id);
}

// The first entry of a descending block that is not after (release_s, id): where an entry of
// that key is, or goes.
std::vector<ReleaseIndex::Entry>::iterator position_in(std::vector<ReleaseIndex::Entry>& block, double release_s,
                                                       int64_t id) {
  return std::partition_point(block.begin(), block.end(), [&](const ReleaseIndex::Entry& x) {
    return release_s < x.release_s || (release_s == x.release_s && id < x.id);
  });
}

}  // namespace

std::size_t ReleaseIndex::block_of(double release_s, int64_t id) const {
  const auto it = std::partition_point(latest_.begin(), latest_.end(),
                                       [&](const Key& k) { return release_before(k, release_s, id); });
  return static_cast<std::size_t>(it - latest_.begin());
}

std::vector<ReleaseIndex::Entry> ReleaseIndex::take_spare() {
  if (spare_.empty()) {
    std::vector<Entry> b;
    b.reserve(kBlock + 1);
    return b;
  }
  std::vector<Entry> b = std::move(spare_.back());
  spare_.pop_back();
  return b;
}

void ReleaseIndex::drop_block(std::size_t b) {
  blocks_[b].clear();
  spare_.push_back(std::move(blocks_[b]));
  blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(b));
  latest_.erase(latest_.begin() + static_cast<std::ptrdiff_t>(b));
}

void ReleaseIndex::insert(const Entry& e) {
  if (blocks_.empty()) {
    // No block to search (a block is never empty: its latest entry is its key).
    blocks_.push_back(take_spare());
    blocks_.back().push_back(e);
    latest_.push_back(Key{e.release_s, e.id});
    ++size_;
    return;
  }
  // Past every block's latest entry: it goes into the last block, as its new latest.
  const std::size_t b = std::min(block_of(e.release_s, e.id), blocks_.size() - 1);
  std::vector<Entry>& block = blocks_[b];
  const auto at = position_in(block, e.release_s, e.id);
  if (at != block.end() && at->release_s == e.release_s && at->id == e.id)
    throw std::logic_error("ReleaseIndex: a job inserted twice");
  const bool latest = at == block.begin();
  block.insert(at, e);
  ++size_;
  if (latest) set_latest(b);
  if (block.size() > kBlock) {
    // Split: the later half (the front) moves to a new block after this one.
    std::vector<Entry> later = take_spare();
    const auto half = block.begin() + static_cast<std::ptrdiff_t>(block.size() / 2);
    later.assign(block.begin(), half);
    block.erase(block.begin(), half);
    blocks_.insert(blocks_.begin() + static_cast<std::ptrdiff_t>(b) + 1, std::move(later));
    latest_.insert(latest_.begin() + static_cast<std::ptrdiff_t>(b) + 1, latest_[b]);
    set_latest(b);
  }
}

bool ReleaseIndex::erase(double release_s, int64_t id) {
  // The earliest of all, as a release nearly always is, is the first block's: no search (the
  // search over the blocks' keys was a fifth of the index's time).
  const Entry* earliest = first();
  const std::size_t b = earliest != nullptr && earliest->release_s == release_s && earliest->id == id
                            ? 0
                            : block_of(release_s, id);
  if (b == blocks_.size()) return false;
  std::vector<Entry>& block = blocks_[b];
  // The earliest of the block, as a release is nearly always: a pop.
  const Entry& last = block.back();
  auto at = last.release_s == release_s && last.id == id ? block.end() - 1 : position_in(block, release_s, id);
  if (at == block.end() || at->release_s != release_s || at->id != id) return false;
  const bool latest = at == block.begin();
  block.erase(at);
  --size_;
  if (block.empty()) {
    drop_block(b);
    return true;
  }
  if (latest) set_latest(b);
  if (block.size() < kBlock / 4 && b + 1 < blocks_.size() && block.size() + blocks_[b + 1].size() <= kBlock) {
    // Its entries are all before the successor's: they go at its end.
    std::vector<Entry>& next = blocks_[b + 1];
    next.insert(next.end(), block.begin(), block.end());
    drop_block(b);
  }
  return true;
}

void ReleaseIndex::check() const {
  if (latest_.size() != blocks_.size()) throw std::logic_error("ReleaseIndex: block keys disagree");
  std::size_t n = 0;
  const Entry* last = nullptr;
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    const std::vector<Entry>& block = blocks_[b];
    if (block.empty() || block.size() > kBlock) throw std::logic_error("ReleaseIndex: a block empty or over-full");
    if (latest_[b].release_s != block.front().release_s || latest_[b].id != block.front().id)
      throw std::logic_error("ReleaseIndex: a block's key is not its latest entry");
    for (auto e = block.rbegin(); e != block.rend(); ++e) {
      if (last != nullptr && !release_before(*last, e->release_s, e->id)) throw std::logic_error("ReleaseIndex: out of order");
      last = &*e;
      ++n;
    }
  }
  if (n != size_) throw std::logic_error("ReleaseIndex: size disagrees");
}

}  // namespace cs::jobs
