// Routing on a degraded direct network (a dragonfly with failed cables; topology/failures.hpp):
// the family's router routes as on the intact fabric, and a route it gives that crosses a
// failed cable is replaced, between the same two NICs, by a fewest-hop path over live cables,
// ties spread by a hash of the pair: the minimal routing tables a fabric manager recomputes
// over the surviving links (Slingshot's and Aries's routing tables after a link goes down),
// ECMP over the equal ones. The load-aware routings (ugal) see a failed cable as full, so
// they take their live alternative first.
#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "topology/routing_detail.hpp"

namespace cs::topo::detail {
namespace {

class RepairingRouter final : public CachedRouter {
 public:
  RepairingRouter(const Topology& t, std::unique_ptr<Router> inner, uint64_t seed)
      : CachedRouter(t), inner_(std::move(inner)), seed_mix_(mix64(seed ^ 0x5eedfa11ull)), switch_of_(t.num_vertices(), -1) {
    for (VertexId v = 0; v < t.num_vertices(); ++v)
      if (t.vertex(v).kind == VertexKind::fabric_switch) {
        switch_of_[v] = static_cast<int>(switches_.size());
        switches_.push_back(v);
      }
  }

  const Route& route(int src, int dst, uint64_t flow_key) override {
    const Route& r = inner_->route(src, dst, flow_key);
    if (live(r)) return r;
    // One repair per route of the inner router (a pair has several under ugal and
    // ugal_packet, each cached there, so its address names it).
    if (const auto it = repaired_.find(&r); it != repaired_.end()) return it->second;
    Route fixed = r;
    repair(src, dst, fixed);
    return repaired_.emplace(&r, std::move(fixed)).first->second;
  }
  bool route_into(int src, int dst, uint64_t flow_key, Route& out) const override {
    if (!inner_->route_into(src, dst, flow_key, out)) return false;
    if (!live(out)) repair(src, dst, out);
    return true;
  }
  bool choose_into(int src, int dst, uint64_t flow_key, Route& out) override {
    if (!inner_->choose_into(src, dst, flow_key, out)) return false;
    if (!live(out)) repair(src, dst, out);
    return true;
  }
  void set_load_oracle(LoadOracle oracle) override {
    if (!oracle) return inner_->set_load_oracle({});
    inner_->set_load_oracle([this, oracle = std::move(oracle)](LinkId l) { return t_.failed(l) ? kFailedLoad : oracle(l); });
  }
  std::span<const LinkBundle> bundles() const override { return inner_->bundles(); }
  int lanes() const override { return inner_->lanes(); }
  int rounds_together() const override { return inner_->rounds_together(); }
  // CachedRouter's: route by route, through route_into above.

 private:
  // As full as a link can look to a load-aware routing, without overflowing its (q + 1) x
  // hops costs.
  static constexpr uint32_t kFailedLoad = 1u << 30;

  bool live(std::span<const LinkId> links) const {
    return std::none_of(links.begin(), links.end(), [&](LinkId l) { return t_.failed(l); });
  }
  bool live(const Route& r) const { return live(r.links); }

  // Repairs each lane of `r` (Route::links: one path, or a routing's several lanes, each
  // from the source GPU) that crosses a failed cable; the latency is the slowest lane's.
  void repair(int src, int dst, Route& r) const {
    const VertexId gpu = t_.gpu(src);
    std::vector<LinkId> links, lane;
    double slowest = 0;
    for (std::size_t i = 0; i <= r.links.size(); ++i) {
      if (i < r.links.size() && (lane.empty() || t_.link(r.links[i]).from != gpu)) {
        lane.push_back(r.links[i]);
        continue;
      }
      if (!live(lane)) repair_lane(src, dst, lane);
      double latency_s = 0;
      for (LinkId l : lane) latency_s += t_.link(l).latency_s;
      slowest = std::max(slowest, latency_s);
      links.insert(links.end(), lane.begin(), lane.end());
      lane.clear();
      if (i < r.links.size()) lane.push_back(r.links[i]);
    }
    r.links = std::move(links);
    r.bundle.clear();
    r.latency_s = slowest;
  }

