#pragma once
// Routes between GPUs. Computed on demand and cached per (source, destination, path choice),
// never as an all-pairs table. Deterministic for a given seed.
//
// Every route goes from the source GPU vertex to the destination GPU vertex:
//   same rank: empty; same node: GPU -> node switch -> GPU (nvlink_mesh nodes: the direct
//   NVLink, else a fewest-hop path through the node's other GPUs, the only routes on which a
//   GPU forwards);
//   different nodes: GPU -> its affine NIC (nvswitch nodes: the direct PCIe link; pcie nodes:
//   via the host) -> fabric -> the destination GPU's affine NIC -> GPU.
// `shortest` may leave or enter a node through any NIC reachable without crossing another GPU
// (fewest hops wins; ties go to the first vertex discovered in out-link order).
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "topology/topology.hpp"

namespace cs::topo {

class AllPairsCounter;  // all_pairs.hpp

// Links over which a per-packet routing spreads one hop of a flow's traffic evenly (spray).
struct LinkBundle {
  std::vector<LinkId> members;  // at least 2, ascending
};
inline constexpr uint32_t kNoBundle = ~0u;

struct Route {
  // Consecutive (links[i].to == links[i+1].from), or, under a routing of several lanes
  // (Router::lanes() = D > 1), D paths one after another, each from the source GPU to the
  // destination GPU: the D equal parts the flow's packets are spread over. A link then weighs
  // (the lanes crossing it) / D of the flow's bytes: its weight on the route.
  std::vector<LinkId> links;
  double latency_s = 0.0;     // sum of the links' latencies (several lanes: the slowest lane's)
  // Per-packet routings (spray) only: empty, or one entry per hop: the index in
  // Router::bundles() of the links that hop's traffic is spread over evenly, or kNoBundle
  // where the hop is links[i] alone. `links` is then one of the paths the packets take (the
  // first), for latency and display: every path has the same hops and latencies.
  std::vector<uint32_t> bundle;
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
  // Active flows on a directed link now, for routings that adapt at flow start (ugal,
  // adaptive);
  // the others ignore it. Without an oracle an adaptive routing acts as its base routing.
  using LoadOracle = std::function<uint32_t(LinkId)>;
  virtual void set_load_oracle(LoadOracle oracle) { (void)oracle; }
  // The bundles a per-packet routing's routes name (Route::bundle), all known from the start;
  // empty for per-flow routings.
  virtual std::span<const LinkBundle> bundles() const { return {}; }
  // How many equal lanes every route of this router splits a flow into (Route::links): 1 for
  // every routing but valiant_packet and ugal_packet. The network models count a link's crossings in lanes
  // and its capacity as lanes() x its bandwidth, so a flow of rate r loads a link of weight
  // w = (lanes crossing it) / lanes() with w r, exactly (sim/network/network.hpp).
  virtual int lanes() const { return 1; }
  // The route route(src_rank, dst_rank, flow_key) gives, computed into `out` (its buffers
  // reused) and not cached: safe from several threads at once, and free of the cache's memory
  // (an all-to-all over 16,384 GPUs has 268 M pairs). False, leaving `out` unspecified, where
  // the routing cannot: load-aware ones (adaptive, ugal) choose by the flows in flight, and
  // shortest searches with scratch of its own; use route() then. Throws as route() does.
  virtual bool route_into(int src_rank, int dst_rank, uint64_t flow_key, Route& out) const {
    (void)src_rank, (void)dst_rank, (void)flow_key, (void)out;
    return false;
  }
  // Load-aware routings (adaptive, ugal) only: the route route(src_rank, dst_rank, flow_key)
  // would choose now, by the load oracle, computed into `out` and not cached. Not thread-safe
  // (the choice reads the oracle and the router's scratch). False for the other routings.
  virtual bool choose_into(int src_rank, int dst_rank, uint64_t flow_key, Route& out) {
    (void)src_rank, (void)dst_rank, (void)flow_key, (void)out;
    return false;
  }
  // UGAL (ugal, ugal_packet) only: the route a transfer starts on before it sees any queue
  // (the minimal one; ugal_packet: every lane minimal), computed into `out`, uncached and
  // thread-safe. A stage's transfers are all placed on their
  // start routes first, as every packet of a stage starts minimal on an idle fabric, and each
  // then chooses (route / choose_into, taken off its start route) against the queues its whole
  // stage builds there (Network::StagePlacement). False for the other routings.
  virtual bool start_route_into(int src_rank, int dst_rank, uint64_t flow_key, Route& out) const {
    (void)src_rank, (void)dst_rank, (void)flow_key, (void)out;
    return false;
  }
  // UGAL only, with the transfer counted by the oracle on every link of its start route:
  // whether choose_into, with it taken off there, would choose the start route again. Reads the
  // oracle and `scratch` only: safe from several threads while the oracle's counts hold still.
  // True for the other routings.
  virtual bool keeps_start_route(int src_rank, int dst_rank, uint64_t flow_key, Route& scratch) const {
    (void)src_rank, (void)dst_rank, (void)flow_key, (void)scratch;
    return true;
  }
  // Load-aware routings only: how many rounds a batch of transfers that start together (a
  // stage, a traffic workload's sends of one instant) gets after each chose in turn: in each,
  // every transfer, in the batch's order, takes its route off and chooses again against all the
  // others' current routes, until a round moves none (Network::StagePlacement::route_all). 0:
  // each keeps its first choice (every routing but ugal_packet).
  virtual int rounds_together() const { return 0; }
  // UGAL only: counts start_route_into(a, b, 0) over every ordered pair of `ranks`, as
  // all_pairs_counter counts route(); null for the other routings.
  virtual std::unique_ptr<AllPairsCounter> start_pairs_counter(std::span<const int> ranks) const;  // routing.cpp
  // Adaptive only: counts every ordered pair of `ranks` (flow key 0) as an all-pairs stage
  // places them (sim/network's StagePlacement): one after another, source by source, each
  // choosing by the oracle's loads as they are when the counter is made plus the pairs this
  // counter counted before it (what placing each chosen route would add). Stateful: call
  // add_sources on one thread for consecutive pieces of sources from 0, on one PairLoads whose
  // crossings start at zero, while the oracle's loads hold still. `ranks` must outlive it.
  // Null for the other routings and on a degraded fabric: place transfer by transfer there.
  virtual std::unique_ptr<AllPairsCounter> choosing_pairs_counter(std::span<const int> ranks);  // routing.cpp
  // Counts route(a, b, 0) over every ordered pair of `ranks` (all_pairs.hpp), which must
  // outlive the counter; null where route_into cannot compute routes.
  virtual std::unique_ptr<AllPairsCounter> all_pairs_counter(std::span<const int> ranks) const = 0;
};

// dmodk, ecmp, adaptive and spray need a fat-tree, minimal, valiant, ugal, valiant_packet and
// ugal_packet a dragonfly, dor a torus;
// shortest works on any topology. Throws
// std::invalid_argument when the routing does not apply to the topology.
// The router keeps a reference to `topology`, which must outlive it.
//   dmodk:    at each level l below the lowest common tier, up-port
//             floor(key / (up(1) * .. * up(l-1))) mod up(l), key = the destination NIC's
//             FatTreeLayout::nic_key; with 2 tiers, spine = the destination's leaf port mod
//             spines. Shift permutations are contention-free on full non-blocking trees.
//   ecmp:     at each level, a SplitMix64 hash of (source NIC, destination NIC, flow_key,
//             seed) mod up-ports (level 1: the 2-tier spine choice, re-mixed above).
//   adaptive: per flow, the up-path whose busiest link (up and down, by the load oracle at
//             flow start) has the fewest flows; ties go to the first from the dmodk path
//             onwards. Without an oracle, dmodk.
//   spray:    per packet: every switch spreads a flow's packets evenly over its up-ports
//             toward the lowest common tier, and down the mirror (InfiniBand adaptive
//             routing and Ethernet packet spraying, as the even split they aim at). Exact as
//             bundles: every flow leaving leaf A crosses all of A's level-1 up-links with an
//             equal share, every flow leaving A's tier-2 group all of that group's level-2
//             up-links, and so on, so each level's links form one bundle of their summed
//             capacity (Route::bundle). Needs switches that reach the tier above evenly (the
//             builder's trees do); std::invalid_argument otherwise.
//   shortest: Boost.Graph BFS, fewest hops, transit only through fabric switches and the
//             source and destination nodes' NICs and node switches.
//   minimal:  dragonfly local-global-local: at most one global cable and one local hop in
//             each group; among the m parallel cables between the two groups, cable
//             (i + floor(j m / R)) mod m, i and j the ranks' indices within their groups of R
//             ranks, so the pairs of two groups load the m cables evenly (the cable needing
//             fewest local hops would pile them onto the few cables of the source and
//             destination routers); among the
//             cables of a local bundle, one by a hash of the pair. With one cable per group
//             pair the shortest route with one global hop; a route over two global cables can
//             be shorter on some arrangements (Bunde et al., IEEE 2019).
//   valiant:  minimal to an intermediate group (one of the k = g - 2 groups other than the
//             source's and destination's), then minimal to the destination. The intermediate
//             group and the two global cables are the digits of one spread of the pair over
//             k m^2 values (routing_dragonfly.cpp), the group's turned by a hash of seed and
//             flow_key: the pairs of two groups meet every (group, first cable, second
//             cable) equally often, so an all-to-all loads every global cable alike (+-1
//             pair) and the intermediate group's local hops evenly. Flows inside one group,
//             and dragonflies of 2 groups, route minimally.
//   ugal:     per flow, the minimal route or the flow's valiant route: minimal unless
//             q_valiant * hops_valiant < q_minimal * hops_minimal, q the route's longest queue
//             in time: the most of (active flows on the link other than this one + 1) / the
//             link's bandwidth (the oracle's view at flow start; UGAL's queue length times
//             hop count, Kim et al., ISCA 2008). A stage's transfers start on their minimal
//             routes (start_route_into) and choose against the queues the whole stage builds.
//   valiant_packet: per packet: a flow's packets spread evenly over the k = g - 2
//             intermediate groups, as Valiant routing per packet (Slingshot's and Aries's
//             non-minimal paths) aims to. The router has k lanes (Router::lanes()): a route
//             between groups is k Valiant paths, one through each intermediate group, all on
//             the pair's two global cables of valiant's spread (one fixed cable per leg), so a
//             link carries (the paths crossing it) / k of the flow; inside a group every lane
//             is the minimal route. Exact where bundles are not: a global cable is a first leg
//             for one group pair and a second for another.
//   ugal_packet: per packet, adaptive (Slingshot's and Aries's UGAL): a flow between groups
//             is split in 4 equal parts, each on the minimal route or spread as valiant_packet
//             spreads a flow; 4 (g - 2) lanes, a minimal part taking g - 2 of them, a spread
//             one one through each intermediate group. The parts choose one after another by
//             the load oracle: round where the detour's longest queue in time (lanes / the
//             link's bandwidth, this flow's parts counted) is shorter than the minimal route's,
//             on a tie where it has fewer hops (routing_dragonfly.cpp says why). Without an
//             oracle, and inside a group, every lane minimal. A stage's all-pairs transfers
//             start minimal (start_route_into), as ugal's do. Flows that start together settle
//             together: up to 8 rounds of each choosing again against the others
//             (rounds_together).
//   dor:      torus dimension order: dimension 0 first, each the shorter way round (a tie,
//             half-way round an even ring, goes the + way); along a dimension of bundles the
//             pair keeps one cable of each, chosen by a hash of the pair.
// On a degraded fabric (Topology::has_failures, topology/failures.hpp) no route crosses a
// failed cable: the fat-tree routings keep a pair's up-port where a live path remains
// through it, else re-hash over the live ones (RouteError when no up-down path survives);
// the dragonfly routings replace a route crossing a failed cable by a fewest-hop live path
// between the same routers, ties hashed by the pair (ugal sees failed cables as full);
// shortest searches live links only; dor and spray throw std::invalid_argument.
std::unique_ptr<Router> make_router(const Topology& topology, RoutingKind kind, uint64_t seed);

// Router::lanes of make_router(a topology built from `params`, kind), from the parameters
// alone (what a run's memory estimate reads): valiant_packet g - 2 and ugal_packet 4 (g - 2)
// on a dragonfly of g > 2 groups (4 and 1 at g <= 2), every other routing 1.
int route_lanes(const TopologyParams& params, RoutingKind kind);

// Whether the routing's routers compute routes without caching them (Router::route_into):
// every routing but adaptive, ugal, ugal_packet (load-aware) and shortest (a graph search).
constexpr bool computes_routes_uncached(RoutingKind kind) {
  return kind != RoutingKind::adaptive && kind != RoutingKind::ugal && kind != RoutingKind::ugal_packet &&
         kind != RoutingKind::shortest;
}
// Whether a stage's routes can be had without caching them at all: computed (above), or, for
// the load-aware routings, chosen one after another (Router::choose_into). All but shortest.
constexpr bool routes_without_cache(RoutingKind kind) { return kind != RoutingKind::shortest; }

}  // namespace cs::topo
