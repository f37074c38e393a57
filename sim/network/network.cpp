#include "sim/network/network.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

namespace cs::net {

namespace {
// The topology's links, then each bundle as k x its slowest member: an even split saturates
// the slowest member first. In lane units: a link carries lanes x its bandwidth of lane
// crossings (Router::lanes()).
std::vector<double> capacities(const topo::Topology& topology, const topo::Router& router) {
  std::vector<double> c;
  c.reserve(topology.num_links() + router.bundles().size());
  for (const topo::Link& l : topology.links()) c.push_back(l.bandwidth_Bps);
  for (const topo::LinkBundle& b : router.bundles()) {
    double slowest = c[b.members.front()];
    for (topo::LinkId m : b.members) slowest = std::min(slowest, c[m]);
    c.push_back(slowest * static_cast<double>(b.members.size()));
  }
  if (const int lanes = router.lanes(); lanes > 1)
    for (double& x : c) x *= lanes;
  return c;
}
}  // namespace

Network::Network(engine::Simulator& sim, const topo::Topology& topology, topo::RoutingKind routing)
    : sim_(sim),
      topology_(topology),
      router_(topo::make_router(topology, routing, sim.seed())),
      capacity_(capacities(topology, *router_)),
      flows_(sim, capacity_) {
  // Load-aware routings choose a path when a flow starts, from the flows on each link.
  load_aware_ = routing == topo::RoutingKind::adaptive || routing == topo::RoutingKind::ugal ||
                routing == topo::RoutingKind::ugal_packet;
  if (load_aware_) {
    flows_.track_link_load(true);
    placed_.assign(topology.num_links(), 0);
    set_load_oracle({});
    router_->set_load_oracle([this](topo::LinkId l) { return base_oracle_(l) + placed_[l]; });
  }
}

void Network::set_load_oracle(topo::Router::LoadOracle oracle) {
  if (!load_aware_) return;
  if (!oracle) oracle = [this](topo::LinkId l) { return flows_.flows_assigned(l); };
  base_oracle_ = std::move(oracle);
}

void Network::StagePlacement::prime(int src_rank, int dst_rank, uint64_t flow_key) {
  if (!network_.load_aware_ || !network_.start_route_into(src_rank, dst_rank, flow_key, start_)) return;
  place(start_);
  ++primed_[{src_rank, dst_rank, flow_key}];
}

void Network::StagePlacement::place(const topo::Route& r) {
  placed_.insert(placed_.end(), r.links.begin(), r.links.end());  // booked first: a throw moves no count
  for (topo::LinkId l : r.links) ++network_.placed_[l];
}

const topo::Route& Network::StagePlacement::route(int src_rank, int dst_rank, uint64_t flow_key) {
  return route(src_rank, dst_rank, flow_key, nullptr);
}

const topo::Route& Network::StagePlacement::route(int src_rank, int dst_rank, uint64_t flow_key,
                                                  std::vector<int*>* consumed) {
  // A primed transfer's count stays in the map at 0, so that route_all can give it back.
  if (const auto it = primed_.find({src_rank, dst_rank, flow_key}); it != primed_.end() && it->second > 0) {
    network_.start_route_into(src_rank, dst_rank, flow_key, start_);
    unplaced_.insert(unplaced_.end(), start_.links.begin(), start_.links.end());  // booked first
    --it->second;
    if (consumed) consumed->push_back(&it->second);  // map nodes are stable; reserved by the caller
    network_.unplace(start_);
  }
  const topo::Route& r = network_.route(src_rank, dst_rank, flow_key);
  if (network_.load_aware_) place(r);
  return r;
}

void Network::StagePlacement::roll_back(const Mark& mark) noexcept {
  for (std::size_t i = placed_.size(); i > mark.placed; --i) --network_.placed_[placed_[i - 1]];
  for (std::size_t i = unplaced_.size(); i > mark.unplaced; --i) ++network_.placed_[unplaced_[i - 1]];
  placed_.resize(mark.placed);
  unplaced_.resize(mark.unplaced);
  for (int* count : mark.consumed) ++*count;
}

std::vector<const topo::Route*> Network::StagePlacement::route_all(std::span<const Endpoints> batch) {
  // Strong guarantee: a throw (the router's, its load oracle's, an allocation's) leaves the
  // placement, its primed transfers and the network's placed counts as they were, so the
  // stage can be routed again. Every count moved is booked (placed_, unplaced_) before it
  // moves, but in the rounds, which square the books at the end.
  Mark mark{placed_.size(), unplaced_.size(), {}};
  std::vector<const topo::Route*> routes, first;
  try {
    mark.consumed.reserve(batch.size());
    routes.reserve(batch.size());
    for (const Endpoints& e : batch) routes.push_back(&route(e.src_rank, e.dst_rank, e.flow_key, &mark.consumed));
  } catch (...) {
    roll_back(mark);
    throw;
  }
  const int rounds = network_.load_aware_ ? network_.router_->rounds_together() : 0;
  if (rounds == 0 || batch.size() < 2) return routes;
  // Gauss-Seidel rounds of best responses: a transfer chooses against the others' latest
  // routes. The placed counts move directly; the books are squared once at the end, first
  // route off and last route on, whatever the rounds did in between.
  std::size_t off = batch.size();  // a transfer taken off its route and on no other yet
  try {
    first = routes;
    for (int round = 0; round < rounds; ++round) {
      bool moved = false;
      for (std::size_t i = 0; i < batch.size(); ++i) {
        network_.unplace(*routes[i]);
        off = i;
        const topo::Route& r = network_.route(batch[i].src_rank, batch[i].dst_rank, batch[i].flow_key);
        for (topo::LinkId l : r.links) ++network_.placed_[l];
        off = batch.size();
        moved = moved || &r != routes[i];
        routes[i] = &r;
      }
      if (!moved) break;
    }
    std::size_t off_links = 0, on_links = 0;
    for (std::size_t i = 0; i < batch.size(); ++i)
      if (routes[i] != first[i]) {
        off_links += first[i]->links.size();
        on_links += routes[i]->links.size();
      }
    unplaced_.reserve(unplaced_.size() + off_links);  // the inserts below cannot throw
    placed_.reserve(placed_.size() + on_links);
  } catch (...) {
    // The counts back to the books (each transfer from its latest route to its first), then
    // the books back to the mark. `first` is empty if copying it threw: nothing moved then.
    for (std::size_t i = 0; i < first.size(); ++i) {
      if (i != off) network_.unplace(*routes[i]);
      for (topo::LinkId l : first[i]->links) ++network_.placed_[l];
    }
    roll_back(mark);
    throw;
  }
  for (std::size_t i = 0; i < batch.size(); ++i)
    if (routes[i] != first[i]) {
      unplaced_.insert(unplaced_.end(), first[i]->links.begin(), first[i]->links.end());
      placed_.insert(placed_.end(), routes[i]->links.begin(), routes[i]->links.end());
    }
  return routes;
}

Network::PinnedBatch::PinnedBatch(Network& network, std::span<const Endpoints> batch) : network_(network) {
  network_.pinned_.clear();
  if (!network_.load_aware_ || network_.router_->rounds_together() == 0 || batch.size() < 2) return;
  std::vector<const topo::Route*> routes;
  {
    StagePlacement placement(network_);  // off the links again when the batch is routed
    routes = placement.route_all(batch);
  }
  for (std::size_t i = 0; i < batch.size(); ++i)
    network_.pinned_[{batch[i].src_rank, batch[i].dst_rank, batch[i].flow_key}] = routes[i];
}

void Network::StagePlacement::clear() {
  for (topo::LinkId l : placed_) --network_.placed_[l];
  for (topo::LinkId l : unplaced_) ++network_.placed_[l];
  placed_.clear();
  unplaced_.clear();
  primed_.clear();
}

void Network::append_model_links(const topo::Route& route, std::vector<uint32_t>& out) const {
  topo::append_model_links(topology_, route, out);
}

topo::LinkId Network::topology_link(uint32_t model_link) const {
  const std::size_t n = topology_.num_links();
  return model_link < n ? model_link : router_->bundles()[model_link - n].members.front();
}

std::vector<double> Network::fold(std::vector<double> v, Fold how) const {
  const std::size_t n = topology_.num_links();
  const auto bundles = router_->bundles();
  for (std::size_t b = 0; b < bundles.size() && n + b < v.size(); ++b) {
    const auto& members = bundles[b].members;
    const double value = v[n + b], k = static_cast<double>(members.size());
    for (topo::LinkId m : members) switch (how) {
        case Fold::split: v[m] += value / k; break;
        case Fold::copy: v[m] = std::max(v[m], value); break;
        case Fold::scale: v[m] = std::max(v[m], value * capacity_[n + b] / (k * capacity_[m])); break;
      }
  }
  v.resize(std::min(v.size(), n));
  return v;
}

std::vector<double> Network::fold_bytes(std::vector<double> v) const {
  v = fold(std::move(v), Fold::split);
  // Lane crossings to bytes: each lane carries 1 / lanes of its flow.
  if (const int lanes = router_->lanes(); lanes > 1)
    for (double& x : v) x /= lanes;
  return v;
}
std::vector<double> Network::fold_busy(std::vector<double> v) const { return fold(std::move(v), Fold::copy); }
std::vector<double> Network::fold_utilization(std::vector<double> v) const { return fold(std::move(v), Fold::scale); }

RouteId Network::path(int src_rank, int dst_rank, uint64_t flow_key) {
  return path_of(route(src_rank, dst_rank, flow_key));
}

namespace {
// PXN's route: a then b, one after the other (bundles kept where either sprays).
void join(const topo::Route& a, const topo::Route& b, topo::Route& out) {
  out.links.assign(a.links.begin(), a.links.end());
  out.links.insert(out.links.end(), b.links.begin(), b.links.end());
  out.latency_s = a.latency_s + b.latency_s;
  out.bundle.clear();
  if (!a.bundle.empty() || !b.bundle.empty()) {
    out.bundle = a.bundle;
    out.bundle.resize(a.links.size(), topo::kNoBundle);
    out.bundle.insert(out.bundle.end(), b.bundle.begin(), b.bundle.end());
    out.bundle.resize(out.links.size(), topo::kNoBundle);
  }
}
}  // namespace

int Network::pxn_proxy(int src_rank, int dst_rank) const {
  if (!pxn_ || topology_.node_of_rank(src_rank) == topology_.node_of_rank(dst_rank)) return -1;
  const int src_nic = topology_.nic_of_local_gpu(topology_.local_of_rank(src_rank));
  const int dst_local = topology_.local_of_rank(dst_rank);
  if (src_nic == topology_.nic_of_local_gpu(dst_local)) return -1;
  return topology_.node_of_rank(src_rank) * (topology_.ranks() / topology_.nodes()) + dst_local;
}

const topo::Route& Network::route(int src_rank, int dst_rank, uint64_t flow_key) {
  if (!pinned_.empty())
    if (const auto it = pinned_.find({src_rank, dst_rank, flow_key}); it != pinned_.end()) return *it->second;
  const int proxy = pxn_proxy(src_rank, dst_rank);
  if (proxy < 0) return router_->route(src_rank, dst_rank, flow_key);
  const uint64_t pair = uint64_t{static_cast<uint32_t>(src_rank)} << 32 | static_cast<uint32_t>(dst_rank);
  auto& by_key = proxied_[pair];
  if (const auto it = by_key.find(flow_key); it != by_key.end()) return it->second;
  topo::Route joined;
  join(router_->route(src_rank, proxy, flow_key), router_->route(proxy, dst_rank, flow_key), joined);
  return by_key.emplace(flow_key, std::move(joined)).first->second;
}

template <class Leg>
bool Network::uncached_route(int src_rank, int dst_rank, topo::Route& out, const Leg& leg) const {
  const int proxy = pxn_proxy(src_rank, dst_rank);
  if (proxy < 0) return leg(src_rank, dst_rank, out);
  topo::Route first, second;
  if (!leg(src_rank, proxy, first) || !leg(proxy, dst_rank, second)) return false;
  join(first, second, out);
  return true;
}

bool Network::route_into(int src_rank, int dst_rank, uint64_t flow_key, topo::Route& out) const {
  return uncached_route(src_rank, dst_rank, out, [&](int a, int b, topo::Route& r) {
    return router_->route_into(a, b, flow_key, r);
  });
}

bool Network::place_into(int src_rank, int dst_rank, uint64_t flow_key, topo::Route& out) {
  if (!load_aware_ || !uncached_route(src_rank, dst_rank, out, [&](int a, int b, topo::Route& r) {
        return router_->choose_into(a, b, flow_key, r);
      }))
    return false;
  for (topo::LinkId l : out.links) ++placed_[l];
  return true;
}

void Network::unplace(std::span<const uint64_t> count) {
  if (!load_aware_) return;
  for (std::size_t l = 0; l < count.size() && l < placed_.size(); ++l) placed_[l] -= static_cast<uint32_t>(count[l]);
}

void Network::unplace(const topo::Route& route) {
  if (!load_aware_) return;
  for (topo::LinkId l : route.links) --placed_[l];
}

bool Network::start_route_into(int src_rank, int dst_rank, uint64_t flow_key, topo::Route& out) const {
  return uncached_route(src_rank, dst_rank, out, [&](int a, int b, topo::Route& r) {
    return router_->start_route_into(a, b, flow_key, r);
  });
}

std::optional<topo::PairLoads> Network::place_start_routes(std::span<const int> ranks) {
  topo::Route probe;
  if (!load_aware_ || ranks.size() < 2 || !start_route_into(ranks[0], ranks[1], 0, probe)) return std::nullopt;
  const std::unique_ptr<topo::AllPairsCounter> counter =
      pxn_ ? topo::count_by_routes(topology_, ranks,
                                   [this](int a, int b, topo::Route& out) { return start_route_into(a, b, 0, out); })
           : router_->start_pairs_counter(ranks);
  topo::PairLoads start = count_all_pairs(ranks, *counter);
  // Start routes never spray: model links are the topology's.
  for (std::size_t l = 0; l < placed_.size(); ++l) placed_[l] += static_cast<uint32_t>(start.crossings[l]);
  return start;
}

namespace {
// Pairs searched for a leaver on the calling thread before the search goes to every core.
constexpr std::size_t kSerialLeaverSearch = 4096;
}  // namespace

std::size_t Network::first_leaving_start(std::span<const int> ranks, std::size_t from) {
  const std::size_t n = ranks.size(), pairs = n * n;
  // With PXN a pair's route is two router routes chosen apart: every pair chooses in turn.
  if (pxn_) return from;
  // The next few pairs on this thread first: where leavers come close together (a UGAL
  // all-to-all at 16,384 GPUs has ~0.5 M), a parallel pass per leaver costs more in starting
  // threads and in pairs checked past the leaver than the leaver's search. Then windows of
  // pairs checked on every core, doubling from a row: none costs one pass over the rest.
  topo::Route serial_route;
  const std::size_t serial_end = std::min(pairs, from + kSerialLeaverSearch);
  for (std::size_t p = from; p < serial_end; ++p)
    if (!router_->keeps_start_route(ranks[p / n], ranks[p % n], 0, serial_route)) return p;
  std::atomic<std::size_t> first{pairs};
  tbb::enumerable_thread_specific<topo::Route> scratch;
  for (std::size_t begin = serial_end, width = std::max<std::size_t>(n, 1); begin < pairs; begin += width, width *= 2) {
    const std::size_t end = std::min(pairs, begin + width);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(begin, end), [&](const tbb::blocked_range<std::size_t>& range) {
      topo::Route& route = scratch.local();
      for (std::size_t p = range.begin(); p < range.end() && p < first.load(std::memory_order_relaxed); ++p)
        if (!router_->keeps_start_route(ranks[p / n], ranks[p % n], 0, route)) {
          std::size_t seen = first.load(std::memory_order_relaxed);
          while (p < seen && !first.compare_exchange_weak(seen, p)) {
          }
          break;
        }
    });
    if (first.load() < pairs) break;
  }
  return first.load();
}

