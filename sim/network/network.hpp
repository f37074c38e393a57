#pragma once
// The network of one simulation: a topology, its router and the flow model, behind one call:
// send `bytes` from one rank (GPU) to another. Collectives and workloads talk to this.
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/network/flow_model.hpp"
#include "topology/all_pairs.hpp"
#include "topology/routing.hpp"
#include "topology/topology.hpp"

namespace cs::net {

class Network {
 public:
  Network(engine::Simulator& sim, const topo::Topology& topology, topo::RoutingKind routing);

  engine::Simulator& sim() { return sim_; }
  const topo::Topology& topology() const { return topology_; }
  FlowModel& flows() { return flows_; }
  int ranks() const { return topology_.ranks(); }

  // Model links: what the network models share, numbered as the topology's links, then one
  // per bundle of a per-packet routing (topo::Router::bundles()): a bundle's traffic is spread
  // evenly over its k members, so it is one link of k times its slowest member's capacity.
  // Usage per model link folds back onto topology links with fold_*.
  //
  // Under a routing of D > 1 lanes (topo::Router::lanes(): valiant_packet), both models count
  // in lanes: a route lists each of its D paths (Route::links), so a link crossed by c of them
  // counts c times, and every model link's capacity is D x its bandwidth. A flow of rate r
  // then loads it with c r / D, its weight times r, in the flow model's max-min solve and in
  // the analytical model's loads alike, and a model's bytes per link are D x the bytes
  // (fold_bytes divides). Every route of the network has the same D lanes, so max-min over
  // flows is unchanged; with D = 1 nothing is scaled.
  std::size_t model_links() const { return capacity_.size(); }
  int lanes() const { return router_->lanes(); }
  double capacity_Bps(uint32_t model_link) const { return capacity_[model_link]; }
  const std::vector<double>& capacities_Bps() const { return capacity_; }  // per model link
  // The model links of a route's hops, in order (bundles where it sprays), appended to out.
  void append_model_links(const topo::Route& route, std::vector<uint32_t>& out) const;
  // A topology link standing for a model link (a bundle: its first member), for reports.
  topo::LinkId topology_link(uint32_t model_link) const;
  // Per model link to per topology link: a bundle's bytes split evenly over its members; its
  // busy time is each member's; its utilization scaled to each member's capacity. Bytes come
  // back from lane crossings to bytes (see model_links).
  std::vector<double> fold_bytes(std::vector<double> per_model_link) const;
  std::vector<double> fold_busy(std::vector<double> per_model_link) const;
  std::vector<double> fold_utilization(std::vector<double> per_model_link) const;

