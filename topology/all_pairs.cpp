#include "topology/all_pairs.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "topology/routing_detail.hpp"

namespace cs::topo {

void count_route(const Topology& topology, const Route& route, std::span<uint64_t> crossings) {
  if (route.bundle.empty()) {
    for (LinkId l : route.links) ++crossings[l];
    return;
  }
  const std::size_t base = topology.num_links();
  for (std::size_t i = 0; i < route.links.size(); ++i)
    ++crossings[route.bundle[i] == kNoBundle ? route.links[i] : base + route.bundle[i]];
}

namespace {

class RouteByRoute final : public AllPairsCounter {
 public:
  RouteByRoute(const Topology& t, std::span<const int> ranks, RouteInto route_into)
      : t_(t), ranks_(ranks), route_into_(std::move(route_into)) {}

  void add_sources(std::size_t first, std::size_t last, PairLoads& into) const override {
    Route route;
    for (std::size_t i = first; i < last; ++i) {
      const int a = ranks_[i];
      for (const int b : ranks_) {
        if (a == b) continue;
        if (!route_into_(a, b, route)) throw std::logic_error("count_by_routes: the routing cannot compute routes uncached");
        count_route(t_, route, into.crossings);
        double& slowest = t_.node_of_rank(a) == t_.node_of_rank(b) ? into.max_latency_same_node_s : into.max_latency_across_s;
        slowest = std::max(slowest, route.latency_s);
      }
    }
  }

 private:
  const Topology& t_;
  std::span<const int> ranks_;
  RouteInto route_into_;
};

}  // namespace

std::unique_ptr<AllPairsCounter> count_by_routes(const Topology& topology, std::span<const int> ranks,
                                                 RouteInto route_into) {
  return std::make_unique<RouteByRoute>(topology, ranks, std::move(route_into));
}

std::unique_ptr<AllPairsCounter> detail::CachedRouter::all_pairs_counter(std::span<const int> ranks) const {
  if (ranks.size() >= 2) {
    Route probe;
    if (!route_into(ranks[0], ranks[1], 0, probe)) return nullptr;
  }
  return count_by_routes(t_, ranks, [this](int a, int b, Route& out) { return route_into(a, b, 0, out); });
}

}  // namespace cs::topo