std::unique_ptr<topo::AllPairsCounter> Network::all_pairs_counter(std::span<const int> ranks) const {
  if (!pxn_) return router_->all_pairs_counter(ranks);
  return topo::count_by_routes(topology_, ranks, [this](int a, int b, topo::Route& out) { return route_into(a, b, 0, out); });
}

std::optional<topo::PairLoads> Network::count_all_pairs(std::span<const int> ranks) {
  const std::unique_ptr<topo::AllPairsCounter> counter = all_pairs_counter(ranks);
  if (!counter) return std::nullopt;
  return count_all_pairs(ranks, *counter);
}

std::optional<topo::PairLoads> Network::count_chosen_pairs(std::span<const int> ranks) {
  if (!load_aware_ || pxn_) return std::nullopt;
  const std::unique_ptr<topo::AllPairsCounter> counter = router_->choosing_pairs_counter(ranks);
  if (!counter) return std::nullopt;
  topo::PairLoads loads;
  loads.crossings.assign(model_links(), 0);
  // Sources in 64 pieces (or one by one): a piece's count ends with a pass over every rank's
  // legs, so a piece per source would add a pass per source (16,384 at 16,384 GPUs).
  const std::size_t n = ranks.size(), piece = std::max<std::size_t>(1, n / 64);
  for (std::size_t i = 0; i < n; i += piece) {
    sim_.poll_interrupt();
    counter->add_sources(i, std::min(n, i + piece), loads);
  }
  return loads;
}

