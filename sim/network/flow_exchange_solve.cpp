// The exchange's one max-min solve: progressive filling over pairs whose routes are computed,
// not stored. A saturating link needs its flows not yet fixed; they are listed for the links
// of lowest share, within a budget, in passes over the unfixed pairs (flow_exchange.hpp).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "sim/network/flow_exchange.hpp"
#include "sim/network/min_heap.hpp"

namespace cs::net {

using detail::kLater;

namespace {

constexpr uint32_t kUnfixedPair = std::numeric_limits<uint32_t>::max();
constexpr const char* kMiscounted = "PairExchange: the source's crossings are not its routes' counts";
// Pairs a task routes at once (and, counting crossings, between interrupt checks).
constexpr std::size_t kRouteBlock = 1024;
// Pairs routed per batch: their routes are held until read (a few MB; a route of many lanes,
// valiant_packet's, a few hundred entries).
constexpr std::size_t kBatchPairs = std::size_t{1} << 16;
// How far ahead a fix fetches the records it will read (links' states, pairs' levels): over
// 16,384 GPUs a fix reads some 40,000 link records and up to 16,384 levels, nearly each a
// cache miss; fetched ahead, the misses overlap instead of following one another.
constexpr std::size_t kAhead = 16;

// Asks the kernel to back [data, data + bytes) with huge pages where it can (Linux's
// transparent huge pages in "madvise" mode, the Debian default), before it is first written.
// The pairs' levels are read and written at random (a destination leg's pairs lie a row of
// the pair matrix apart): 1 GiB over 16,384 GPUs is 262,144 pages of 4 KiB, so with small
// pages nearly every access also misses the TLB; in 2 MiB pages 512 entries cover it. Only
// a hint: nothing changes but the speed.
void advise_huge_pages(void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

// The routes of a batch of pairs, computed on every core and read back in the batch's order:
// the same whatever the number of threads.
class RouteBatch {
 public:
  // Throws what source.links_of throws, and for a link not below num_links.
  void compute(const PairSource& source, std::span<const uint32_t> pairs, std::size_t num_links) {
    used_ = (pairs.size() + kRouteBlock - 1) / kRouteBlock;
    if (blocks_.size() < used_) blocks_.resize(used_);
    const auto route_block = [&](std::size_t b) {
      Block& block = blocks_[b];
      block.links.clear();
      block.ends.clear();
      const std::size_t first = b * kRouteBlock;
      source.links_of(pairs.subspan(first, std::min(kRouteBlock, pairs.size() - first)), block.links, block.ends);
      for (const uint32_t l : block.links)
        if (l >= num_links) throw std::out_of_range("PairExchange: unknown link");
    };
    if (used_ == 1) return route_block(0);  // a few pairs: not worth waking the threads
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, used_, 1), [&](const tbb::blocked_range<std::size_t>& r) {
      for (std::size_t b = r.begin(); b < r.end(); ++b) route_block(b);
    });
  }
  // f(first, links, ends) per block, in order: the block's pairs are the batch's first,
  // first + 1, ...; pair k's links are links[ends[k - first - 1], ends[k - first]) (from 0 for
  // the block's first), all of them one after another in `links`.
  template <class F>
  void for_each_block(F&& f) const {
    std::size_t first = 0;
    for (std::size_t b = 0; b < used_; ++b) {
      f(first, std::span<const uint32_t>(blocks_[b].links), std::span<const uint32_t>(blocks_[b].ends));
      first += blocks_[b].ends.size();
    }
  }
  // f(k, links of the batch's k-th pair), k ascending.
  template <class F>
  void for_each(F&& f) const {
    std::size_t k = 0;
    for (std::size_t b = 0; b < used_; ++b) {
      const Block& block = blocks_[b];
      uint32_t begin = 0;
      for (const uint32_t end : block.ends) {
        f(k++, std::span<const uint32_t>(block.links.data() + begin, end - begin));
        begin = end;
      }
    }
  }

