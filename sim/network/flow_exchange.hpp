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
// Memory: the pairs' routes are computed when needed, never stored (PairSource). The solve
// needs, for a link that saturates, the flows on it not yet fixed: it gathers those lists, 4
// bytes per crossing, for the links that can saturate next (the lowest shares), as many as
// fit in a budget (list_budget crossings), in one pass over the flows not yet fixed, and
// gathers again when a link outside them saturates. Where every list fits (up to 4,096 GPUs
// at the default budget) that is one pass, as the flows were listed before; beyond, a few. A
// source that knows a link's pairs without a pass lists them itself (PairSource::
// pairs_crossing: a rank's leg to its switch carries its pairs between nodes), so where legs
// saturate first, as on a non-blocking fabric's all-to-all, no pass lists anything. A
// route is computed once per pass and once more when its flow is fixed, on every core. The
// result does not depend on the budget: the same links saturate in the same order, each
// fixing the same flows (tests/cpp/network/test_flow_exchange.cpp). Afterwards one 4-byte
// level per pair and, per link, its flows counted by level (8 bytes per link and level: one
// per link where every flow of it gets one rate, up to one per crossing where rates vary, as
// under ECMP). An all-to-all over 4,096 GPUs (16.7 M pairs) takes 102 MB in all where legs
// saturate first (a fat-tree under D-mod-K: no list), 0.6-1.0 GB where the lists are
// gathered; over 16,384 GPUs (268 M pairs) 2.2 GB, 1 GiB of it the levels and some 170 MB
// the source's kept walks (a D-mod-K pair's fabric hops per source leaf and destination:
// topo::AllPairsCounter::append_links).
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
  // Several pairs' routes one after another into `out`, as links() gives them, and each one's
  // end (out's size after it) into `ends`: what the solve calls, so that a source reuses its
  // scratch over a batch. By default, links() pair by pair. Called from several threads.
  virtual void links_of(std::span<const uint32_t> pairs, std::vector<uint32_t>& out,
                        std::vector<uint32_t>& ends) const;
  // Per link, the crossings of all pairs (m for a pair crossing it m times), where the source
  // has counted them already; empty (the default): the solve counts them, a pass over the
  // routes. They must be the routes' own counts (the solve checks as it goes).
  virtual std::span<const uint64_t> crossings() const { return {}; }
  // The pairs crossing `link`, ascending, appended to `out` (a pair crossing it m times: m
  // entries side by side), where the source knows them without a pass over the routes (the
  // pairs of a rank's leg: topo::AllPairsCounter::append_leg_pairs): true; false (the
  // default), or a subset: the solve lists them in a pass. Every entry must cross the link;
  // the solve takes them only where they make all the link's crossings. One thread.
  virtual bool pairs_crossing(uint32_t /*link*/, std::vector<uint32_t>& /*out*/) const { return false; }
  // Pair i's route registered with the flow model (its own latency is not waited again: see
  // FlowModel::start_exchange). One thread; only when the exchange becomes flows.
  virtual RouteId route(std::size_t i) = 0;
};

// The max-min rates of an exchange's flows on an idle fabric, and what they put on the links
// at a time tau after the flows take bandwidth (tau <= 0: nothing yet).
class PairExchange {
 public:
  // Crossings whose flows the solve lists at once (4 bytes each; see the header comment).
  static constexpr std::size_t kListBudget = std::size_t{1} << 28;
  // capacity_Bps: per link (the caller's indices), > 0. `poll` is called now and then (an
  // interrupt check may throw from it). list_budget > 0 bounds the listed crossings (a
  // link's list is gathered whole even where it alone is larger). Throws what source.links
  // throws.
  PairExchange(const PairSource& source, std::span<const double> capacity_Bps, double bytes,
               const std::function<void()>& poll, std::size_t list_budget = kListBudget);

  std::size_t pairs() const { return level_of_.size(); }
  // Passes over the unfixed pairs that listed flows of saturating links (see above).
  std::size_t list_passes() const { return list_passes_; }
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
  void solve(const PairSource& source, std::span<const double> capacity_Bps, const std::function<void()>& poll,
             std::size_t list_budget);  // flow_exchange_solve.cpp

  double bytes_;
  std::size_t list_passes_ = 0;
  std::vector<double> levels_;          // distinct rates, ascending
  std::vector<uint64_t> pairs_at_;      // flows per level
  std::vector<uint32_t> level_of_;      // per pair: its rate's index in levels_
  std::vector<LinkLevels> links_;       // the links the flows cross, ascending
  std::vector<std::pair<uint32_t, uint32_t>> levels_of_link_;  // (level index, crossings)
};

}  // namespace cs::net
