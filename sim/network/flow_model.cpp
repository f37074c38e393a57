// The flow model's public side: routes, starting and cancelling flows, the instant-by-instant
// event loop and the usage queries. Classes (processor-sharing queues per route):
// flow_model_class.cpp; the max-min solve: flow_model_solve.cpp.
#include "sim/network/flow_model.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "common/free_slots.hpp"
#include "sim/engine/priority.hpp"
#include "sim/network/flow_model_exchange.hpp"
#include "sim/network/flow_model_state.hpp"
#include "sim/network/min_heap.hpp"

namespace cs::net {

using detail::kLater;

FlowModel::FlowModel(engine::Simulator& sim, std::vector<double> capacity_Bps) : sim_(sim) {
  for (double c : capacity_Bps)
    if (!(c > 0) || !std::isfinite(c)) throw std::invalid_argument("FlowModel: link capacity must be > 0 and finite");
  const std::size_t n = capacity_Bps.size();
  external_capacity_ = std::move(capacity_Bps);
  internal_of_.assign(n, kNone);
  capacity_.resize(n);
  links_.resize(n);
  link_flows_.assign(n, 0);
  link_list_.assign(n, kNone);
  dirty_.assign(n, 0);
  residual_.resize(n);
  heap_key_.resize(n);
  unfixed_.resize(n);
  link_mark_.resize(n);
  touched_mark_.assign(n, 0);
  busy_s_.assign(n, 0.0);
  period_start_.assign(n, 0.0);
  peak_util_.assign(n, 0.0);
  std::fill(std::begin(recent_), std::end(recent_), kNone);
  // Prefetching pays only on large fabrics, where link records, flows and routes together
  // outgrow the L2 cache (0.5 MiB per core here); below that it is pure overhead.
  prefetch_ = n * sizeof(Link) > (128u << 10);
}

RouteId FlowModel::add_route(std::span<const LinkIndex> links, double latency_s) {
  if (links.empty()) throw std::invalid_argument("FlowModel::add_route: empty route");
  if (!(latency_s >= 0) || !std::isfinite(latency_s))
    throw std::invalid_argument("FlowModel::add_route: latency must be finite and >= 0");
  for (LinkIndex l : links)
    if (l >= internal_of_.size()) throw std::invalid_argument("FlowModel::add_route: unknown link");
  Route r;
  r.first = static_cast<uint32_t>(route_links_.size());
  r.count = static_cast<uint32_t>(links.size());
  r.latency_s = latency_s;
  r.bottleneck_Bps = engine::kForever;
  for (LinkIndex l : links) {
    // Links are numbered inside the model in the order routes first use them, so the links
    // of routes registered together (a ring's neighbours, a rank's peers) share cache lines:
    // every flow touches each of its links twice, and on large fabrics these are the misses.
    if (internal_of_[l] == kNone) {
      internal_of_[l] = static_cast<LinkIndex>(external_of_.size());
      capacity_[external_of_.size()] = external_capacity_[l];
      external_of_.push_back(l);
    }
    const LinkIndex i = internal_of_[l];
    r.bottleneck_Bps = std::min(r.bottleneck_Bps, capacity_[i]);
    route_links_.push_back(i);
  }
  routes_.push_back(r);
  return static_cast<RouteId>(routes_.size() - 1);
}

std::size_t FlowModel::num_routes() const { return routes_.size(); }

uint32_t FlowModel::flows_assigned(LinkIndex l) const {
  const LinkIndex i = internal_of_.at(l);
  if (i == kNone) return 0;
  return assigned_.empty() ? link_flows_[i] : assigned_[i];
}

double FlowModel::rate_Bps(FlowId flow) const {
  if (flow >= flows_.size() || flows_[flow].phase != Phase::sharing) return 0;
  return classes_[routes_[flows_[flow].route].cls].rate;
}

void FlowModel::track_link_load(bool on) {
  if (on == !assigned_.empty()) return;
  if (active_ != 0) throw std::logic_error("FlowModel::track_link_load: flows are active");
  if (on) assigned_.assign(links_.size(), 0);
  else assigned_.clear();
}

std::vector<double> FlowModel::link_bytes() const {
  // Per route first (completed flows, then what active ones have delivered so far), then
  // spread over the route's links: a query costs O(flows + route hops).
  std::vector<double> route_bytes(routes_.size());
  for (std::size_t r = 0; r < routes_.size(); ++r) route_bytes[r] = routes_[r].bytes_done;
  for (const Flow& f : flows_) {
    if (f.phase != Phase::sharing) continue;
    const double left = f.finish - vtime_now(classes_[routes_[f.route].cls]);
    route_bytes[f.route] += std::clamp(f.bytes - left, 0.0, f.bytes);
  }
  std::vector<double> bytes = exchange_bytes_;
  bytes.resize(internal_of_.size(), 0.0);
  for (std::size_t r = 0; r < routes_.size(); ++r)
    for (LinkIndex l : links_of_route(r)) bytes[external_of_[l]] += route_bytes[r];
  if (exchange_) exchange_->solved->add_link_bytes(sim_.now() - exchange_->start, bytes);
  return bytes;
}

std::vector<double> FlowModel::link_busy_s() const {
  const engine::Time now = sim_.now();
  std::vector<double> busy = busy_s_;
  // An alone flow's links are busy exactly while it is active, and no route crossing a link
  // twice is ever alone: its time counts once on each link of its route.
  for (std::size_t r = 0; r < routes_.size(); ++r)
    if (routes_[r].alone_s != 0)
      for (LinkIndex l : links_of_route(r)) busy[l] += routes_[r].alone_s;
  for (const Class& c : classes_) {
    if (c.n == 0 || !c.alone) continue;
    const double ahead = (c.queue.front().finish - vtime_now(c)) / c.rate;  // booked, not yet run
    for (LinkIndex l : links_of(c)) busy[l] -= ahead;
  }
  // Open periods that no alone class holds.
  for (std::size_t i = 0; i < external_of_.size(); ++i) {
    const Link& link = links_[i];
    if (link.count > 1 || (link.count == 1 && !classes_[link.single].alone)) busy[i] += now - period_start_[i];
  }
  std::vector<double> out = exchange_busy_s_;
  out.resize(internal_of_.size(), 0.0);
  for (std::size_t i = 0; i < external_of_.size(); ++i) out[external_of_[i]] += busy[i];
  if (exchange_) exchange_->solved->add_link_busy(now - exchange_->start, out);
  return out;
}

std::vector<double> FlowModel::link_peak_utilization() const {
  std::vector<double> peak = peak_util_;
  // Routes whose flows ran alone for some time: their bottleneck rate on each of their links.
  for (std::size_t r = 0; r < routes_.size(); ++r) {
    if (!(routes_[r].alone_s > 0)) continue;
    for (LinkIndex l : links_of_route(r)) peak[l] = std::max(peak[l], routes_[r].bottleneck_Bps / capacity_[l]);
  }
  // The current rates, which no finish or solve has recorded yet.
  std::vector<double> used(external_of_.size(), 0.0);
  for (const Class& c : classes_)
    if (c.n > 0)
      for (LinkIndex l : links_of(c)) used[l] += c.rate * c.n;
  std::vector<double> out = exchange_peak_;
  out.resize(internal_of_.size(), 0.0);
  for (std::size_t i = 0; i < external_of_.size(); ++i)
    out[external_of_[i]] = std::max({out[external_of_[i]], peak[i], used[i] / capacity_[i]});
  if (exchange_) exchange_->solved->max_link_utilization(sim_.now() - exchange_->start, external_capacity_, out);
  return out;
}

std::span<const uint32_t> FlowModel::classes_on(LinkIndex l) const {
  const Link& link = links_[l];
  if (link.count <= 1) return {&link.single, link.count};
  return lists_[link_list_[l]];
}

std::vector<uint32_t>& FlowModel::list_of(LinkIndex l) {
  if (link_list_[l] == kNone) {
    link_list_[l] = static_cast<uint32_t>(lists_.size());
    lists_.emplace_back();
  }
  return lists_[link_list_[l]];
}

FlowId FlowModel::start(RouteId route, double bytes, FlowObserver* observer, uint64_t tag,
                        double extra_latency_s) {
  if (route >= routes_.size()) throw std::invalid_argument("FlowModel::start: unknown route");
  if (!(bytes > 0) || !std::isfinite(bytes)) throw std::invalid_argument("FlowModel::start: bytes must be finite and > 0");
  if (!(extra_latency_s >= 0) || !std::isfinite(extra_latency_s))
    throw std::invalid_argument("FlowModel::start: extra latency must be finite and >= 0");
  if (exchange_) materialize();  // a solved exchange holds only while nothing else runs
  ++stats_.flows_started;
  return admit(route, bytes, observer, tag, routes_[route].latency_s + extra_latency_s);
}

FlowId FlowModel::admit(RouteId route, double bytes, FlowObserver* observer, uint64_t tag, double in_flight_s) {
  if (free_flows_.empty() && flows_.size() >= kClassBit) throw std::length_error("FlowModel::start: too many flows at once");
  const FlowId f = take_slot(flows_, free_flows_);
  Flow& flow = flows_[f];
  flow.route = route;
  flow.bytes = bytes;
  flow.finish = 0;
  flow.observer = observer;
  flow.tag = tag;
  flow.phase = Phase::in_flight;
  ++flow.version;
  ++active_;
  if (!assigned_.empty())
    for (LinkIndex l : links_of_route(route)) ++assigned_[l];
  // Even a zero-latency flow is admitted through the queue: every flow of this instant then
  // joins the links in one batch and one recomputation.
  enqueue(sim_.now() + in_flight_s, f, flow.version);
  if (!in_handler_) reschedule();
  return f;
}

uint32_t FlowModel::enqueue_slow(engine::Time t, uint32_t id, uint32_t version) {
  const double tol = t * kSameInstantRel;
  uint32_t b = kNone;
  for (uint32_t r : recent_) {
    if (r != kNone && buckets_[r].live && std::abs(buckets_[r].time - t) <= tol) {
      b = r;
      break;
    }
  }
  if (b == kNone) {
    // Two buckets may hold the same instant; both are processed when it comes.
    b = take_slot(buckets_, free_buckets_);
    buckets_[b].time = t;
    buckets_[b].live = true;
    if (bucket_heap_.size() >= compact_at_) compact_buckets();
    bucket_heap_.push_back({t, b});
    std::push_heap(bucket_heap_.begin(), bucket_heap_.end(), kLater);
    stats_.max_queued_instants = std::max<uint64_t>(stats_.max_queued_instants, bucket_heap_.size());
    recent_[recent_next_] = b;
    recent_next_ = (recent_next_ + 1) % kRecent;
  }
  last_bucket_ = b;
  buckets_[b].entries.push_back({id, version});
  ++buckets_[b].pending;
  return b;
}

void FlowModel::compact_buckets() {
  // A solve that moves many classes' rates queues each completion anew and leaves its old
  // bucket in the heap with no live entry; reschedule() drops those only once they reach the
  // top. When completions spread over many instants (a dragonfly all-to-all: 16,256 flows
  // ending at some 10,000) the dead ones outnumber the live by hundreds to one: 6.5 M buckets
  // for 16,256 flows. Drop them all here, once the heap has doubled since the last pass
  // (amortized O(1) per bucket). The buckets an enqueue may still join (the recent ones) stay:
  // which entries share an instant is as before, so is every event time.
  std::erase_if(bucket_heap_, [&](const std::pair<engine::Time, uint32_t>& e) {
    const uint32_t b = e.second;
    if (buckets_[b].pending != 0 || b == last_bucket_ || std::find(std::begin(recent_), std::end(recent_), b) != std::end(recent_))
      return false;
    free_bucket(b);
    return true;
  });
  std::make_heap(bucket_heap_.begin(), bucket_heap_.end(), kLater);
  compact_at_ = std::max(kCompactMin, 2 * bucket_heap_.size());
}

void FlowModel::free_bucket(uint32_t b) {
  Bucket& bucket = buckets_[b];
  bucket.entries.clear();
  bucket.live = false;
  bucket.pending = 0;
  ++bucket.generation;
  free_buckets_.push_back(b);
}

void FlowModel::drop_queued(Class& c) {
  if (c.bucket == kNone) return;
  Bucket& bucket = buckets_[c.bucket];
  if (bucket.generation == c.bucket_generation && bucket.pending > 0) --bucket.pending;
  c.bucket = kNone;
}

void FlowModel::on_event(uint64_t tag) {
  if (tag == kExchangeEvent) {
    finish_exchange();
    return;
  }
  pending_event_ = {};
  solve_pending_ = false;
  pending_time_ = engine::kForever;
  in_handler_ = true;
  const engine::Time now = sim_.now();
  // Admissions and completions due now; observers may start flows that are due now too
  // (zero latency), so repeat until nothing is due, then solve once.
  while (!bucket_heap_.empty() && bucket_heap_.front().first <= now) {
    due_.clear();
    while (!bucket_heap_.empty() && bucket_heap_.front().first <= now) {
      std::pop_heap(bucket_heap_.begin(), bucket_heap_.end(), kLater);
      const uint32_t b = bucket_heap_.back().second;
      bucket_heap_.pop_back();
      Bucket& bucket = buckets_[b];
      if (due_.empty()) due_.swap(bucket.entries);  // the common case: one bucket due
      else due_.insert(due_.end(), bucket.entries.begin(), bucket.entries.end());
      free_bucket(b);
    }
    done_.clear();
    for (std::size_t i = 0; i < due_.size(); ++i) {
      if (prefetch_) prefetch_ahead(i);
      const Entry& e = due_[i];
      if (e.id & kClassBit) {
        const uint32_t c = e.id & ~kClassBit;
        if (classes_[c].version == e.version && classes_[c].n > 0) complete_due(c);
        continue;
      }
      Flow& flow = flows_[e.id];
      if (flow.version == e.version && flow.phase == Phase::in_flight) activate(e.id);
    }
    for (const Done& d : done_) {
      // Free the slot just before telling the observer: the flow it starts next (a ring
      // step, the next chunk) reuses this slot, so a rank's flows stay in one warm cache line.
      free_flows_.push_back(d.flow);
      d.observer->on_flow_done(d.flow, d.tag);
    }
  }
  recompute();
  in_handler_ = false;
  reschedule();
}

inline void FlowModel::prefetch_ahead(std::size_t i) const {
  // A batch touches its flows, their routes and their links in an order unrelated to memory.
  // On a large fabric each is a cache miss; ask for them in stages, a few entries early, so
  // the misses overlap instead of stalling one after another. Each stage reads only what the
  // previous stage brought in.
  constexpr std::size_t kFlow = 12, kRoute = 8, kLinks = 4;
  const std::size_t n = due_.size();
  auto route_of = [&](const Entry& e) {
    return (e.id & kClassBit) ? classes_[e.id & ~kClassBit].route : flows_[e.id].route;
  };
  if (i + kFlow < n) {
    const Entry& e = due_[i + kFlow];
    if (e.id & kClassBit) __builtin_prefetch(&classes_[e.id & ~kClassBit]);
    else __builtin_prefetch(&flows_[e.id]);
  }
  if (i + kRoute < n) {
    const Route& r = routes_[route_of(due_[i + kRoute])];
    __builtin_prefetch(&r);
    __builtin_prefetch(route_links_.data() + r.first);
  }
  if (i + kLinks < n)
    for (LinkIndex l : links_of_route(route_of(due_[i + kLinks]))) __builtin_prefetch(&links_[l], 1);
}

void FlowModel::retire(FlowId f) {
  Flow& flow = flows_[f];
  if (!assigned_.empty())
    for (LinkIndex l : links_of_route(flow.route)) --assigned_[l];
  flow.phase = Phase::free;
  flow.observer = nullptr;
  ++flow.version;
  --active_;
}

double FlowModel::cancel(FlowId f, const FlowObserver* observer, uint64_t tag) {
  if (f >= flows_.size()) return -1;
  Flow& flow = flows_[f];
  if (flow.phase == Phase::free || flow.observer != observer || flow.tag != tag) return -1;
  double delivered = 0;
  if (flow.phase == Phase::sharing) {
    const uint32_t c = routes_[flow.route].cls;
    Class& k = classes_[c];
    const double left = std::clamp(flow.finish - vtime_now(k), 0.0, flow.bytes);
    delivered = flow.bytes - left;
    // An alone class's route booked its whole expected time at activation: take back what it
    // will not run now.
    if (k.alone) routes_[flow.route].alone_s -= left / k.rate;
    routes_[flow.route].bytes_done += delivered;
    leave(f);
  }
  // Its queued admission or its entry in the class queue goes stale with the version
  // retire() bumps.
  retire(f);
  free_flows_.push_back(f);
  ++stats_.flows_cancelled;
  // The flows it shared links with speed up now: solve at this instant (inside an event the
  // handler solves before it returns).
  if (!dirty_links_.empty() && !in_handler_) {
    solve_pending_ = true;
    reschedule();
  }
  return delivered;
}

void FlowModel::reschedule() {
  // Buckets whose entries all went stale are dropped here, not woken for.
  while (!bucket_heap_.empty() && buckets_[bucket_heap_.front().second].pending == 0) {
    std::pop_heap(bucket_heap_.begin(), bucket_heap_.end(), kLater);
    free_bucket(bucket_heap_.back().second);
    bucket_heap_.pop_back();
  }
  engine::Time next = bucket_heap_.empty() ? engine::kForever : bucket_heap_.front().first;
  if (solve_pending_) next = std::min(next, sim_.now());
  if (next == pending_time_) return;
  if (pending_event_.valid()) sim_.cancel(pending_event_);
  pending_event_ = {};
  pending_time_ = next;
  if (next != engine::kForever)
    pending_event_ = sim_.schedule_at(std::max(next, sim_.now()), *this, 0, engine::priority::resolve);
}

}  // namespace cs::net
