#include "sim/network/flow_model.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "sim/engine/priority.hpp"

namespace cs::net {

namespace {
constexpr auto kLater = std::greater<>();
}  // namespace

FlowModel::FlowModel(engine::Simulator& sim, std::vector<double> capacity_Bps) : sim_(sim) {
  for (double c : capacity_Bps)
    if (!(c > 0)) throw std::invalid_argument("FlowModel: link capacity must be > 0");
  const std::size_t n = capacity_Bps.size();
  external_capacity_ = std::move(capacity_Bps);
  internal_of_.assign(n, kNone);
  capacity_.resize(n);
  links_.resize(n);
  link_list_.assign(n, kNone);
  dirty_.assign(n, 0);
  residual_.resize(n);
  unfixed_.resize(n);
  link_mark_.resize(n);
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
  if (!(latency_s >= 0)) throw std::invalid_argument("FlowModel::add_route: latency must be >= 0");
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

uint32_t FlowModel::flows_assigned(LinkIndex l) const {
  const LinkIndex i = internal_of_.at(l);
  if (i == kNone) return 0;
  return assigned_.empty() ? links_[i].count : assigned_[i];
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
  const engine::Time now = sim_.now();
  for (const Flow& f : flows_) {
    if (f.phase != Phase::sharing) continue;
    const double left = f.remaining - f.rate * (now - f.last_update);
    route_bytes[f.route] += std::clamp(f.bytes - left, 0.0, f.bytes);
  }
  std::vector<double> bytes(internal_of_.size(), 0.0);
  for (std::size_t r = 0; r < routes_.size(); ++r)
    for (LinkIndex l : links_of_route(r)) bytes[external_of_[l]] += route_bytes[r];
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
  for (const Flow& f : flows_) {
    if (f.phase != Phase::sharing || !f.alone) continue;
    const double ahead = f.remaining / f.rate - (now - f.last_update);  // booked, not yet run
    for (LinkIndex l : links_of(f)) busy[l] -= ahead;
  }
  // Open periods that no alone flow holds.
  for (std::size_t i = 0; i < external_of_.size(); ++i) {
    const Link& link = links_[i];
    if (link.count > 1 || (link.count == 1 && !flows_[link.single].alone))
      busy[i] += now - period_start_[i];
  }
  std::vector<double> out(internal_of_.size(), 0.0);
  for (std::size_t i = 0; i < external_of_.size(); ++i) out[external_of_[i]] = busy[i];
  return out;
}

std::vector<double> FlowModel::link_peak_utilization() const {
  std::vector<double> peak = peak_util_;
  // Routes whose flows ran alone for some time: their bottleneck rate on each of their links.
  for (std::size_t r = 0; r < routes_.size(); ++r) {
    if (!(routes_[r].alone_s > 0)) continue;
    for (LinkIndex l : links_of_route(r))
      peak[l] = std::max(peak[l], routes_[r].bottleneck_Bps / capacity_[l]);
  }
  // The current rates, which no finish or solve has recorded yet.
  std::vector<double> used(external_of_.size(), 0.0);
  for (const Flow& f : flows_)
    if (f.phase == Phase::sharing)
      for (LinkIndex l : links_of(f)) used[l] += f.rate;
  std::vector<double> out(internal_of_.size(), 0.0);
  for (std::size_t i = 0; i < external_of_.size(); ++i)
    out[external_of_[i]] = std::max(peak[i], used[i] / capacity_[i]);
  return out;
}

std::span<const FlowId> FlowModel::flows_on(LinkIndex l) const {
  const Link& link = links_[l];
  if (link.count <= 1) return {&link.single, link.count};
  return lists_[link_list_[l]];
}

std::vector<FlowId>& FlowModel::list_of(LinkIndex l) {
  if (link_list_[l] == kNone) {
    link_list_[l] = static_cast<uint32_t>(lists_.size());
    lists_.emplace_back();
  }
  return lists_[link_list_[l]];
}

FlowId FlowModel::start(RouteId route, double bytes, FlowObserver* observer, uint64_t tag,
                        double extra_latency_s) {
  if (route >= routes_.size()) throw std::invalid_argument("FlowModel::start: unknown route");
  if (!(bytes > 0)) throw std::invalid_argument("FlowModel::start: bytes must be > 0");
  if (!(extra_latency_s >= 0)) throw std::invalid_argument("FlowModel::start: extra latency must be >= 0");
  FlowId f;
  if (!free_flows_.empty()) {
    f = free_flows_.back();
    free_flows_.pop_back();
  } else {
    f = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
    flow_pos_.emplace_back();
  }
  Flow& flow = flows_[f];
  flow.route = route;
  flow.bytes = flow.remaining = bytes;
  flow.rate = 0;
  flow.last_update = sim_.now();
  flow.observer = observer;
  flow.tag = tag;
  flow.phase = Phase::in_flight;
  ++flow.version;
  ++stats_.flows_started;
  ++active_;
  if (!assigned_.empty())
    for (LinkIndex l : links_of(flow)) ++assigned_[l];
  // Even a zero-latency flow is admitted through the queue: every flow of this instant then
  // joins the links in one batch and one recomputation.
  enqueue(sim_.now() + (routes_[route].latency_s + extra_latency_s), f);
  if (!in_handler_) reschedule();
  return f;
}

void FlowModel::enqueue_slow(engine::Time t, FlowId f) {
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
    if (!free_buckets_.empty()) {
      b = free_buckets_.back();
      free_buckets_.pop_back();
    } else {
      b = static_cast<uint32_t>(buckets_.size());
      buckets_.emplace_back();
    }
    buckets_[b].time = t;
    buckets_[b].live = true;
    bucket_heap_.push_back({t, b});
    std::push_heap(bucket_heap_.begin(), bucket_heap_.end(), kLater);
    recent_[recent_next_] = b;
    recent_next_ = (recent_next_ + 1) % kRecent;
  }
  last_bucket_ = b;
  buckets_[b].entries.push_back({f, flows_[f].version});
}

void FlowModel::on_event(uint64_t /*tag*/) {
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
      bucket.entries.clear();
      bucket.live = false;
      free_buckets_.push_back(b);
    }
    done_.clear();
    for (std::size_t i = 0; i < due_.size(); ++i) {
      if (prefetch_) prefetch_ahead(i);
      const Entry& e = due_[i];
      Flow& flow = flows_[e.flow];
      if (flow.version != e.version) continue;  // superseded by a rate change
      if (flow.phase == Phase::in_flight) activate(e.flow);
      else if (flow.phase == Phase::sharing) finish(e.flow);
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
  if (i + kFlow < n) __builtin_prefetch(&flows_[due_[i + kFlow].flow]);
  if (i + kRoute < n) {
    const Route& r = routes_[flows_[due_[i + kRoute].flow].route];
    __builtin_prefetch(&r);
    __builtin_prefetch(route_links_.data() + r.first);
  }
  if (i + kLinks < n)
    for (LinkIndex l : links_of(flows_[due_[i + kLinks].flow])) __builtin_prefetch(&links_[l], 1);
}

void FlowModel::attach_shared(FlowId f, uint32_t hop, LinkIndex l) {
  Link& link = links_[l];
  if (link.single == f) period_start_[l] = sim_.now();  // f crosses l twice; started it now
  else if (link.count == 1 && flows_[link.single].alone) end_alone(link.single);
  auto& list = list_of(l);
  if (link.count == 1) {
    // Second flow: from here on the link keeps a list, and flows their positions in it.
    list.assign(1, link.single);
    set_pos(link.single, l, kNone, 0);
    link.single = kNone;
  }
  auto& pos = flow_pos_[f];
  const uint32_t n = routes_[flows_[f].route].count;
  if (pos.size() < n) pos.resize(n);
  pos[hop] = static_cast<uint32_t>(list.size());
  list.push_back(f);
  ++link.count;
}

void FlowModel::detach_shared(FlowId f, uint32_t hop, LinkIndex l) {
  Link& link = links_[l];
  auto& list = lists_[link_list_[l]];
  const uint32_t pos = flow_pos_[f][hop];
  const FlowId moved = list.back();
  const auto last = static_cast<uint32_t>(list.size() - 1);
  list[pos] = moved;
  list.pop_back();
  // The moved entry may be another hop of f itself (a route that crosses l twice).
  if (last != pos) set_pos(moved, l, last, pos);
  if (--link.count == 1) {
    link.single = list.front();
    list.clear();
  }
}

void FlowModel::end_alone(FlowId g) {
  Flow& flow = flows_[g];
  flow.alone = false;
  Route& route = routes_[flow.route];
  // Its links' busy periods continue, from its activation, as periods of their own: take
  // back the whole booking (the same quotient activate added, so a flow joined at once
  // leaves alone_s exactly as it was).
  route.alone_s -= flow.remaining / flow.rate;
  // Zero time alone (joined at its activation instant) is no use of the links.
  const bool used = sim_.now() > flow.last_update;
  for (LinkIndex l : links_of(flow)) {
    period_start_[l] = flow.last_update;
    if (used) peak_util_[l] = std::max(peak_util_[l], route.bottleneck_Bps / capacity_[l]);
  }
}

void FlowModel::set_pos(FlowId f, LinkIndex l, uint32_t from, uint32_t to) {
  const RouteId route = flows_[f].route;
  const auto links = links_of_route(route);
  auto& p = flow_pos_[f];
  if (p.size() < links.size()) p.resize(links.size());
  if (links.size() <= kScanHops) {
    for (uint32_t k = 0; k < links.size(); ++k)
      if (links[k] == l && (from == kNone || p[k] == from)) {
        p[k] = to;
        return;
      }
    return;
  }
  // A long route (a pipeline's chain): its hops on l from its (link, hop) index, in hop
  // order, so the hop chosen is the one the scan above would choose.
  const std::vector<uint64_t>& index = hop_index(route);
  const uint64_t key = uint64_t{l} << 32;
  for (auto it = std::lower_bound(index.begin(), index.end(), key);
       it != index.end() && (*it >> 32) == l; ++it) {
    const auto k = static_cast<uint32_t>(*it);
    if (from == kNone || p[k] == from) {
      p[k] = to;
      return;
    }
  }
}

const std::vector<uint64_t>& FlowModel::hop_index(RouteId route) {
  if (hop_index_.size() <= route) hop_index_.resize(routes_.size());
  std::vector<uint64_t>& index = hop_index_[route];
  if (index.empty()) {
    const auto links = links_of_route(route);
    index.resize(links.size());
    for (uint32_t k = 0; k < links.size(); ++k) index[k] = uint64_t{links[k]} << 32 | k;
    std::sort(index.begin(), index.end());
  }
  return index;
}

void FlowModel::activate(FlowId f) {
  Flow& flow = flows_[f];
  flow.phase = Phase::sharing;
  flow.last_update = sim_.now();
  bool alone = true;
  const auto links = links_of(flow);
  for (uint32_t k = 0; k < links.size(); ++k) {
    Link& link = links_[links[k]];
    if (link.count == 0) {
      link.single = f;
      link.count = 1;
    } else {
      alone = false;
      attach_shared(f, k, links[k]);
    }
  }
  if (alone) {
    // Nobody else on any link: no other rate changes, no component to solve.
    // Its first rate, with nothing sent yet: no remainder to bring up to date.
    ++stats_.fast_path_updates;
    Route& route = routes_[flow.route];
    const double rate = route.bottleneck_Bps;
    const double duration = flow.remaining / rate;
    // Booked whole now, so that finish has nothing to add; end_alone takes it back if
    // another flow joins.
    route.alone_s += duration;
    flow.rate = rate;
    flow.alone = true;
    ++flow.version;
    enqueue(flow.last_update + duration, f);
  } else {
    flow.alone = false;
    for (LinkIndex l : links) {
      // The busy periods f started (the links it has to itself; twice-crossed ones got
      // theirs in attach_shared).
      if (links_[l].count == 1) period_start_[l] = flow.last_update;
      mark_dirty(l);
    }
  }
}

bool FlowModel::release_links(FlowId f) {
  Flow& flow = flows_[f];
  bool others = false;
  const auto links = links_of(flow);
  if (flow.alone) {
    // It has every link to itself (end_alone clears the flag when another flow joins), and
    // its time is in its route's alone_s already.
    for (LinkIndex l : links) links_[l] = Link{};
  } else {
    const engine::Time now = sim_.now();
    for (uint32_t k = 0; k < links.size(); ++k) {
      Link& link = links_[links[k]];
      if (link.count == 1) {
        link.count = 0;
        link.single = kNone;
        busy_s_[links[k]] += now - period_start_[links[k]];
      } else {
        others = true;
        detach_shared(f, k, links[k]);
        mark_dirty(links[k]);
      }
    }
  }
  return others;
}

void FlowModel::retire(FlowId f) {
  Flow& flow = flows_[f];
  if (!assigned_.empty())
    for (LinkIndex l : links_of(flow)) --assigned_[l];
  flow.phase = Phase::free;
  flow.observer = nullptr;
  ++flow.version;
  --active_;
}

void FlowModel::finish(FlowId f) {
  Flow& flow = flows_[f];
  const bool others = release_links(f);
  routes_[flow.route].bytes_done += flow.bytes;
  if (!others) ++stats_.fast_path_updates;
  if (flow.observer) done_.push_back({flow.observer, f, flow.tag});
  else free_flows_.push_back(f);
  retire(f);
  ++stats_.flows_completed;
}

double FlowModel::cancel(FlowId f, const FlowObserver* observer, uint64_t tag) {
  if (f >= flows_.size()) return -1;
  Flow& flow = flows_[f];
  if (flow.phase == Phase::free || flow.observer != observer || flow.tag != tag) return -1;
  double delivered = 0;
  if (flow.phase == Phase::sharing) {
    const engine::Time now = sim_.now();
    const double left = std::clamp(flow.remaining - flow.rate * (now - flow.last_update), 0.0, flow.bytes);
    delivered = flow.bytes - left;
    // An alone flow's route booked its whole expected time at activation: take back what it
    // will not run now.
    if (flow.alone) routes_[flow.route].alone_s -= left / flow.rate;
    release_links(f);
    routes_[flow.route].bytes_done += delivered;
  }
  // Its queued admission or completion goes stale with the version retire() bumps.
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

void FlowModel::mark_dirty(LinkIndex l) {
  if (!dirty_[l]) {
    dirty_[l] = 1;
    dirty_links_.push_back(l);
  }
}

void FlowModel::recompute() {
  if (dirty_links_.empty()) return;
  // The union of the components touched by this instant's changes: flows and links reachable
  // from a dirty link through shared links. Only their rates can change.
  ++epoch_;
  comp_links_.clear();
  comp_flows_.clear();
  for (LinkIndex l : dirty_links_) {
    dirty_[l] = 0;
    if (link_mark_[l] != epoch_) {
      link_mark_[l] = epoch_;
      comp_links_.push_back(l);
    }
  }
  dirty_links_.clear();
  for (std::size_t i = 0; i < comp_links_.size(); ++i) {
    for (FlowId g : flows_on(comp_links_[i])) {
      Flow& flow = flows_[g];
      if (flow.mark == epoch_) continue;
      flow.mark = epoch_;
      comp_flows_.push_back(g);
      for (const LinkIndex l : links_of(flow)) {
        if (link_mark_[l] != epoch_) {
          link_mark_[l] = epoch_;
          comp_links_.push_back(l);
        }
      }
    }
  }
  if (comp_flows_.empty()) return;
  ++stats_.recomputations;
  stats_.max_component_flows = std::max<uint64_t>(stats_.max_component_flows, comp_flows_.size());
  solve_component();
}

void FlowModel::solve_component() {
  // Progressive filling: raise every unfixed flow's rate together; the link whose residual
  // capacity per unfixed flow is smallest saturates first and fixes its flows at that share.
  // A lazy min-heap of (share, link); a link's share only grows as flows elsewhere get fixed,
  // so an entry whose share no longer matches the link's current one is stale.
  for (FlowId g : comp_flows_) flows_[g].fixed = false;
  heap_.clear();
  for (LinkIndex l : comp_links_) {
    residual_[l] = capacity_[l];
    unfixed_[l] = links_[l].count;
    if (unfixed_[l]) heap_.push_back({residual_[l] / unfixed_[l], l});
  }
  std::make_heap(heap_.begin(), heap_.end(), kLater);
  double level = 0;  // the water level never goes down; guards against rounding drift
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), kLater);
    const auto [share, l] = heap_.back();
    heap_.pop_back();
    if (unfixed_[l] == 0 || share != residual_[l] / unfixed_[l]) continue;
    level = std::max(level, share);
    for (FlowId g : flows_on(l)) {
      Flow& flow = flows_[g];
      if (flow.fixed) continue;
      flow.fixed = true;
      set_rate(g, level);
      for (const LinkIndex o : links_of(flow)) {
        residual_[o] = std::max(0.0, residual_[o] - level);
        --unfixed_[o];
        if (o != l && unfixed_[o]) {
          heap_.push_back({residual_[o] / unfixed_[o], o});
          std::push_heap(heap_.begin(), heap_.end(), kLater);
        }
      }
    }
  }
  // Every flow on a component link is in the component, so what the filling left over is
  // exactly the capacity the new rates leave unused, crossings counted.
  for (LinkIndex l : comp_links_)
    peak_util_[l] = std::max(peak_util_[l], 1.0 - residual_[l] / capacity_[l]);
}

void FlowModel::set_rate(FlowId f, double rate) {
  Flow& flow = flows_[f];
  if (rate == flow.rate) return;  // its queued completion is still right
  const engine::Time now = sim_.now();
  flow.remaining -= flow.rate * (now - flow.last_update);
  // A remainder of a trillionth of the flow is rounding, not data: finish now.
  if (flow.remaining <= flow.bytes * 1e-12) flow.remaining = 0;
  flow.last_update = now;
  flow.rate = rate;
  ++flow.version;
  enqueue(now + flow.remaining / rate, f);
}

void FlowModel::reschedule() {
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
