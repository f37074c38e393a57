// The exchange's one max-min solve (progressive filling over pairs whose routes are computed,
// not stored) and its link usage at any time.
#include "sim/network/flow_exchange.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include "sim/network/min_heap.hpp"

namespace cs::net {

using detail::kLater;

namespace {
// Pairs between interrupt checks on one thread.
constexpr std::size_t kPollEvery = 1 << 16;
}  // namespace

PairExchange::PairExchange(const PairSource& source, std::span<const double> capacity_Bps, double bytes,
                           const std::function<void()>& poll)
    : bytes_(bytes) {
  if (!(bytes > 0) || !std::isfinite(bytes)) throw std::invalid_argument("PairExchange: bytes must be finite and > 0");
  if (source.pairs() == 0) throw std::invalid_argument("PairExchange: no pairs");
  if (source.pairs() > std::numeric_limits<uint32_t>::max())
    throw std::length_error("PairExchange: more than 2^32 - 1 pairs");
  solve(source, capacity_Bps, poll);
}

void PairExchange::solve(const PairSource& source, std::span<const double> capacity_Bps,
                         const std::function<void()>& poll) {
  const std::size_t n = source.pairs(), num_links = capacity_Bps.size();
  // 1. Crossings per link, on every core (integer sums: the same on any number of threads).
  tbb::enumerable_thread_specific<std::vector<uint32_t>> counts([&] { return std::vector<uint32_t>(num_links, 0); });
  tbb::enumerable_thread_specific<std::vector<uint32_t>> scratch;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, kPollEvery), [&](const tbb::blocked_range<std::size_t>& r) {
    poll();
    auto& count = counts.local();
    auto& route = scratch.local();
    for (std::size_t i = r.begin(); i < r.end(); ++i) {
      route.clear();
      source.links(i, route);
      for (uint32_t l : route) {
        if (l >= num_links) throw std::out_of_range("PairExchange: unknown link");
        ++count[l];
      }
    }
  });
  // 2. The flows on each link, ascending (a flow crossing a link m times is there m times).
  std::vector<uint64_t> first(num_links + 1, 0);
  for (const auto& count : counts)
    for (std::size_t l = 0; l < num_links; ++l) first[l + 1] += count[l];
  counts.clear();
  for (std::size_t l = 0; l < num_links; ++l) {
    if (first[l + 1] > std::numeric_limits<uint32_t>::max())
      throw std::length_error("PairExchange: more than 2^32 - 1 crossings of one link");
    first[l + 1] += first[l];
  }
  std::vector<uint32_t> on_link(first[num_links]);
  {
    std::vector<uint64_t> cursor(first.begin(), first.end() - 1);
    std::vector<uint32_t> route;
    for (std::size_t i = 0; i < n; ++i) {
      if (i % kPollEvery == 0) poll();
      route.clear();
      source.links(i, route);
      for (uint32_t l : route) on_link[cursor[l]++] = static_cast<uint32_t>(i);
    }
  }
  // 3. Progressive filling (as FlowModel::solve_component): the link whose capacity left per
  // unfixed crossing is smallest saturates next and fixes its flows at that share. A lazy
  // min-heap of (share, link): a link's share only grows as flows elsewhere are fixed.
  constexpr uint32_t kUnfixed = std::numeric_limits<uint32_t>::max();
  level_of_.assign(n, kUnfixed);
  std::vector<double> residual(capacity_Bps.begin(), capacity_Bps.end());
  std::vector<uint64_t> unfixed(num_links);
  std::vector<std::pair<double, uint32_t>> heap;
  std::vector<uint32_t> used;  // links with crossings
  for (std::size_t l = 0; l < num_links; ++l) {
    unfixed[l] = first[l + 1] - first[l];
    if (unfixed[l]) used.push_back(static_cast<uint32_t>(l));
  }
  // Stale entries pile up (every fix re-pushes its links): past a few per link, the heap is
  // rebuilt from the links' current shares, so it stays a few entries per link.
  const auto rebuild = [&] {
    heap.clear();
    for (uint32_t l : used)
      if (unfixed[l]) heap.push_back({residual[l] / static_cast<double>(unfixed[l]), l});
    std::make_heap(heap.begin(), heap.end(), kLater);
  };
  rebuild();
  std::vector<uint32_t> touched, route;
  std::vector<uint8_t> is_touched(num_links, 0);
  double level = 0;
  std::size_t fixed = 0;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), kLater);
    const auto [share, l] = heap.back();
    heap.pop_back();
    if (unfixed[l] == 0 || share != residual[l] / static_cast<double>(unfixed[l])) continue;
    if (levels_.empty() || share > level) {  // the water level never goes down
      level = share;
      levels_.push_back(level);
      pairs_at_.push_back(0);
    }
    const auto index = static_cast<uint32_t>(levels_.size() - 1);
    for (uint64_t e = first[l]; e < first[l + 1]; ++e) {
      const uint32_t p = on_link[e];
      if (level_of_[p] != kUnfixed) continue;
      if (++fixed % kPollEvery == 0) poll();
      level_of_[p] = index;
      ++pairs_at_[index];
      route.clear();
      source.links(p, route);
      for (uint32_t o : route) {
        residual[o] = std::max(0.0, residual[o] - level);
        --unfixed[o];
        if (!is_touched[o]) is_touched[o] = 1, touched.push_back(o);
      }
    }
    for (uint32_t o : touched) {
      is_touched[o] = 0;
      if (o != l && unfixed[o]) {
        heap.push_back({residual[o] / static_cast<double>(unfixed[o]), o});
        std::push_heap(heap.begin(), heap.end(), kLater);
      }
    }
    touched.clear();
    if (heap.size() > 4 * used.size() + 1024) rebuild();
  }
  // A pair with no link was never fixed (FlowModel::add_route refuses such a route too).
  if (fixed != n) throw std::invalid_argument("PairExchange: a pair's route has no link");
  // 4. Each link's crossings by level (levels ascending), from its flows' levels.
  std::vector<uint32_t> at(levels_.size(), 0);
  std::vector<uint32_t> seen;
  for (std::size_t l = 0; l < num_links; ++l) {
    if (first[l] == first[l + 1]) continue;
    for (uint64_t e = first[l]; e < first[l + 1]; ++e) {
      const uint32_t k = level_of_[on_link[e]];
      if (at[k]++ == 0) seen.push_back(k);
    }
    std::sort(seen.begin(), seen.end());
    links_.push_back({static_cast<uint32_t>(l), static_cast<uint32_t>(levels_of_link_.size()),
                      static_cast<uint32_t>(seen.size())});
    for (uint32_t k : seen) {
      levels_of_link_.push_back({k, at[k]});
      at[k] = 0;
    }
    seen.clear();
  }
  levels_of_link_.shrink_to_fit();
}

