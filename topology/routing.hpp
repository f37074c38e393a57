#pragma once
// Routes between GPUs. Computed on demand and cached per (source, destination, path choice),
// never as an all-pairs table. Deterministic for a given seed.
//
// Every route goes from the source GPU vertex to the destination GPU vertex:
//   same rank: empty; same node: GPU -> node switch -> GPU;
//   different nodes: GPU -> its affine NIC (nvswitch nodes: the direct PCIe link; pcie nodes:
//   via the host) -> fabric -> the destination GPU's affine NIC -> GPU.
// `shortest` may leave or enter a node through any NIC reachable without crossing another GPU
// (fewest hops wins; ties go to the first vertex discovered in out-link order).
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "topology/topology.hpp"

namespace cs::topo {

struct Route {
  std::vector<LinkId> links;  // consecutive: links[i].to == links[i+1].from
  double latency_s = 0.0;     // sum of the links' latencies
};

// No path joins two GPUs (a custom fabric that leaves a node unconnected).
class RouteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Not thread-safe: route() fills a cache. Use one router per thread of simulation.
class Router {
 public:
  virtual ~Router() = default;
  // The route from GPU `src_rank` to GPU `dst_rank`. `flow_key` identifies the flow for
  // per-flow hashing (ECMP); deterministic routings ignore it. The reference stays valid for
  // the router's lifetime. src_rank == dst_rank gives an empty route.
  // Throws std::out_of_range for a rank outside [0, ranks()), RouteError when unreachable.
  virtual const Route& route(int src_rank, int dst_rank, uint64_t flow_key) = 0;
};

// dmodk and ecmp need a fat-tree; shortest works on any topology. Throws
// std::invalid_argument when the routing does not apply to the topology.
// The router keeps a reference to `topology`, which must outlive it.
//   dmodk:    spine = down-port of the destination NIC on its leaf, mod spines.
//   ecmp:     spine = SplitMix64 hash of (source NIC, destination NIC, flow_key, seed) mod spines.
//   shortest: Boost.Graph BFS, fewest hops, transit only through fabric switches and the
//             source and destination nodes' NICs and node switches.
std::unique_ptr<Router> make_router(const Topology& topology, RoutingKind kind, uint64_t seed);

}  // namespace cs::topo