topo::PairLoads Network::count_all_pairs(std::span<const int> ranks, const topo::AllPairsCounter& counter) {
  const std::size_t n = ranks.size(), num_links = model_links();
  tbb::enumerable_thread_specific<topo::PairLoads> locals([&] {
    topo::PairLoads l;
    l.crossings.assign(num_links, 0);
    return l;
  });
  // A route error (an unreachable pair) is reported for the lowest source, whatever the threads.
  // An interrupt (Ctrl-C in Python) stops the pieces not yet begun.
  std::mutex error_mutex;
  std::size_t error_at = n;
  std::exception_ptr error;
  std::atomic<bool> interrupted{false};
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n), [&](const tbb::blocked_range<std::size_t>& sources) {
    if (interrupted.load(std::memory_order_relaxed)) return;
    try {
      sim_.poll_interrupt();
      counter.add_sources(sources.begin(), sources.end(), locals.local());
    } catch (const engine::Interrupted&) {
      interrupted = true;
    } catch (...) {
      const std::lock_guard lock(error_mutex);
      if (sources.begin() < error_at) error_at = sources.begin(), error = std::current_exception();
    }
  });
  if (interrupted) throw engine::Interrupted();
  if (error) std::rethrow_exception(error);
  topo::PairLoads total;
  total.crossings.assign(num_links, 0);
  for (const topo::PairLoads& l : locals) {
    for (std::size_t i = 0; i < num_links; ++i) total.crossings[i] += l.crossings[i];
    total.max_latency_same_node_s = std::max(total.max_latency_same_node_s, l.max_latency_same_node_s);
    total.max_latency_across_s = std::max(total.max_latency_across_s, l.max_latency_across_s);
  }
  return total;
}

RouteId Network::path_of(const topo::Route& r) {
  // Routers cache routes and hand out stable references, so the address identifies a route.
  auto [it, inserted] = paths_.try_emplace(&r, 0);
  if (inserted) {
    std::vector<uint32_t> links;
    append_model_links(r, links);
    it->second = flows_.add_route(links, r.latency_s);
  }
  return it->second;
}

RouteId Network::chain_path(std::span<const topo::Route* const> routes) {
  std::vector<const topo::Route*> key(routes.begin(), routes.end());
  if (const auto it = chains_.find(key); it != chains_.end()) return it->second;
  std::vector<topo::LinkId> links;
  for (const topo::Route* r : routes) append_model_links(*r, links);
  const RouteId id = flows_.add_route(links, 0.0);
  chains_.emplace(std::move(key), id);
  return id;
}

RouteId Network::chain_path(std::span<const std::pair<int, int>> pairs) {
  std::vector<topo::LinkId> links;
  for (const auto& [src, dst] : pairs) {
    append_model_links(route(src, dst, 0), links);
  }
  return flows_.add_route(links, 0.0);
}

}  // namespace cs::net