  // The route a flow from src to dst (src != dst) takes, as registered with the flow model;
  // stable for the Network's lifetime. `flow_key` matters only to per-flow hashing routings
  // (ECMP).
  RouteId path(int src_rank, int dst_rank, uint64_t flow_key = 0);
  // One route through the routes of several (src, dst) rank pairs in turn, with no latency of
  // its own: a flow on it crosses every link of every pair and so moves all of them at one
  // rate (a pipeline). Not cached: register once per pipeline.
  RouteId chain_path(std::span<const std::pair<int, int>> pairs);
  // The same through routes already chosen (router references); cached by the routes.
  RouteId chain_path(std::span<const topo::Route* const> routes);
  // The flow model's id of a route the router gave (registered on first use).
  RouteId path_of(const topo::Route& route);
  // Every route the network uses comes from here: the router's, or with PXN a proxied one.
  const topo::Route& route(int src_rank, int dst_rank, uint64_t flow_key = 0);
  // The same route computed into `out`, not cached: safe from several threads at once. False
  // where the routing cannot (Router::route_into): use route().
  bool route_into(int src_rank, int dst_rank, uint64_t flow_key, topo::Route& out) const;
  // Load-aware routings only: the route StagePlacement::route would place now, computed into
  // `out` and not cached, and placed as it would (one more transfer on each of its links for
  // the stage's later ones) until unplace() takes it off. False, placing nothing, for the
  // other routings.
  bool place_into(int src_rank, int dst_rank, uint64_t flow_key, topo::Route& out);
  // Takes count[l] placed transfers off each link l (what place_into placed, hop by hop).
  void unplace(std::span<const uint64_t> count);
  // Takes one placed transfer off each link of `route`.
  void unplace(const topo::Route& route);
  // Load-aware routings: the transfers placed on topology link `l` now (StagePlacement,
  // place_into), beside the flows in flight; 0 for the other routings.
  uint32_t placed(topo::LinkId l) const { return load_aware_ ? placed_[l] : 0; }
  // UGAL only (topo::Router::start_route_into): the route a transfer starts on, uncached and
  // thread-safe; false for the other routings.
  bool start_route_into(int src_rank, int dst_rank, uint64_t flow_key, topo::Route& out) const;
  // An all-pairs stage on its start routes: every ordered pair of `ranks` (flow key 0) counted
  // on every core and placed (one more transfer on each link for the choices after it);
  // nullopt, placing nothing, where the routing has no start routes.
  std::optional<topo::PairLoads> place_start_routes(std::span<const int> ranks);
  // With the pairs of `ranks` placed on their start routes: the index i n + j of the first pair
  // (ranks[i], ranks[j]) from index `from` on, in that order, that would leave its start route
  // if it chose now (topo::Router::keeps_start_route), checked on every core; n * n where none
  // would. Pairs before it, choosing one after another, see the loads as they are now and keep
  // their start routes.
  std::size_t first_leaving_start(std::span<const int> ranks, std::size_t from);
  // Counts route(a, b) over every ordered pair of `ranks` (topo::AllPairsCounter, on model
  // links): the router's counter, or with PXN route by route; null where routes cannot be
  // computed uncached. `ranks` must outlive it.
  std::unique_ptr<topo::AllPairsCounter> all_pairs_counter(std::span<const int> ranks) const;
  // Load-aware routings: every ordered pair of `ranks` (flow key 0) counted as StagePlacement
  // would place them one after another (topo::Router::choosing_pairs_counter), on this
  // thread, the simulator's interrupt check polled per 1/64 of the sources; placing nothing. nullopt where
  // the routing cannot (UGAL, a degraded fabric) or with PXN (a pair's route is two chosen
  // apart): place pair by pair (place_into) then.
  std::optional<topo::PairLoads> count_chosen_pairs(std::span<const int> ranks);
  // That count over every ordered pair of `ranks`, on every core (integer sums: the same on
  // any number of threads); nullopt where the routing cannot. A route error is the lowest
  // source's; the simulator's interrupt check is polled per piece of sources.
  std::optional<topo::PairLoads> count_all_pairs(std::span<const int> ranks);
  // The same through `counter`, one of all_pairs_counter(ranks), kept by the caller (a bulk
  // exchange lists its pairs' links through it afterwards: topo::AllPairsCounter::append_links).
  topo::PairLoads count_all_pairs(std::span<const int> ranks, const topo::AllPairsCounter& counter);

  // PXN (NCCL's PCIe x NVLink proxying): a transfer between nodes whose source GPU's NIC is on
  // another rail than the destination GPU's first crosses the node fabric to the source
  // node's GPU with the destination's local index (on the destination's rail), then leaves
  // through that GPU's NIC: the fabric carries it on the destination's rail alone (a
  // rail-optimized fabric then needs no spine for it). Off by default, as in NCCL before it
  // decides per message; routes are fixed once chosen.
  void set_pxn(bool on) { pxn_ = on; }
  bool pxn() const { return pxn_; }

  // Load-aware routings (adaptive, UGAL) read how many transfers use each link when they pick
  // a path. By default they read the flow model's flows; a model that moves bytes otherwise
  // (the analytical model's stage fluid) gives its own count here; an empty oracle restores
  // the flow model's. No effect on other routings.
  bool load_aware() const { return load_aware_; }
  void set_load_oracle(topo::Router::LoadOracle oracle);

  // Placing the transfers of one stage (a collective's transfers that start together): each
  // route a load-aware routing picks counts, for the stage's later transfers, as one more
  // flow on its links, beside the flows in flight. So a ring's edges, or an all-to-all's
  // pairs, spread over the fabric's paths as adaptive routing spreads flows that start one
  // after another, instead of all taking the idle fabric's first choice. No effect on other
  // routings.
  // One transfer of a batch: its two GPUs (topology ranks) and flow key.
  struct Endpoints {
    int src_rank = 0, dst_rank = 0;
    uint64_t flow_key = 0;
  };
  class StagePlacement {
   public:
    explicit StagePlacement(Network& network) : network_(network) {}
    StagePlacement(const StagePlacement&) = delete;
    StagePlacement& operator=(const StagePlacement&) = delete;
    ~StagePlacement() { clear(); }
    const topo::Route& route(int src_rank, int dst_rank, uint64_t flow_key = 0);
    // Before any of the stage is routed: places a transfer on its start route (UGAL: minimal,
    // topo::Router::start_route_into), so that route() chooses against the queues the whole
    // stage builds there, and takes it off that route first. No effect for other routings.
    // The drivers prime all-pairs stages (all-to-all), whose transfers all start at once.
    void prime(int src_rank, int dst_rank, uint64_t flow_key = 0);
    // A batch of transfers that start together, routed and left placed: each chooses in turn
    // (route(), in the batch's order); then, under a routing that chooses a batch together
    // (topo::Router::rounds_together(): ugal_packet), round after round each takes its route
    // off and chooses again against all the others' current ones, until a round moves none or
    // the rounds run out. The router's routes (stable references), in the batch's order.
    // Strong exception guarantee: on a throw (a route that does not exist, the load oracle's)
    // the placement and the network's placed counts are as before the call.
    std::vector<const topo::Route*> route_all(std::span<const Endpoints> batch);
    void clear();  // the next stage starts from the flows in flight alone