 private:
  struct Block {
    std::vector<uint32_t> links, ends;  // the block's routes one after another; each one's end
  };
  std::vector<Block> blocks_;
  std::size_t used_ = 0;
};

// A link's state in the filling, all of it in one cache line: a fix reads and writes every
// field of each link its flows cross, and over 16,384 GPUs a fix crosses some 40,000 links
// (every destination's leg), so in separate arrays each field was a cache miss of its own.
struct alignas(32) LinkFill {
  double residual = 0;          // capacity not yet given to fixed flows
  double key = 0;               // the key of one of its entries in the heap, at most its share
  uint32_t unfixed = 0;         // crossings by flows not fixed
  uint32_t crossed = 0;         // crossings of the flows being fixed now
  uint32_t open_level = 0;      // the level whose crossings open_count counts
  uint32_t open_count = 0;
};

// The filling's state: per link its LinkFill; per pair its level (kUnfixedPair: not fixed yet).
struct FillState {
  std::span<const uint32_t> level_of;
  std::vector<LinkFill> link;
  std::vector<uint32_t> used;  // links with crossings, ascending
  double share(uint32_t l) const { return link[l].residual / static_cast<double>(link[l].unfixed); }
};

// The unfixed flows crossing some links (one entry per crossing, pairs ascending), gathered in
// one pass over the unfixed pairs for the links of lowest share that fit in the budget: a link
// saturates at its share, and shares only grow as flows are fixed, so the links that saturate
// next are among them until the level passes the last one's.
class SaturationLists {
 public:
  explicit SaturationLists(std::size_t links) : slot_(links, kNoSlot) {}
  bool holds(uint32_t link) const { return slot_[link] != kNoSlot; }
  std::span<const uint32_t> of(uint32_t link) const {
    const uint32_t s = slot_[link];
    return {entries_.data() + first_[s], static_cast<std::size_t>(first_[s + 1] - first_[s])};
  }
  // Lists `needed` (whatever its size) and the links of lowest share after it that fit in
  // `budget` crossings, dropping the lists held before.
  void gather(uint32_t needed, const FillState& state, std::size_t budget, const PairSource& source,
              RouteBatch& batch, const std::function<void()>& poll);

 private:
  static constexpr uint32_t kNoSlot = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> slot_;    // per link: its list, or kNoSlot
  std::vector<uint64_t> first_;   // per list, and one past the last: its range in entries_
  std::vector<uint32_t> entries_;
  std::vector<std::pair<double, uint32_t>> by_share_;
  std::vector<uint32_t> listed_, pending_;
};

void SaturationLists::gather(uint32_t needed, const FillState& state, std::size_t budget, const PairSource& source,
                             RouteBatch& batch, const std::function<void()>& poll) {
  for (const uint32_t l : listed_) slot_[l] = kNoSlot;
  listed_.clear();
  entries_ = {};  // its memory goes before the next lists take theirs
  first_.assign(1, 0);
  const auto list = [&](uint32_t l) {
    slot_[l] = static_cast<uint32_t>(listed_.size());
    listed_.push_back(l);
    first_.push_back(first_.back() + state.link[l].unfixed);
  };
  list(needed);
  by_share_.clear();
  for (const uint32_t l : state.used)
    if (state.link[l].unfixed && l != needed) by_share_.push_back({state.share(l), l});
  std::sort(by_share_.begin(), by_share_.end());
  for (const auto& [share, l] : by_share_) {
    if (first_.back() + state.link[l].unfixed > budget) break;
    list(l);
  }
  entries_.resize(first_.back());
  std::vector<uint64_t> cursor(first_.begin(), first_.end() - 1);
  const auto flush = [&] {
    poll();
    batch.compute(source, pending_, slot_.size());
    batch.for_each([&](std::size_t k, std::span<const uint32_t> links) {
      for (const uint32_t o : links) {
        const uint32_t s = slot_[o];
        if (s == kNoSlot) continue;
        if (cursor[s] == first_[s + 1]) throw std::logic_error(kMiscounted);
        entries_[cursor[s]++] = pending_[k];
      }
    });
    pending_.clear();
  };
  for (std::size_t p = 0; p < state.level_of.size(); ++p) {
    if (state.level_of[p] != kUnfixedPair) continue;
    pending_.push_back(static_cast<uint32_t>(p));
    if (pending_.size() == kBatchPairs) flush();
  }
  if (!pending_.empty()) flush();
  for (std::size_t s = 0; s < listed_.size(); ++s)
    if (cursor[s] != first_[s + 1]) throw std::logic_error(kMiscounted);
}

}  // namespace

