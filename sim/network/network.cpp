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
    set_load_oracle({});
  }
}

void Network::set_load_oracle(topo::Router::LoadOracle oracle) {
  if (!load_aware_) return;
  if (!oracle) oracle = [this](topo::LinkId l) { return flows_.flows_assigned(l); };
  router_->set_load_oracle(std::move(oracle));
}

RouteId Network::path(int src_rank, int dst_rank, uint64_t flow_key) {
  // Routers cache routes and hand out stable references, so the address identifies a route.
  const topo::Route& r = router_->route(src_rank, dst_rank, flow_key);
  auto [it, inserted] = paths_.try_emplace(&r, 0);
  if (inserted) it->second = flows_.add_route(r.links, r.latency_s);
  return it->second;
}

RouteId Network::chain_path(std::span<const std::pair<int, int>> pairs) {
  std::vector<topo::LinkId> links;
  for (const auto& [src, dst] : pairs) {
    const topo::Route& r = router_->route(src, dst, 0);
    links.insert(links.end(), r.links.begin(), r.links.end());
  }
  return flows_.add_route(links, 0.0);
}

}  // namespace cs::net
