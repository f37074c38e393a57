#pragma once
// Flow-level network model: bytes move as flows over fixed routes of directed links, and the
// active flows share every link by max-min fairness (progressive filling).
//
// A flow started at t over a route with latency L first spends L in flight (using no
// bandwidth), then shares bandwidth until its bytes are delivered; uncontended, it takes
// L + bytes / min(link capacity). Rates are recomputed when flows start or finish, only over
// the connected component of flows that share links with the change, and once per instant:
// everything that happens at one simulated time is one recomputation.
//
// A route may cross a link more than once (a pipelined ring as one flow: every ring edge moves
// at the flow's rate). Such a flow counts once per crossing: it takes m times its rate from a
// link it crosses m times, and max-min gives it the share of m flows there.
//
// Routes are registered once (add_route) and referred to by id: a collective sends thousands
// of flows over the same few routes, and the model keeps per-route byte counts from which
// per-link counts are derived.
//
// Units: bytes, bytes/s, seconds.
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/engine/simulator.hpp"

namespace cs::net {

using FlowId = uint32_t;
using LinkIndex = uint32_t;
using RouteId = uint32_t;

class FlowObserver {
 public:
  virtual ~FlowObserver() = default;
  // Called at the flow's completion time. May start new flows. The id may be reused by a
  // flow started after this call.
  virtual void on_flow_done(FlowId flow, uint64_t tag) = 0;
};

struct FlowModelStats {
  uint64_t flows_started = 0;
  uint64_t flows_completed = 0;
  uint64_t flows_cancelled = 0;
  uint64_t recomputations = 0;      // component max-min solves
  uint64_t fast_path_updates = 0;   // flows that started or ended on otherwise idle links
  uint64_t max_component_flows = 0;
};

class FlowModel final : public engine::EventTarget {
 public:
  // capacity_Bps[l] > 0 for every directed link l.
  FlowModel(engine::Simulator& sim, std::vector<double> capacity_Bps);
  FlowModel(const FlowModel&) = delete;
  FlowModel& operator=(const FlowModel&) = delete;

  // Register a route: a non-empty list of known links, and its one-way latency (>= 0).
  RouteId add_route(std::span<const LinkIndex> links, double latency_s);
  std::size_t num_routes() const { return routes_.size(); }

  // Start a flow over `route` now; bytes > 0. `observer` (may be null) is told at
  // completion, with `tag`. The flow is in flight for the route's latency plus
  // `extra_latency_s` (>= 0: per-step software latency, a collective stage's critical path)
  // before it takes bandwidth.
  FlowId start(RouteId route, double bytes, FlowObserver* observer, uint64_t tag,
               double extra_latency_s = 0);

  // Stops `flow` now if it is active and was started with this observer and tag (a finished
  // flow's id may already belong to a newer flow, which this check tells apart). Its links
  // are freed at once: the flows it shared them with are re-solved at this instant. Returns
  // the bytes it had delivered (0 while still in flight), or -1 when no such flow is active.
  // Its observer is not told. Bytes delivered count in link_bytes(); the rest never moved.
  double cancel(FlowId flow, const FlowObserver* observer, uint64_t tag);

  std::size_t active_flows() const { return active_; }
  // Load-aware routing (adaptive, UGAL) asks how many flows use a link, counting flows still
  // in flight to it. Off by default: it costs two more updates per flow and link.
  void track_link_load(bool on);
  uint32_t flows_assigned(LinkIndex l) const;
  double rate_Bps(FlowId flow) const { return flows_[flow].rate; }
  const FlowModelStats& stats() const { return stats_; }
  std::size_t num_links() const { return internal_of_.size(); }

