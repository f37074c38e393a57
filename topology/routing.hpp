#pragma once
// Routes between GPUs. Computed on demand and cached per (source, destination, path choice),
// never as an all-pairs table. Deterministic for a given seed.
#include <cstdint>
#include <memory>
#include <vector>

#include "topology/topology.hpp"

namespace cs::topo {

struct Route {
  std::vector<LinkId> links;  // consecutive: links[i].to == links[i+1].from
  double latency_s = 0.0;     // sum of the links' latencies
};

class Router {
 public:
  virtual ~Router() = default;
  // The route from GPU `src_rank` to GPU `dst_rank`. `flow_key` identifies the flow for
  // per-flow hashing (ECMP); deterministic routings ignore it. The reference stays valid for
  // the router's lifetime. src_rank == dst_rank gives an empty route.
  virtual const Route& route(int src_rank, int dst_rank, uint64_t flow_key) = 0;
};

// dmodk and ecmp need a fat-tree; shortest works on any topology. Throws
// std::invalid_argument when the routing does not apply to the topology.
std::unique_ptr<Router> make_router(const Topology& topology, RoutingKind kind, uint64_t seed);

}  // namespace cs::topo
