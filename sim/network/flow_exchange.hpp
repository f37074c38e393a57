#pragma once
// A bulk exchange on the flow model (flow_model.hpp): many flows of equal bytes that take
// bandwidth at one instant, on a model with nothing else active (a large direct all-to-all
// stage: one flow per ordered pair of its ranks), solved once as a whole instead of flow by
// flow.
//
// Why once is exact: max-min gives every flow a rate, and with equal bytes and one start the
// fastest flows finish first. Removing flows of the highest rate r leaves every flow below r
// at its rate: such a flow is bottlenecked at a link saturated at its own rate, and no flow of
// rate r crosses that link. So no rate changes until the last flow ends. Flow p finishes at
// start + bytes / r_p, and every link's use at any time follows from the rates of the flows
// crossing it. The flow model would reach the same rates (its solve fills the same levels)
// through one solve and one re-fill per distinct finish time; here there is one solve.
//
// Memory: the pairs' routes are computed when needed, never stored (PairSource). While
// solving, one 4-byte entry per link crossing (the flows on each link); afterwards one 4-byte
// level per pair and, per link, its flows counted by level (8 bytes per link and level: one
// per link where every flow of it gets one rate, up to one per crossing where rates vary, as
// under ECMP). An all-to-all over 4,096 GPUs (16.7 M pairs) takes 0.6-1.2 GB in all, where one
// flow-model flow per pair costs ~700 B.
//
// Units: bytes, bytes/s, seconds.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace cs::net {

using RouteId = uint32_t;
using FlowId = uint32_t;
using LinkIndex = uint32_t;

// The flows of an exchange: pair i < pairs() and its route.
class PairSource {
 public:
  virtual ~PairSource() = default;
  virtual std::size_t pairs() const = 0;
  // Pair i's route as the flow model's (caller's) link indices, appended to `out`: a link
  // crossed m times appears m times. Called from several threads at once.
  virtual void links(std::size_t i, std::vector<uint32_t>& out) const = 0;
  // Pair i's route registered with the flow model (its own latency is not waited again: see
  // FlowModel::start_exchange). One thread; only when the exchange becomes flows.
  virtual RouteId route(std::size_t i) = 0;
};

// The max-min rates of an exchange's flows on an idle fabric, and what they put on the links
// at a time tau after the flows take bandwidth (tau <= 0: nothing yet).
class PairExchange {
 public:
  // capacity_Bps: per link (the caller's indices), > 0. `poll` is called now and then (an
  // interrupt check may throw from it). Throws what source.links throws.
  PairExchange(const PairSource& source, std::span<const double> capacity_Bps, double bytes,
               const std::function<void()>& poll);

  std::size_t pairs() const { return level_of_.size(); }
  double bytes() const { return bytes_; }
  double rate_Bps(std::size_t pair) const { return levels_[level_of_[pair]]; }
  // Until the slowest flow is done: bytes / the lowest rate.
  double duration_s() const { return bytes_ / levels_.front(); }
  // Bytes pair i still has to deliver at tau (0 once done).
  double left(std::size_t pair, double tau) const;
  // Flows not done at tau, and the bytes all flows delivered by then.
  std::size_t unfinished(double tau) const;
  double delivered(double tau) const;
  // Per link (the caller's indices), added to: bytes crossed by tau (m crossings count m
  // times); seconds busy by tau (from the start until its slowest flow is done); and, as a
  // maximum, its utilization (every rate holds from the start, so the first is the highest;
  // none at tau <= 0: rates that held for no time do not count).
  void add_link_bytes(double tau, std::span<double> bytes) const;
  void add_link_busy(double tau, std::span<double> busy_s) const;
  void max_link_utilization(double tau, std::span<const double> capacity_Bps, std::span<double> peak) const;

 private:
  // A link's flows by level: (level index, crossings) pairs in levels_of_link_.
  struct LinkLevels {
    uint32_t link;
    uint32_t first, count;
  };
  double at_level(std::size_t level, double tau) const;  // bytes a flow of it delivered by tau
  void solve(const PairSource& source, std::span<const double> capacity_Bps, const std::function<void()>& poll);

  double bytes_;
  std::vector<double> levels_;          // distinct rates, ascending
  std::vector<uint64_t> pairs_at_;      // flows per level
  std::vector<uint32_t> level_of_;      // per pair: its rate's index in levels_
  std::vector<LinkLevels> links_;       // the links the flows cross, ascending
  std::vector<std::pair<uint32_t, uint32_t>> levels_of_link_;  // (level index, crossings)
};

}  // namespace cs::net