  // Per-link usage, by the caller's link index; links no route uses read 0. Kept always:
  // flows alone on their links (the common, fast case) are accounted per flow and route,
  // not per hop; only shared links pay per hop, beside the max-min solve they need anyway.
  //
  // Bytes that crossed each link so far: completed flows, and the part of active flows
  // already delivered. A flow crossing a link m times counts m times there.
  std::vector<double> link_bytes() const;
  // Seconds during which at least one flow was in the sharing phase on each link (the union
  // of the flows' sharing intervals; in-flight latency does not count). A link busy now
  // counts up to now.
  std::vector<double> link_busy_s() const;
  // The largest fraction of each link's capacity in use at any time so far: the sum of the
  // rates of the flows on it (m times a flow's rate for m crossings) over capacity, in
  // [0, 1] up to rounding. Rates that held for no time (a flow alone for an instant, before
  // others joined at the same instant) do not count.
  std::vector<double> link_peak_utilization() const;

  void on_event(uint64_t tag) override;

 private:
  enum class Phase : uint8_t { free, in_flight, sharing };
  static constexpr uint32_t kNone = ~0u;
  // Entries whose times differ by less than this (relative) share a bucket. Floating-point
  // sums along different dependency paths make "simultaneous" completions differ by a few
  // ulps; 1e-13 is hundreds of ulps yet 0.1 ns after a simulated day.
  static constexpr double kSameInstantRel = 1e-13;
  // 64 bytes: every flow is touched a few times in its life, and a large collective keeps
  // thousands alive; they must stay in cache.
  struct alignas(64) Flow {
    double bytes = 0, remaining = 0, rate = 0;
    engine::Time last_update = 0;
    FlowObserver* observer = nullptr;
    uint64_t tag = 0;
    RouteId route = 0;
    uint32_t version = 0;  // bumped whenever queued entries for this flow go stale
    uint32_t mark = 0;     // component-search epoch
    Phase phase = Phase::free;
    bool fixed = false;    // progressive filling: rate settled
    // Took the fast path and no flow has joined any of its links since: it alone keeps all
    // of them busy, since its activation (last_update), at its route's bottleneck rate.
    bool alone = false;
  };
  static_assert(sizeof(Flow) == 64);
  struct Route {
    uint32_t first = 0, count = 0;  // range in route_links_
    double latency_s = 0;
    double bottleneck_Bps = 0;
    double bytes_done = 0;
    // Time its flows spent alone (Flow::alone) from activation to finish, s; an active
    // alone flow's whole expected time is in already (its links' busy time, and a sign that
    // they carried the bottleneck rate).
    double alone_s = 0;
  };
  // 8 bytes per link, touched twice per flow per hop: the array must stay in cache. The
  // uncontended case (one flow) needs no list; shared links keep one in lists_.
  struct Link {
    uint32_t count = 0;     // flows in the sharing phase on this link
    FlowId single = kNone;  // the flow, when count == 1
  };
  struct Entry {
    FlowId flow;
    uint32_t version;
  };
  struct Bucket {  // admissions and completions due at one instant
    engine::Time time = 0;
    bool live = false;
    std::vector<Entry> entries;
  };
  struct Done {
    FlowObserver* observer;
    FlowId flow;
    uint64_t tag;
  };