  // Replaces the switch-to-switch part of one path (between the NIC's cable up and the cable
  // down to the destination's NIC; the failures never cut a NIC: failures.cpp) by a fewest-hop
  // live path.
  void repair_lane(int src, int dst, std::vector<LinkId>& lane) const {
    const auto is_nic = [&](VertexId v) { return t_.vertex(v).kind == VertexKind::nic; };
    std::size_t up = 0, down = lane.size();
    while (up < lane.size() && !is_nic(t_.link(lane[up]).from)) ++up;
    while (down > 0 && !is_nic(t_.link(lane[down - 1]).to)) --down;
    if (up >= lane.size() || down == 0 || down - 1 <= up)
      throw RouteError("a route crosses a failed cable outside the fabric");
    const VertexId from = t_.link(lane[up]).to, to = t_.link(lane[down - 1]).from;
    std::vector<LinkId> path;
    const auto dist = distances_to(to);
    const uint64_t pair = mix64(seed_mix_ ^ ((static_cast<uint64_t>(src) << 32) | static_cast<uint32_t>(dst)));
    std::vector<LinkId> next;
    for (VertexId v = from; v != to;) {
      const int here = (*dist)[static_cast<std::size_t>(switch_of_[v])];
      if (here < 0)
        throw RouteError("no live path from " + t_.vertex(from).name + " to " + t_.vertex(to).name + " (topology.failed)");
      next.clear();
      for (LinkId l : t_.out_links(v)) {
        const int w = switch_of_[t_.link(l).to];
        if (w >= 0 && !t_.failed(l) && (*dist)[static_cast<std::size_t>(w)] == here - 1) next.push_back(l);
      }
      const LinkId l = next[mix64(pair + path.size()) % next.size()];
      path.push_back(l);
      v = t_.link(l).to;
    }
    std::vector<LinkId> links(lane.begin(), lane.begin() + static_cast<std::ptrdiff_t>(up + 1));
    links.insert(links.end(), path.begin(), path.end());
    links.insert(links.end(), lane.begin() + static_cast<std::ptrdiff_t>(down - 1), lane.end());
    lane = std::move(links);
  }

  // Hops from every switch to switch `to` over live switch-to-switch cables (-1: none), one
  // breadth-first search per destination switch, kept (thread-safe: route_into runs on
  // several threads).
  std::shared_ptr<const std::vector<int>> distances_to(VertexId to) const {
    std::lock_guard lock(mutex_);
    auto& slot = distances_[to];
    if (slot) return slot;
    auto dist = std::make_shared<std::vector<int>>(switches_.size(), -1);
    std::deque<VertexId> queue{to};
    (*dist)[static_cast<std::size_t>(switch_of_[to])] = 0;
    while (!queue.empty()) {
      const VertexId v = queue.front();
      queue.pop_front();
      const int d = (*dist)[static_cast<std::size_t>(switch_of_[v])];
      for (LinkId l : t_.out_links(v)) {
        const int w = switch_of_[t_.link(l).to];
        if (w < 0 || t_.failed(l) || (*dist)[static_cast<std::size_t>(w)] >= 0) continue;
        (*dist)[static_cast<std::size_t>(w)] = d + 1;
        queue.push_back(t_.link(l).to);
      }
    }
    slot = std::move(dist);
    return slot;
  }

  std::unique_ptr<Router> inner_;
  std::unordered_map<const Route*, Route> repaired_;  // by the inner router's route
  uint64_t seed_mix_;
  std::vector<int> switch_of_;       // vertex -> switch index, -1 for the rest
  std::vector<VertexId> switches_;
  mutable std::mutex mutex_;
  mutable std::map<VertexId, std::shared_ptr<const std::vector<int>>> distances_;
};

}  // namespace

std::unique_ptr<Router> make_repairing_router(const Topology& t, std::unique_ptr<Router> inner, uint64_t seed) {
  return std::make_unique<RepairingRouter>(t, std::move(inner), seed);
}

}  // namespace cs::topo::detail
