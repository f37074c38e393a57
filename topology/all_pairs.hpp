#pragma once
// What an all-pairs exchange puts on a fabric, counted without keeping a route: for every
// ordered pair (a, b), a != b, of a rank list, route(a, b) with flow key 0, as a router gives
// it. A direct all-to-all over 16,384 GPUs has 268 M pairs; counting them is the analytical
// model's whole cost for it (sim/network/analytical_model.hpp), so routers that know their
// structure count what pairs share once (a fat-tree: each rank's legs to and from its leaf),
// and the generic counter takes each route whole.
//
// Links are counted on "model links": the topology's links, then, at num_links + k, bundle k
// of a per-packet routing (Router::bundles(), Route::bundle), as sim/network numbers them.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "topology/routing.hpp"

namespace cs::topo {

struct PairLoads {
  std::vector<uint64_t> crossings;  // per model link: pairs crossing it (m per pair crossing it m times)
  // The slowest route (Route::latency_s) between two ranks of one node, and of two nodes;
  // -1: no such pair.
  double max_latency_same_node_s = -1;
  double max_latency_across_s = -1;
};

// Counts the pairs of one rank list, source by source. Thread-safe: one PairLoads per thread,
// added up afterwards (integer counts: the same total in any order).
class AllPairsCounter {
 public:
  virtual ~AllPairsCounter() = default;
  // Adds the pairs (ranks[i], ranks[j]), j != i, of every i in [first, last) to `into`, whose
  // crossings hold one entry per model link. Throws RouteError for an unreachable pair.
  virtual void add_sources(std::size_t first, std::size_t last, PairLoads& into) const = 0;
  // The model links of pair (ranks[i], ranks[j])'s route, i != j, appended to `out` in route
  // order: exactly the hops add_sources counts for it. `scratch` lends the call its buffers
  // (one per thread). Thread-safe. Throws RouteError for an unreachable pair. A counter may
  // keep walks for these calls, made at the first (make_leg_counter's with source classes:
  // one per class and destination, some 170 MB over 16,384 GPUs on a fat-tree).
  virtual void append_links(std::size_t i, std::size_t j, Route& scratch, std::vector<uint32_t>& out) const = 0;
  // The pairs (i, j) between nodes whose route crosses model link `link` in a rank's leg (i's
  // GPU -> NIC -> switch, or j's switch -> NIC -> GPU), ascending (a pair crossing it m times
  // there: m entries side by side), appended to `out`: true where the counter keeps such legs
  // (make_leg_counter's), known without walking a route; false (the default): not known. A
  // crossing elsewhere in a route (a pair in one node, a fabric hop) is not listed. Thread-safe.
  virtual bool append_leg_pairs(uint32_t /*link*/, std::vector<std::pair<uint32_t, uint32_t>>& /*out*/) const {
    return false;
  }
  // Per member, its source class, where the router's hops between two nodes' switches depend
  // only on the source's class and the destination (a fat-tree's D-mod-K and spray: classes
  // are leaves): pairs (i, j) and (i', j), i and i' of one class, cross the same fabric links,
  // and the counter walks them once. Empty (the default): each pair's hops are its own (ECMP
  // hashes the source's NIC, a dragonfly's minimal routing its index in the group).
  virtual std::span<const uint32_t> source_classes() const { return {}; }
};

// The generic counter: each pair's route from route_into(a, b, out), each hop counted on its
// model link; null when route_into says the routing cannot compute routes uncached (asked of
// the first pair). `ranks` must outlive the counter.
using RouteInto = std::function<bool(int src, int dst, Route& out)>;
std::unique_ptr<AllPairsCounter> count_by_routes(const Topology& topology, std::span<const int> ranks,
                                                 RouteInto route_into);

// Adds a route's hops to crossings, on their model links (a sprayed hop on its bundle).
void count_route(const Topology& topology, const Route& route, std::span<uint64_t> crossings);
// Appends a route's hops' model links to `out`, in order (a sprayed hop: its bundle's).
void append_model_links(const Topology& topology, const Route& route, std::vector<uint32_t>& out);

}  // namespace cs::topo