  std::span<const LinkIndex> links_of_route(std::size_t route) const {
    const Route& r = routes_[route];
    return {route_links_.data() + r.first, r.count};
  }
  std::span<const LinkIndex> links_of(const Flow& f) const { return links_of_route(f.route); }
  std::span<const FlowId> flows_on(LinkIndex l) const;
  std::vector<FlowId>& list_of(LinkIndex l);
  // Queue `flow` (at its current version) for time t. Inline: nearly every call lands in the
  // bucket used just before.
  void enqueue(engine::Time t, FlowId flow) {
    if (last_bucket_ != kNone) {
      Bucket& b = buckets_[last_bucket_];
      if (b.live && std::abs(b.time - t) <= t * kSameInstantRel) {
        b.entries.push_back({flow, flows_[flow].version});
        return;
      }
    }
    enqueue_slow(t, flow);
  }
  void enqueue_slow(engine::Time t, FlowId flow);
  void prefetch_ahead(std::size_t i) const;
  void activate(FlowId f);
  void finish(FlowId f);
  // Leaves every link of f (busy periods closed, shared links marked for a solve); true if
  // some link keeps other flows.
  bool release_links(FlowId f);
  void retire(FlowId f);  // f's slot no longer active (the caller frees it)
  void attach_shared(FlowId f, uint32_t hop, LinkIndex l);  // link already has a flow
  void detach_shared(FlowId f, uint32_t hop, LinkIndex l);  // link keeps other flows
  // Routes up to this many hops are scanned for the hop on a link; longer ones (a pipeline
  // as one flow: up to hundreds of thousands of hops) are looked up in hop_index.
  static constexpr std::size_t kScanHops = 64;
  // Move f's entry in l's list from position `from` (kNone: its only entry) to `to`.
  void set_pos(FlowId f, LinkIndex l, uint32_t from, uint32_t to);
  // A long route's hops as (link << 32 | hop), ascending; built on first use.
  const std::vector<uint64_t>& hop_index(RouteId route);
  void mark_dirty(LinkIndex l);
  void recompute();
  void solve_component();
  void set_rate(FlowId f, double rate);
  // An alone flow g is joined: from now on its links' busy periods and use are per link.
  void end_alone(FlowId g);
  void reschedule();

  engine::Simulator& sim_;
  std::vector<Flow> flows_;
  std::vector<FlowId> free_flows_;
  std::vector<std::vector<uint32_t>> flow_pos_;  // per flow, per hop: index in a shared list
  std::vector<std::vector<uint64_t>> hop_index_;  // per route, see hop_index (long ones only)
  std::vector<Route> routes_;
  std::vector<LinkIndex> route_links_;
  std::vector<double> external_capacity_;        // by the caller's link index
  std::vector<LinkIndex> internal_of_;           // caller's index -> model's, or kNone
  std::vector<LinkIndex> external_of_;           // model's index -> caller's
  std::vector<double> capacity_;                 // from here on, by the model's link index
  std::vector<Link> links_;
  std::vector<uint32_t> link_list_;              // link -> index in lists_, or kNone
  std::vector<uint32_t> assigned_;               // flows started and not finished, per link
  // Per-link usage beyond what alone flows leave in Route::alone_s (the query adds those).
  // A busy period (count > 0) that an alone flow started has no period_start_ until another
  // flow joins (end_alone); every other period has one from its start.
  std::vector<double> busy_s_;        // completed busy periods with a period_start_
  std::vector<double> period_start_;  // start of the current busy period
  std::vector<double> peak_util_;     // largest use solve_component or end_alone saw
  std::vector<std::vector<FlowId>> lists_;
  std::vector<uint8_t> dirty_;
  std::vector<LinkIndex> dirty_links_;
  // Bucket queue: a min-heap of (time, bucket) plus a few recently used buckets, because
  // nearly every flow queued at one instant goes to one of a handful of times.
  std::vector<Bucket> buckets_;
  std::vector<uint32_t> free_buckets_;
  std::vector<std::pair<engine::Time, uint32_t>> bucket_heap_;
  static constexpr int kRecent = 4;
  uint32_t recent_[kRecent];
  int recent_next_ = 0;
  uint32_t last_bucket_ = kNone;
  bool prefetch_ = false;
  // Scratch
  std::vector<Entry> due_;
  std::vector<Done> done_;
  std::vector<FlowId> comp_flows_;
  std::vector<LinkIndex> comp_links_;
  std::vector<std::pair<double, LinkIndex>> heap_;
  std::vector<double> residual_;
  std::vector<uint32_t> unfixed_, link_mark_;

  engine::EventId pending_event_{};
  engine::Time pending_time_ = engine::kForever;
  bool in_handler_ = false;
  bool solve_pending_ = false;  // a cancel outside an event left rates to re-solve
  uint32_t epoch_ = 0;
  std::size_t active_ = 0;
  FlowModelStats stats_;
};

}  // namespace cs::net