void PairExchange::solve(const PairSource& source, std::span<const double> capacity_Bps,
                         const std::function<void()>& poll, std::size_t list_budget) {
  const std::size_t n = source.pairs(), num_links = capacity_Bps.size();
  // 1. Crossings per link: the source's, or counted on every core (integer sums: the same on
  // any number of threads).
  std::vector<uint64_t> crossings(num_links, 0);
  if (const std::span<const uint64_t> known = source.crossings(); !known.empty()) {
    if (known.size() != num_links) throw std::logic_error(kMiscounted);
    crossings.assign(known.begin(), known.end());
  } else {
    tbb::enumerable_thread_specific<std::vector<uint32_t>> counts([&] { return std::vector<uint32_t>(num_links, 0); });
    struct Scratch {
      std::vector<uint32_t> pairs, links, ends;
    };
    tbb::enumerable_thread_specific<Scratch> scratch;
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, kRouteBlock << 6), [&](const tbb::blocked_range<std::size_t>& r) {
      poll();
      Scratch& s = scratch.local();
      s.pairs.resize(r.size());
      for (std::size_t i = 0; i < r.size(); ++i) s.pairs[i] = static_cast<uint32_t>(r.begin() + i);
      s.links.clear();
      s.ends.clear();
      source.links_of(s.pairs, s.links, s.ends);
      auto& count = counts.local();
      for (const uint32_t l : s.links) {
        if (l >= num_links) throw std::out_of_range("PairExchange: unknown link");
        ++count[l];
      }
    });
    for (const auto& count : counts)
      for (std::size_t l = 0; l < num_links; ++l) crossings[l] += count[l];
  }
  FillState state;
  state.level_of = level_of_;
  state.link.resize(num_links);  // `crossings` stays: whether a source's own list is whole
  for (std::size_t l = 0; l < num_links; ++l) {
    if (crossings[l] > std::numeric_limits<uint32_t>::max())
      throw std::length_error("PairExchange: more than 2^32 - 1 crossings of one link");
    state.link[l].residual = capacity_Bps[l];
    state.link[l].unfixed = static_cast<uint32_t>(crossings[l]);
    state.link[l].open_level = kUnfixedPair;
    if (crossings[l]) state.used.push_back(static_cast<uint32_t>(l));
  }
  // 2. Progressive filling (as FlowModel::solve_component): the link whose capacity left per
  // unfixed crossing is smallest saturates next and fixes its flows at that share, ties to
  // the lower link. A min-heap of (share, link) whose keys are lower bounds: every link not
  // saturated has an entry keyed at most its share (LinkFill::key). A link whose share grows
  // keeps its entry; one whose share falls below its key (a rounding's ulp: in exact
  // arithmetic a share only grows as flows elsewhere are fixed) gets a new one; an entry
  // popped below its link's share is pushed again at the share. So the first entry popped at
  // its link's share is the least (share, link) of all: any other link's entry is at most
  // its own (share, link), and would have come out first. The same links saturate in the
  // same order as with every link's share pushed each time it changes, with far fewer pushes:
  // a fix over 16,384 GPUs changes some 40,000 links' shares (every destination's leg, most by
  // an ulp either way): of an all-to-all's 814 M link updates, each pushed before, 15.7 M push
  // now (docs/benchmarks.md).
  level_of_.reserve(n);
  advise_huge_pages(level_of_.data(), n * sizeof(uint32_t));
  level_of_.assign(n, kUnfixedPair);
  state.level_of = level_of_;
  std::vector<std::pair<double, uint32_t>> heap;
  // Stale entries pile up (every fix re-pushes its links): past a few per link, the heap is
  // rebuilt from the links' current shares, so it stays a few entries per link.
  const auto rebuild = [&] {
    heap.clear();
    for (uint32_t l : state.used)
      if (state.link[l].unfixed) {
        state.link[l].key = state.share(l);
        heap.push_back({state.link[l].key, l});
      }
    std::make_heap(heap.begin(), heap.end(), kLater);
  };
  const auto push = [&](uint32_t l, double key) {
    state.link[l].key = key;
    heap.push_back({key, l});
    std::push_heap(heap.begin(), heap.end(), kLater);
  };
  rebuild();
  auto lists = std::make_unique<SaturationLists>(num_links);
  auto batch = std::make_unique<RouteBatch>();
  // Per link, its crossings by level, levels ascending (they are fixed in that order): the
  // level being counted in its LinkFill, the ones before in a list per link.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> by_level(num_links);
  const auto close_level = [&](uint32_t o) {
    LinkFill& f = state.link[o];
    if (f.open_count) by_level[o].push_back({f.open_level, f.open_count});
    f.open_count = 0;
  };
  std::vector<uint32_t> touched, todo, own;
  double level = 0;
  std::size_t fixed = 0;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), kLater);
    const auto [share, l] = heap.back();
    heap.pop_back();
    if (state.link[l].unfixed == 0) continue;
    if (const double now = state.share(l); share != now) {
      if (share < now && share == state.link[l].key) push(l, now);  // its lowest entry: again at its share
      continue;
    }
    if (levels_.empty() || share > level) {  // the water level never goes down
      level = share;
      levels_.push_back(level);
      pairs_at_.push_back(0);
    }
    const auto index = static_cast<uint32_t>(levels_.size() - 1);
    // The link's flows: listed by the source where it knows them all (a rank's leg: no pass
    // over the routes), else from the lists, gathered when they do not hold it.
    own.clear();
    const bool owned = !lists->holds(l) && source.pairs_crossing(l, own) && own.size() == crossings[l];
    if (!owned && !lists->holds(l)) {
      lists->gather(l, state, list_budget, source, *batch, poll);
      ++list_passes_;
    }
    // Its unfixed flows, once each (a pair crossing it twice is listed twice, side by side):
    // the list's entries read until they make its unfixed crossings. From the end: flows listed
    // last are fixed last where links saturate in the order they were listed (the pairs of a
    // destination's link, under sources' links saturating in turn). The order the flows are
    // fixed in changes nothing (each subtracts the same level).
    // A list no longer than the link's unfixed crossings holds no fixed flow: it is read
    // without a level (a destination's leg lists pairs a row of the pair matrix apart, each
    // level a cache miss); else the levels are fetched ahead of the check.
    todo.clear();
    const std::span<const uint32_t> listed = owned ? std::span<const uint32_t>(own) : lists->of(l);
    uint64_t need = state.link[l].unfixed;
    if (listed.size() == need) {
      for (auto it = listed.rbegin(); it != listed.rend(); ++it)
        if (todo.empty() || todo.back() != *it) todo.push_back(*it);
    } else {
      for (std::size_t x = listed.size(); need > 0 && x-- > 0;) {
        if (x >= kAhead) __builtin_prefetch(&level_of_[listed[x - kAhead]]);
        const uint32_t p = listed[x];
        if (level_of_[p] == kUnfixedPair) {
          --need;
          if (todo.empty() || todo.back() != p) todo.push_back(p);
        }
      }
    }
    // The fixed flows' crossings are counted per link first, then each link crossed takes them
    // at once: one counter per crossing instead of five arrays, read at random. The residual
    // still takes the level once per crossing, in turn, as a flow by flow fix subtracts it
    // (the same bits), and the order links take theirs in changes nothing (each link's state
    // is its own; the heap orders its entries by (share, link)).
    for (std::size_t begin = 0; begin < todo.size(); begin += kBatchPairs) {
      const std::span<const uint32_t> chunk(todo.data() + begin, std::min(kBatchPairs, todo.size() - begin));
      poll();
      batch->compute(source, chunk, num_links);
      // Crossings in route order, each link's record fetched kAhead crossings before it is
      // counted (the same counts, in the same order, as route by route).
      batch->for_each_block([&](std::size_t first, std::span<const uint32_t> links, std::span<const uint32_t> ends) {
        for (std::size_t k = 0; k < ends.size(); ++k) {
          if (k + kAhead < ends.size()) __builtin_prefetch(&level_of_[chunk[first + k + kAhead]], 1);
          level_of_[chunk[first + k]] = index;
        }
        for (std::size_t x = 0; x < links.size(); ++x) {
          if (x + kAhead < links.size()) __builtin_prefetch(&state.link[links[x + kAhead]], 1);
          const uint32_t o = links[x];
          if (state.link[o].crossed++ == 0) touched.push_back(o);
        }
      });
    }
    pairs_at_[index] += todo.size();
    fixed += todo.size();
    for (std::size_t x = 0; x < touched.size(); ++x) {
      if (x + kAhead < touched.size()) {
        __builtin_prefetch(&state.link[touched[x + kAhead]], 1);
        __builtin_prefetch(&by_level[touched[x + kAhead]]);
      }
      const uint32_t o = touched[x];
      LinkFill& f = state.link[o];
      const uint32_t c = f.crossed;
      f.crossed = 0;
      double residual = f.residual;
      for (uint32_t k = 0; k < c; ++k) residual = std::max(0.0, residual - level);
      f.residual = residual;
      f.unfixed -= c;
      if (f.open_level != index) {
        close_level(o);
        f.open_level = index;
      }
      f.open_count += c;
      if (o != l && f.unfixed)
        if (const double now = state.share(o); now < f.key) push(o, now);
    }
    touched.clear();
    if (heap.size() > 4 * state.used.size() + 1024) rebuild();
  }
  // A pair with no link was never fixed (FlowModel::add_route refuses such a route too).
  if (fixed != n) throw std::invalid_argument("PairExchange: a pair's route has no link");
  // 3. Each link's crossings by level, links ascending: the lists go first, and each link's
  // levels as they are copied (the peak stays the solve's).
  lists.reset();
  batch.reset();
  for (const uint32_t l : state.used) close_level(l);
  std::size_t entries = 0;
  for (const uint32_t l : state.used) entries += by_level[l].size();
  levels_of_link_.reserve(entries);
  for (const uint32_t l : state.used) {
    links_.push_back({l, static_cast<uint32_t>(levels_of_link_.size()), static_cast<uint32_t>(by_level[l].size())});
    levels_of_link_.insert(levels_of_link_.end(), by_level[l].begin(), by_level[l].end());
    by_level[l] = {};
  }
}

}  // namespace cs::net
