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
// Flows on one route form one class. Max-min gives flows with the same links the same rate
// (the allocation is unique and symmetric), so a class is solved as one demand of weight n
// (its flows) and its flows are a processor-sharing queue: a virtual clock V counts the bytes
// each of them has received since the class formed, a flow that joins at V0 with b bytes is
// done when V reaches V0 + b, and the class keeps one completion entry, for its smallest
// finish tag. Staggered flows on one route therefore cost O(log n) each, not O(n): no flow is
// rescheduled when the others' rate changes. The solve itself costs the classes of the
// component, not its flows.
//
// A solve re-fills only what a change can move. Max-min rates are water levels: removing a flow
// of rate r leaves every class below r as it was (none of its links filled below r), and
// adding one leaves every class below min over its links of capacity / flows there (no link
// of it fills sooner). So the classes of the component below the lowest such level of the
// instant's changes keep their rates, and only the others are filled again on what those
// leave of each link: exact (a max-min allocation with some classes held at their rates is
// the max-min allocation of the rest on the capacity left), and on an all-to-all whose flows
// finish at many instants, most classes keep their rates at each.
//
// Routes are registered once (add_route) and referred to by id: a collective sends thousands
// of flows over the same few routes, and the model keeps per-route byte counts from which
// per-link counts are derived.
//
// A large all-pairs exchange can start as one bulk exchange (start_exchange,
// flow_exchange.hpp): on an idle model it is solved once and costs no flow; anything else that
// starts while it runs turns it into flows first, exactly.
//
// Units: bytes, bytes/s, seconds.
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/network/flow_exchange.hpp"

namespace cs::net {


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
  uint64_t recomputations = 0;      // component max-min solves (none where no rate can move)
  uint64_t fast_path_updates = 0;   // flows that started or ended on otherwise idle links
  uint64_t max_component_flows = 0;
  uint64_t classes_refilled = 0;  // classes the solves filled again (the rest kept their rates)
  uint64_t classes_kept = 0;      // entries of classes that kept their rates on those links
  // The most instants queued at once, counting those every entry of which went stale and that
  // wait to be dropped (bounded: twice the live ones, or the compaction threshold).
  uint64_t max_queued_instants = 0;
};

class FlowModel final : public engine::EventTarget {
 public:
  // capacity_Bps[l] > 0 and finite for every directed link l.
  FlowModel(engine::Simulator& sim, std::vector<double> capacity_Bps);
  ~FlowModel() override;
  FlowModel(const FlowModel&) = delete;
  FlowModel& operator=(const FlowModel&) = delete;

  // Register a route: a non-empty list of known links, and its one-way latency (>= 0).
  RouteId add_route(std::span<const LinkIndex> links, double latency_s);
  std::size_t num_routes() const;

  // Start a flow over `route` now; bytes > 0 and finite. `observer` (may be null) is told at
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

  // A bulk exchange: source.pairs() flows of `bytes` each (finite, > 0), every one in flight
  // for latency_s (>= 0; its route's own latency is part of it, as with start's extra
  // latency) and then sharing. On a model with no flow active it is solved once
  // (PairExchange) and holds no flow; when flows are active, or any flow or exchange starts
  // before it ends, it becomes flows: the pairs not yet done, with the bytes they have left,
  // on source.route(i). The observer is told once, with kNoFlow and `tag`, when its last byte
  // is delivered. `source` must outlive it. Throws what source.links throws (nothing started).
  // Not for load-aware routing: flows_assigned() does not count a solved exchange's flows.
  static constexpr FlowId kNoFlow = ~FlowId{0};
  void start_exchange(PairSource& source, double bytes, FlowObserver* observer, uint64_t tag, double latency_s);
  // Stops the exchange started with this observer and tag, as cancel() stops a flow: returns
  // the bytes its flows delivered, or -1 when no such exchange is active.
  double cancel_exchange(const FlowObserver* observer, uint64_t tag);

  // Flows started and not finished, an exchange's counted.
  std::size_t active_flows() const;
  // Load-aware routing (adaptive, UGAL) asks how many flows use a link, counting flows still
  // in flight to it. Off by default: it costs two more updates per flow and link.
  void track_link_load(bool on);
  uint32_t flows_assigned(LinkIndex l) const;
  // The flow's rate now (0 while in flight or once finished).
  double rate_Bps(FlowId flow) const;
  const FlowModelStats& stats() const { return stats_; }
  std::size_t num_links() const { return internal_of_.size(); }

