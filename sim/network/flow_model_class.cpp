// The flow model's classes: the sharing flows of one route as a processor-sharing queue with a
// virtual clock (flow_model.hpp), and the per-link lists they sit in.
#include <algorithm>

#include "common/free_slots.hpp"
#include "sim/network/flow_model.hpp"
#include "sim/network/flow_model_state.hpp"

namespace cs::net {

namespace {

// Min-heap order of a class's queue: smallest finish tag first, then the lower flow id, so
// flows finishing at one instant are told in a fixed order.
bool later(const auto& a, const auto& b) { return a.finish > b.finish || (a.finish == b.finish && a.flow > b.flow); }

}  // namespace

void FlowModel::advance(Class& c) {
  c.vtime = vtime_now(c);
  c.vtime_at = sim_.now();
}

const FlowModel::Waiting* FlowModel::first_waiting(Class& c) {
  while (!c.queue.empty()) {
    const Waiting& w = c.queue.front();
    const Flow& f = flows_[w.flow];
    if (f.version == w.version && f.phase == Phase::sharing) return &w;
    std::pop_heap(c.queue.begin(), c.queue.end(), [](const Waiting& a, const Waiting& b) { return later(a, b); });
    c.queue.pop_back();  // a cancelled flow's entry
  }
  return nullptr;
}

void FlowModel::queue_completion(uint32_t c) {
  Class& k = classes_[c];
  drop_queued(k);
  ++k.version;
  k.reschedule = false;
  const Waiting* w = first_waiting(k);
  if (!w || !(k.rate > 0)) return;
  const engine::Time now = sim_.now();
  // A completion time beyond the representable (a rate so small that bytes / rate overflows)
  // is never: the flow does not finish, and its driver reports it, rather than an infinite
  // or wrapped-around time finishing it early.
  const engine::Time t = now + (w->finish - vtime_now(k)) / k.rate;
  if (!std::isfinite(t)) return;
  k.bucket = enqueue(std::max(t, now), kClassBit | c, k.version);
  k.bucket_generation = buckets_[k.bucket].generation;
}

uint32_t FlowModel::new_class(RouteId route) {
  const uint32_t c = take_slot(classes_, free_classes_);
  if (c == class_pos_.size()) class_pos_.emplace_back();  // a new slot: its hops' positions too
  Class& k = classes_[c];
  k.route = route;
  k.n = 0;
  k.alone = k.fixed = k.reschedule = false;
  k.rate = k.vtime = 0;
  k.vtime_at = sim_.now();
  k.queue.clear();
  drop_queued(k);
  ++k.version;  // entries of the slot's previous class stay stale
  routes_[route].cls = c;
  return c;
}

void FlowModel::activate(FlowId f) {
  Flow& flow = flows_[f];
  flow.phase = Phase::sharing;
  if (const uint32_t existing = routes_[flow.route].cls; existing != kNone) {
    join(f, existing);
    return;
  }
  const uint32_t c = new_class(flow.route);
  Class& k = classes_[c];
  bool alone = true;
  const auto links = links_of_route(flow.route);
  for (uint32_t hop = 0; hop < links.size(); ++hop) {
    Link& link = links_[links[hop]];
    ++link_flows_[links[hop]];
    if (link.count == 0) {
      link.single = c;
      link.count = 1;
    } else {
      alone = false;
      attach_shared(c, hop, links[hop]);
    }
  }
  k.n = 1;
  flow.finish = flow.bytes;  // the clock of a new class starts at 0
  k.queue.push_back({flow.finish, f, flow.version});
  if (alone) {
    // Nobody else on any link: no other rate changes, no component to solve.
    ++stats_.fast_path_updates;
    Route& route = routes_[flow.route];
    k.rate = route.bottleneck_Bps;
    k.alone = true;
    // Booked whole now, so that the finish has nothing to add; end_alone takes it back if
    // another flow joins.
    route.alone_s += flow.bytes / k.rate;
    queue_completion(c);
    return;
  }
  for (LinkIndex l : links) {
    // The busy periods it started (the links it has to itself; twice-crossed ones got theirs
    // in attach_shared).
    if (links_[l].count == 1) period_start_[l] = k.vtime_at;
    mark_dirty(l);
  }
  k.reschedule = true;
  joined_links(flow.route);
}

void FlowModel::joined_links(RouteId route) {
  for (const LinkIndex l : links_of_route(route)) lower_solve_from(capacity_[l] / link_flows_[l]);
}

void FlowModel::join(FlowId f, uint32_t c) {
  Flow& flow = flows_[f];
  if (classes_[c].alone) end_alone(c);
  Class& k = classes_[c];
  advance(k);
  flow.finish = k.vtime + flow.bytes;
  k.queue.push_back({flow.finish, f, flow.version});
  std::push_heap(k.queue.begin(), k.queue.end(), [](const Waiting& a, const Waiting& b) { return later(a, b); });
  ++k.n;
  for (LinkIndex l : links_of(k)) ++link_flows_[l];
  touch_links(c);
  joined_links(k.route);
}

void FlowModel::touch_links(uint32_t c) {
  Class& k = classes_[c];
  for (LinkIndex l : links_of(k)) mark_dirty(l);
  k.reschedule = true;
}

void FlowModel::leave(FlowId f) {
  const uint32_t c = routes_[flows_[f].route].cls;
  Class& k = classes_[c];
  if (!k.alone) lower_solve_from(k.rate);
  --k.n;
  for (LinkIndex l : links_of(k)) --link_flows_[l];
  if (k.n == 0) release(c);
  else touch_links(c);  // the others take its share at this instant's solve
}

void FlowModel::complete_due(uint32_t c) {
  Class& k = classes_[c];
  const engine::Time now = sim_.now();
  const double v = vtime_now(k);
  bool finished = false;
  while (const Waiting* w = first_waiting(k)) {
    const FlowId f = w->flow;
    Flow& flow = flows_[f];
    const double left = w->finish - v;
    // Due: a trillionth of the flow left is rounding, not data; so is a remainder that the
    // same-instant tolerance covers, or one too small to move the clock.
    if (!(left <= flow.bytes * 1e-12 || left <= k.rate * now * kSameInstantRel || !(now + left / k.rate > now))) break;
    std::pop_heap(k.queue.begin(), k.queue.end(), [](const Waiting& a, const Waiting& b) { return later(a, b); });
    k.queue.pop_back();
    finished = true;
    routes_[flow.route].bytes_done += flow.bytes;
    --k.n;
    for (LinkIndex l : links_of(k)) --link_flows_[l];
    if (flow.observer) done_.push_back({flow.observer, f, flow.tag});
    else free_flows_.push_back(f);
    retire(f);
    ++stats_.flows_completed;
  }
  if (finished && !k.alone) lower_solve_from(k.rate);
  if (k.n == 0) release(c);
  else if (finished) touch_links(c);  // fewer flows: the class is re-solved at this instant
  else queue_completion(c);           // its first flow was cancelled: the next one's time
}

void FlowModel::release(uint32_t c) {
  Class& k = classes_[c];
  const auto links = links_of(k);
  bool others = false;
  if (k.alone) {
    // It has every link to itself (end_alone clears the flag when another flow joins), and
    // its time is in its route's alone_s already.
    for (LinkIndex l : links) links_[l] = Link{};
  } else {
    const engine::Time now = sim_.now();
    for (uint32_t hop = 0; hop < links.size(); ++hop) {
      Link& link = links_[links[hop]];
      if (link.count == 1) {
        link.count = 0;
        link.single = kNone;
        busy_s_[links[hop]] += now - period_start_[links[hop]];
      } else {
        others = true;
        detach_shared(c, hop, links[hop]);
        mark_dirty(links[hop]);
      }
    }
  }
  if (!others) ++stats_.fast_path_updates;
  routes_[k.route].cls = kNone;
  k.alone = false;
  k.queue.clear();
  drop_queued(k);
  ++k.version;
  free_classes_.push_back(c);
}

void FlowModel::attach_shared(uint32_t c, uint32_t hop, LinkIndex l) {
  Link& link = links_[l];
  if (link.single == c) period_start_[l] = sim_.now();  // c crosses l twice; started it now
  else if (link.count == 1 && classes_[link.single].alone) end_alone(link.single);
  auto& list = list_of(l);
  if (link.count == 1) {
    // Second entry: from here on the link keeps a list, and classes their positions in it.
    list.assign(1, link.single);
    set_pos(link.single, l, kNone, 0);
    link.single = kNone;
  }
  auto& pos = class_pos_[c];
  const uint32_t n = routes_[classes_[c].route].count;
  if (pos.size() < n) pos.resize(n);
  pos[hop] = static_cast<uint32_t>(list.size());
  list.push_back(c);
  ++link.count;
}

void FlowModel::detach_shared(uint32_t c, uint32_t hop, LinkIndex l) {
  Link& link = links_[l];
  auto& list = lists_[link_list_[l]];
  const uint32_t pos = class_pos_[c][hop];
  const uint32_t moved = list.back();
  const auto last = static_cast<uint32_t>(list.size() - 1);
  list[pos] = moved;
  list.pop_back();
  // This hop has left: its position must not match again. (A route crossing l three times
  // detaches hop by hop; a stale position equal to a later `last` would take the update
  // meant for the hop that moved, and the list would lose a class and keep a released one.)
  class_pos_[c][hop] = kNone;
  // The moved entry may be another hop of c itself (a route that crosses l twice).
  if (last != pos) set_pos(moved, l, last, pos);
  if (--link.count == 1) {
    link.single = list.front();
    list.clear();
  }
}

void FlowModel::end_alone(uint32_t c) {
  Class& k = classes_[c];
  k.alone = false;
  Route& route = routes_[k.route];
  // Its links' busy periods continue, from its activation, as periods of their own: take
  // back the whole booking (the same quotient activate added, so a class joined at once
  // leaves alone_s exactly as it was). Alone, it has one flow and its clock has not moved.
  route.alone_s -= (k.queue.front().finish - k.vtime) / k.rate;
  // Zero time alone (joined at its activation instant) is no use of the links.
  const bool used = sim_.now() > k.vtime_at;
  for (LinkIndex l : links_of(k)) {
    period_start_[l] = k.vtime_at;
    if (used) peak_util_[l] = std::max(peak_util_[l], route.bottleneck_Bps / capacity_[l]);
  }
}

void FlowModel::set_pos(uint32_t c, LinkIndex l, uint32_t from, uint32_t to) {
  const RouteId route = classes_[c].route;
  const auto links = links_of_route(route);
  auto& p = class_pos_[c];
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
  for (auto it = std::lower_bound(index.begin(), index.end(), key); it != index.end() && (*it >> 32) == l; ++it) {
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

}  // namespace cs::net
