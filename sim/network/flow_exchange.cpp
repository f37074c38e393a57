// An exchange's rates (solved in flow_exchange_solve.cpp) and its link usage at any time.
#include "sim/network/flow_exchange.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

namespace cs::net {

PairExchange::PairExchange(const PairSource& source, std::span<const double> capacity_Bps, double bytes,
                           const std::function<void()>& poll, std::size_t list_budget)
    : bytes_(bytes) {
  if (!(bytes > 0) || !std::isfinite(bytes)) throw std::invalid_argument("PairExchange: bytes must be finite and > 0");
  if (source.pairs() == 0) throw std::invalid_argument("PairExchange: no pairs");
  if (source.pairs() > std::numeric_limits<uint32_t>::max())
    throw std::length_error("PairExchange: more than 2^32 - 1 pairs");
  if (list_budget == 0) throw std::invalid_argument("PairExchange: the list budget must be > 0");
  solve(source, capacity_Bps, poll, list_budget);
}

void PairSource::links_of(std::span<const uint32_t> pairs, std::vector<uint32_t>& out,
                          std::vector<uint32_t>& ends) const {
  for (const uint32_t p : pairs) {
    links(p, out);
    ends.push_back(static_cast<uint32_t>(out.size()));
  }
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