   private:
    // Where route_all started: the books' sizes and the primes it has taken since.
    struct Mark {
      std::size_t placed = 0, unplaced = 0;
      std::vector<int*> consumed;  // primed_ counts taken one off
    };
    // route(), listing the prime it takes in `consumed` (whose capacity must hold one more).
    const topo::Route& route(int src_rank, int dst_rank, uint64_t flow_key, std::vector<int*>* consumed);
    void place(const topo::Route& r);  // one more transfer on each link of r, booked
    void roll_back(const Mark& mark) noexcept;  // books and counts back to `mark`

    Network& network_;
    std::vector<topo::LinkId> placed_, unplaced_;  // counts moved, to undo at clear()
    // Transfers on their start routes; a count taken to 0 stays (route_all gives it back).
    std::map<std::tuple<int, int, uint64_t>, int> primed_;
    topo::Route start_;                                      // scratch
  };

  // Sends that start together (Comm::send_together): while it lives, route() of one of the
  // batch's transfers gives the route the batch settled on together (StagePlacement::route_all
  // on the flows in flight) instead of choosing against the ones started before it. Nothing
  // is pinned under a routing that does not choose a batch together (rounds_together() 0):
  // each send then chooses as it starts. A pair and key listed twice takes the later route.
  class PinnedBatch {
   public:
    PinnedBatch(Network& network, std::span<const Endpoints> batch);
    PinnedBatch(const PinnedBatch&) = delete;
    PinnedBatch& operator=(const PinnedBatch&) = delete;
    ~PinnedBatch() { network_.pinned_.clear(); }

   private:
    Network& network_;
  };

  // Send bytes over a path. The observer hears of completion with `tag`.
  FlowId send(RouteId path, double bytes, FlowObserver* observer, uint64_t tag) {
    return flows_.start(path, bytes, observer, tag);
  }
  FlowId send(int src_rank, int dst_rank, double bytes, FlowObserver* observer, uint64_t tag,
              uint64_t flow_key = 0) {
    return send(path(src_rank, dst_rank, flow_key), bytes, observer, tag);
  }

 private:
  // PXN's proxy GPU for a transfer between nodes on different rails; -1: none (direct).
  int pxn_proxy(int src_rank, int dst_rank) const;
  // A route computed leg by leg (leg(a, b, route): false if it cannot), joined through PXN's
  // proxy where there is one.
  template <class Leg>
  bool uncached_route(int src_rank, int dst_rank, topo::Route& out, const Leg& leg) const;
  enum class Fold : uint8_t { split, copy, scale };
  std::vector<double> fold(std::vector<double> v, Fold how) const;

  engine::Simulator& sim_;
  const topo::Topology& topology_;
  std::unique_ptr<topo::Router> router_;
  std::vector<double> capacity_;  // per model link
  FlowModel flows_;
  bool load_aware_ = false;
  topo::Router::LoadOracle base_oracle_;  // the model's count of transfers per link
  std::vector<uint32_t> placed_;          // per link: transfers of the stage being placed
  // Routes of the batch being sent together (PinnedBatch), by (src, dst, flow key).
  std::map<std::tuple<int, int, uint64_t>, const topo::Route*> pinned_;
  std::unordered_map<const topo::Route*, RouteId> paths_;  // router's cached routes -> ids
  std::map<std::vector<const topo::Route*>, RouteId> chains_;
  bool pxn_ = false;
  // PXN's routes (two router routes joined), by (src, dst, flow key); nodes never move.
  std::unordered_map<uint64_t, std::unordered_map<uint64_t, topo::Route>> proxied_;
};

}  // namespace cs::net
