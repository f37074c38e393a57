#include "sim/jobs/release_index.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <utility>

namespace cs::jobs {
namespace {

bool release_before(const ReleaseIndex::Entry& a, double release_s, int64_t id) {
  return a.release_s < release_s || (a.release_s == release_s && a.id < id);
}

}  // namespace

std::size_t ReleaseIndex::block_of(double release_s, int64_t id) const {
  const auto it = std::partition_point(blocks_.begin(), blocks_.end(),
                                       [&](const std::vector<Entry>& b) { return release_before(b.back(), release_s, id); });
  return static_cast<std::size_t>(it - blocks_.begin());
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
}

void ReleaseIndex::insert(const Entry& e) {
  if (blocks_.empty()) {
    // No block to search (a block is never empty: block_of reads each one's last entry).
    blocks_.push_back(take_spare());
    blocks_.back().push_back(e);
    ++size_;
    return;
  }
  // Past every block's last entry: it goes at the end of the last block.
  const std::size_t b = std::min(block_of(e.release_s, e.id), blocks_.size() - 1);
  std::vector<Entry>& block = blocks_[b];
  const auto at = std::partition_point(block.begin(), block.end(),
                                       [&](const Entry& x) { return release_before(x, e.release_s, e.id); });
  if (at != block.end() && at->release_s == e.release_s && at->id == e.id)
    throw std::logic_error("ReleaseIndex: a job inserted twice");
  block.insert(at, e);
  ++size_;
  if (block.size() > kBlock) {
    // Split: the upper half moves to a new block after this one.
    std::vector<Entry> upper = take_spare();
    const auto half = block.begin() + static_cast<std::ptrdiff_t>(block.size() / 2);
    upper.assign(half, block.end());
    block.erase(half, block.end());
    blocks_.insert(blocks_.begin() + static_cast<std::ptrdiff_t>(b) + 1, std::move(upper));
  }
}

bool ReleaseIndex::erase(double release_s, int64_t id) {
  const std::size_t b = block_of(release_s, id);
  if (b == blocks_.size()) return false;
  std::vector<Entry>& block = blocks_[b];
  const auto at = std::partition_point(block.begin(), block.end(),
                                       [&](const Entry& x) { return release_before(x, release_s, id); });
  if (at == block.end() || at->release_s != release_s || at->id != id) return false;
  block.erase(at);
  --size_;
  if (block.empty()) {
    drop_block(b);
  } else if (block.size() < kBlock / 4 && b + 1 < blocks_.size() && block.size() + blocks_[b + 1].size() <= kBlock) {
    std::vector<Entry>& next = blocks_[b + 1];
    next.insert(next.begin(), block.begin(), block.end());
    drop_block(b);
  }
  return true;
}

void ReleaseIndex::check() const {
  std::size_t n = 0;
  const Entry* last = nullptr;
  for (const std::vector<Entry>& b : blocks_) {
    if (b.empty() || b.size() > kBlock) throw std::logic_error("ReleaseIndex: a block empty or over-full");
    for (const Entry& e : b) {
      if (last != nullptr && !release_before(*last, e.release_s, e.id)) throw std::logic_error("ReleaseIndex: out of order");
      last = &e;
      ++n;
    }
  }
  if (n != size_) throw std::logic_error("ReleaseIndex: size disagrees");
}

}  // namespace cs::jobs