  // Per-link usage, by the caller's link index; links no route uses read 0. Kept always:
  // classes alone on their links (the common, fast case) are accounted per flow and route,
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
  // A solved exchange while it runs, and one run as flows (flow_model_exchange.hpp).
  struct SolvedExchange;
  struct ExchangeFlows;
  static constexpr uint64_t kExchangeEvent = 1;  // on_event's tag for a solved exchange's end
  // Start a flow in flight for in_flight_s (its route's latency included).
  FlowId admit(RouteId route, double bytes, FlowObserver* observer, uint64_t tag, double in_flight_s);
  // The solved exchange becomes flows (see start_exchange).
  void materialize();
  void finish_exchange();
  // A solved exchange's use of the links by tau after its start, kept from now on.
  void keep_usage(const PairExchange& exchange, double tau);
  // The group's flows: every pair's `bytes`, or what `solved` leaves of each at tau.
  void start_flows(ExchangeFlows& group, PairSource& source, double bytes, const PairExchange* solved, double tau,
                   double in_flight_s);

  enum class Phase : uint8_t { free, in_flight, sharing };
  static constexpr uint32_t kNone = ~0u;
  // A queued entry names a flow (its admission) or, with this bit, a class (its completion).
  static constexpr uint32_t kClassBit = 1u << 31;
  // Entries whose times differ by less than this (relative) share a bucket. Floating-point
  // sums along different dependency paths make "simultaneous" completions differ by a few
  // ulps; 1e-13 is hundreds of ulps yet 0.1 ns after a simulated day.
  static constexpr double kSameInstantRel = 1e-13;
  // The model's records, defined in flow_model_state.hpp (private to flow_model*.cpp).
  struct Flow;
  struct Waiting;  // a sharing flow in its class's queue, by finish tag
  struct Class;    // the sharing flows of one route
  struct Route;
  struct Link;
  struct Entry;   // a queued admission (a flow) or completion (a class)
  struct Bucket;  // admissions and completions due at one instant
  struct Done;

  // The hot paths' accessors, and enqueue and vtime_now below, are inline in flow_model_state.hpp.
  std::span<const LinkIndex> links_of_route(std::size_t route) const;
  std::span<const LinkIndex> links_of(const Class& c) const;
  std::span<const uint32_t> classes_on(LinkIndex l) const;
  std::vector<uint32_t>& list_of(LinkIndex l);
  // Queue `id` (a flow, or kClassBit | class, at its current version) for time t; returns
  // the bucket. Inline (nearly every call lands in the bucket used just before).
  uint32_t enqueue(engine::Time t, uint32_t id, uint32_t version);
  uint32_t enqueue_slow(engine::Time t, uint32_t id, uint32_t version);
  void free_bucket(uint32_t b);
  // Frees the buckets left with no live entry (and not recent), out of the heap.
  void compact_buckets();
  static constexpr std::size_t kCompactMin = 1024;
  // c's queued completion is stale from now on (its bucket one live entry fewer).
  void drop_queued(Class& c);
  void prefetch_ahead(std::size_t i) const;
  // Class queue and clock (flow_model_class.cpp).
  double vtime_now(const Class& c) const;
  void advance(Class& c);
  const Waiting* first_waiting(Class& c);  // smallest live finish tag (stale ones dropped)
  void queue_completion(uint32_t c);       // its first flow's completion, at its rate now
  void complete_due(uint32_t c);           // its flows due now finish
  uint32_t new_class(RouteId route);
  void activate(FlowId f);
  void join(FlowId f, uint32_t c);  // f joins the active class c
  void leave(FlowId f);             // f leaves its class (finished or cancelled)
  // The class's links are left (busy periods closed, shared links marked for a solve); its
  // slot is freed.
  void release(uint32_t c);
  void retire(FlowId f);  // f's slot no longer active (the caller frees it)
  void attach_shared(uint32_t c, uint32_t hop, LinkIndex l);  // link already has a class
  void detach_shared(uint32_t c, uint32_t hop, LinkIndex l);  // link keeps other classes
  void touch_links(uint32_t c);  // its weight changed: its links are re-solved
  // Routes up to this many hops are scanned for the hop on a link; longer ones (a pipeline
  // as one flow: up to hundreds of thousands of hops) are looked up in hop_index.
  static constexpr std::size_t kScanHops = 64;
  // Move c's entry in l's list from position `from` (kNone: its only entry) to `to`.
  void set_pos(uint32_t c, LinkIndex l, uint32_t from, uint32_t to);
  // A long route's hops as (link << 32 | hop), ascending; built on first use.
  const std::vector<uint64_t>& hop_index(RouteId route);
  void mark_dirty(LinkIndex l);
  // This instant's changes: a class of `rate` lost flows; flows joined route's links (after
  // link_flows_ counts them).
  void lower_solve_from(double rate) { solve_from_ = std::min(solve_from_, rate); }
  void joined_links(RouteId route);
  void recompute();
  void solve_component();
  void set_rate(uint32_t c, double rate);
  // An alone class is joined: from now on its links' busy periods and use are per link.
  void end_alone(uint32_t c);
  void reschedule();

