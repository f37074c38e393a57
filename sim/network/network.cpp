#include "sim/network/network.hpp"

#include <vector>

namespace cs::net {

namespace {
std::vector<double> capacities(const topo::Topology& topology) {
  std::vector<double> c;
  c.reserve(topology.num_links());
  for (const topo::Link& l : topology.links()) c.push_back(l.bandwidth_Bps);
  return c;
}
}  // namespace

Network::Network(engine::Simulator& sim, const topo::Topology& topology, topo::RoutingKind routing)
    : sim_(sim),
      topology_(topology),
      router_(topo::make_router(topology, routing, sim.seed())),
      flows_(sim, capacities(topology)) {
  // Load-aware routings choose a path when a flow starts, from the flows on each link.
  load_aware_ = routing == topo::RoutingKind::adaptive || routing == topo::RoutingKind::ugal;
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

const topo::Route& Network::StagePlacement::route(int src_rank, int dst_rank, uint64_t flow_key) {
  const topo::Route& r = network_.route(src_rank, dst_rank, flow_key);
  if (network_.load_aware_)
    for (topo::LinkId l : r.links) {
      ++network_.placed_[l];
      placed_.push_back(l);
    }
  return r;
}

void Network::StagePlacement::clear() {
  for (topo::LinkId l : placed_) --network_.placed_[l];
  placed_.clear();
}

RouteId Network::path(int src_rank, int dst_rank, uint64_t flow_key) {
  return path_of(route(src_rank, dst_rank, flow_key));
}

const topo::Route& Network::route(int src_rank, int dst_rank, uint64_t flow_key) {
  if (!pxn_ || topology_.node_of_rank(src_rank) == topology_.node_of_rank(dst_rank))
    return router_->route(src_rank, dst_rank, flow_key);
  const int src_nic = topology_.nic_of_local_gpu(topology_.local_of_rank(src_rank));
  const int dst_local = topology_.local_of_rank(dst_rank);
  if (src_nic == topology_.nic_of_local_gpu(dst_local)) return router_->route(src_rank, dst_rank, flow_key);
  const uint64_t pair = uint64_t{static_cast<uint32_t>(src_rank)} << 32 | static_cast<uint32_t>(dst_rank);
  auto& by_key = proxied_[pair];
  if (const auto it = by_key.find(flow_key); it != by_key.end()) return it->second;
  const int proxy = topology_.node_of_rank(src_rank) * (topology_.ranks() / topology_.nodes()) + dst_local;
  const topo::Route& a = router_->route(src_rank, proxy, flow_key);
  const topo::Route& b = router_->route(proxy, dst_rank, flow_key);
  topo::Route joined;
  joined.links = a.links;
  joined.links.insert(joined.links.end(), b.links.begin(), b.links.end());
  joined.latency_s = a.latency_s + b.latency_s;
  return by_key.emplace(flow_key, std::move(joined)).first->second;
}

RouteId Network::path_of(const topo::Route& r) {
  // Routers cache routes and hand out stable references, so the address identifies a route.
  auto [it, inserted] = paths_.try_emplace(&r, 0);
  if (inserted) it->second = flows_.add_route(r.links, r.latency_s);
  return it->second;
}

RouteId Network::chain_path(std::span<const topo::Route* const> routes) {
  std::vector<const topo::Route*> key(routes.begin(), routes.end());
  if (const auto it = chains_.find(key); it != chains_.end()) return it->second;
  std::vector<topo::LinkId> links;
  for (const topo::Route* r : routes) links.insert(links.end(), r->links.begin(), r->links.end());
  const RouteId id = flows_.add_route(links, 0.0);
  chains_.emplace(std::move(key), id);
  return id;
}

RouteId Network::chain_path(std::span<const std::pair<int, int>> pairs) {
  std::vector<topo::LinkId> links;
  for (const auto& [src, dst] : pairs) {
    const topo::Route& r = route(src, dst, 0);
    links.insert(links.end(), r.links.begin(), r.links.end());
  }
  return flows_.add_route(links, 0.0);
}

}  // namespace cs::net