double PairExchange::at_level(std::size_t level, double tau) const {
  return tau <= 0 ? 0.0 : std::min(bytes_, levels_[level] * tau);
}

double PairExchange::left(std::size_t pair, double tau) const {
  const double left = bytes_ - at_level(level_of_[pair], tau);
  // A trillionth of the flow left is rounding, not data (as the flow model's completions).
  return left <= bytes_ * 1e-12 ? 0.0 : left;
}

std::size_t PairExchange::unfinished(double tau) const {
  std::size_t count = 0;
  for (std::size_t k = 0; k < levels_.size(); ++k)
    if (bytes_ - at_level(k, tau) > bytes_ * 1e-12) count += pairs_at_[k];
  return count;
}

double PairExchange::delivered(double tau) const {
  double sum = 0;
  for (std::size_t k = 0; k < levels_.size(); ++k) sum += static_cast<double>(pairs_at_[k]) * at_level(k, tau);
  return sum;
}

void PairExchange::add_link_bytes(double tau, std::span<double> bytes) const {
  if (tau <= 0) return;
  for (const LinkLevels& link : links_)
    for (uint32_t i = link.first; i < link.first + link.count; ++i) {
      const auto [k, crossings] = levels_of_link_[i];
      bytes[link.link] += static_cast<double>(crossings) * at_level(k, tau);
    }
}

void PairExchange::add_link_busy(double tau, std::span<double> busy_s) const {
  if (tau <= 0) return;
  for (const LinkLevels& link : links_) {
    const double slowest = levels_[levels_of_link_[link.first].first];  // levels ascend
    busy_s[link.link] += std::min(tau, bytes_ / slowest);
  }
}

void PairExchange::max_link_utilization(double tau, std::span<const double> capacity_Bps,
                                        std::span<double> peak) const {
  if (tau <= 0) return;
  for (const LinkLevels& link : links_) {
    double used = 0;
    for (uint32_t i = link.first; i < link.first + link.count; ++i)
      used += static_cast<double>(levels_of_link_[i].second) * levels_[levels_of_link_[i].first];
    peak[link.link] = std::max(peak[link.link], used / capacity_Bps[link.link]);
  }
}

}  // namespace cs::net