  engine::Simulator& sim_;
  std::vector<Flow> flows_;
  std::vector<FlowId> free_flows_;
  std::vector<Class> classes_;
  std::vector<uint32_t> free_classes_;
  std::vector<std::vector<uint32_t>> class_pos_;  // per class, per hop: index in a shared list
  std::vector<std::vector<uint64_t>> hop_index_;  // per route, see hop_index (long ones only)
  std::vector<Route> routes_;
  std::vector<LinkIndex> route_links_;
  std::vector<double> external_capacity_;        // by the caller's link index
  std::vector<LinkIndex> internal_of_;           // caller's index -> model's, or kNone
  std::vector<LinkIndex> external_of_;           // model's index -> caller's
  std::vector<double> capacity_;                 // from here on, by the model's link index
  std::vector<Link> links_;
  std::vector<uint32_t> link_flows_;             // sharing flows per link, crossings counted
  std::vector<uint32_t> link_list_;              // link -> index in lists_, or kNone
  std::vector<uint32_t> assigned_;               // flows started and not finished, per link
  // Per-link usage beyond what alone flows leave in Route::alone_s (the query adds those).
  // A busy period (count > 0) that an alone class started has no period_start_ until another
  // flow joins (end_alone); every other period has one from its start.
  std::vector<double> busy_s_;        // completed busy periods with a period_start_
  std::vector<double> period_start_;  // start of the current busy period
  std::vector<double> peak_util_;     // largest use solve_component or end_alone saw
  std::vector<std::vector<uint32_t>> lists_;
  std::vector<uint8_t> dirty_;
  std::vector<LinkIndex> dirty_links_;
  // Bucket queue: a min-heap of (time, bucket) plus a few recently used buckets, because
  // nearly every entry queued at one instant goes to one of a handful of times.
  std::vector<Bucket> buckets_;
  std::vector<uint32_t> free_buckets_;
  std::vector<std::pair<engine::Time, uint32_t>> bucket_heap_;
  static constexpr int kRecent = 4;
  uint32_t recent_[kRecent];
  int recent_next_ = 0;
  uint32_t last_bucket_ = kNone;
  std::size_t compact_at_ = kCompactMin;  // the heap's size that calls compact_buckets
  bool prefetch_ = false;
  // Scratch
  std::vector<Entry> due_;
  std::vector<Done> done_;
  std::vector<uint32_t> comp_classes_;
  std::vector<LinkIndex> comp_links_;
  std::vector<std::pair<double, LinkIndex>> heap_;
  std::vector<double> heap_key_;  // per link: its live entry's share in heap_
  std::vector<double> residual_;
  std::vector<uint32_t> unfixed_, link_mark_;
  std::vector<LinkIndex> touched_;      // links a saturation changed (solve_component)
  std::vector<uint8_t> touched_mark_;

  engine::EventId pending_event_{};
  engine::Time pending_time_ = engine::kForever;
  bool in_handler_ = false;
  bool solve_pending_ = false;  // a cancel outside an event left rates to re-solve
  // Classes whose rate is below this keep it at the next solve (see the header comment).
  double solve_from_ = std::numeric_limits<double>::infinity();
  uint32_t epoch_ = 0;
  std::size_t active_ = 0;
  FlowModelStats stats_;
  std::unique_ptr<SolvedExchange> exchange_;  // at most one, alone on the model
  std::vector<std::unique_ptr<ExchangeFlows>> exchange_flows_;
  // Link use of solved exchanges that ended or became flows, by the caller's link index
  // (empty until one did).
  std::vector<double> exchange_bytes_, exchange_busy_s_, exchange_peak_;
};

}  // namespace cs::net
