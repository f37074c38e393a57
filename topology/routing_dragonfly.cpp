// Dragonfly routings (minimal, Valiant, UGAL), computed from DragonflyLayout without a graph
// search. A route is fixed by (src rank, dst rank, intermediate group), the intermediate
// group being the source's own group for a minimal route, so routes cache per that triple.
#include <algorithm>
#include <numeric>
#include <utility>

#include "topology/direct_layouts.hpp"
#include "topology/routing_detail.hpp"

namespace cs::topo::detail {
namespace {

class DragonflyRouter final : public CachedRouter {
 public:
  DragonflyRouter(const Topology& t, RoutingKind kind, uint64_t seed)
      : CachedRouter(t),
        d_(*t.dragonfly()),
        kind_(kind),
        seed_mix_(mix64(seed)),
        per_group_(int64_t{d_.routers_per_group} * d_.nodes_per_router * t.gpus_per_node()),
        scramble_(scramble_multiplier(per_group_)) {}

  const Route& route(int src, int dst, uint64_t flow_key) override {
    check_ranks(src, dst);
    if (src == dst) return empty_;
    const int sg = d_.group_of_node(t_.node_of_rank(src));
    if (kind_ == RoutingKind::minimal) return cached(src, dst, sg);
    const int via = intermediate(end_of(src), end_of(dst), flow_key);
    if (kind_ == RoutingKind::valiant || via == sg) return cached(src, dst, via);
    // UGAL: the flow's Valiant route only when clearly less loaded, hops counted.
    const Route& minimal = cached(src, dst, sg);
    if (!oracle_) return minimal;
    const Route& valiant = cached(src, dst, via);
    return cost(valiant) < cost(minimal) ? valiant : minimal;
  }

  bool choose_into(int src, int dst, uint64_t flow_key, Route& out) override {
    if (kind_ != RoutingKind::ugal) return false;
    if (same_rank_into(src, dst, out)) return true;
    // As route(): the minimal route unless the flow's Valiant route is clearly less loaded. The
    // two share their legs (GPU -> NIC -> router and back), so the Valiant route is built whole
    // only when it wins: its cost is its fabric's with the minimal route's legs.
    const End s = end_of(src), d = end_of(dst);
    const int via = intermediate(s, d, flow_key);
    std::size_t fabric_begin = 0, fabric_end = 0;
    nic_route_into(t_, src, dst, d_.nic_up, [&](std::vector<LinkId>& links) {
      fabric_begin = links.size();
      fabric(s, d, s.group, links);
      fabric_end = links.size();
    }, out);
    if (via == s.group || !oracle_) return true;
    valiant_.links.clear();
    fabric(s, d, via, valiant_.links);
    uint32_t q_legs = 0, q_valiant = 0;
    for (std::size_t i = 0; i < out.links.size(); ++i)
      if (i < fabric_begin || i >= fabric_end) q_legs = std::max(q_legs, oracle_(out.links[i]));
    for (LinkId l : valiant_.links) q_valiant = std::max(q_valiant, oracle_(l));
    const std::size_t legs = out.links.size() - (fabric_end - fabric_begin);
    const uint64_t valiant_cost = (uint64_t{std::max(q_legs, q_valiant)} + 1) * (legs + valiant_.links.size());
    if (valiant_cost < cost(out))
      nic_route_into(t_, src, dst, d_.nic_up, [&](std::vector<LinkId>& links) { fabric(s, d, via, links); }, out);
    return true;
  }

  bool route_into(int src, int dst, uint64_t flow_key, Route& out) const override {
    if (kind_ == RoutingKind::ugal) return false;
    if (same_rank_into(src, dst, out)) return true;
    const End s = end_of(src), d = end_of(dst);
    const int via = kind_ == RoutingKind::minimal ? s.group : intermediate(s, d, flow_key);
    nic_route_into(t_, src, dst, d_.nic_up, [&](std::vector<LinkId>& links) { fabric(s, d, via, links); }, out);
    return true;
  }

  std::unique_ptr<AllPairsCounter> all_pairs_counter(std::span<const int> ranks) const override {
    if (kind_ == RoutingKind::ugal) return nullptr;
    // Each member's end read once (no division per pair).
    auto ends = std::make_shared<std::vector<End>>();
    for (int rank : ranks) ends->push_back(end_of(rank));
    return make_leg_counter(t_, d_.nic_up, ranks, [this, ends](std::size_t i, std::size_t j, HopSink& sink) {
      const End &s = (*ends)[i], &d = (*ends)[j];
      sink.scratch.clear();
      fabric(s, d, kind_ == RoutingKind::minimal ? s.group : intermediate(s, d, 0), sink.scratch);
      for (LinkId l : sink.scratch) sink.hop(l);
    });
  }

  void set_load_oracle(LoadOracle oracle) override { oracle_ = std::move(oracle); }

 private:
  // What a route reads of one of its two ranks.
  struct End {
    int rank = 0;
    int router = 0;        // its NIC's router
    int group = 0;         // its node's group (its router's: nodes fill groups router by router)
    int64_t index = 0;     // its index among its group's ranks (nodes fill groups in order)
    int64_t spread = 0;    // index x m / ranks per group: its term in global_copy as the destination
  };
  End end_of(int rank) const {
    End e;
    e.rank = rank;
    e.router = d_.router_of_nic(t_.nic_index_of_rank(rank));
    e.group = d_.group_of_node(t_.node_of_rank(rank));
    e.index = rank % per_group_;
    e.spread = e.index * int64_t{d_.links_per_group_pair} / per_group_;
    return e;
  }

  // (most active flows on a link of the route + 1) * links.
  uint64_t cost(const Route& r) const {
    uint32_t q = 0;
    for (LinkId l : r.links) q = std::max(q, oracle_(l));
    return (uint64_t{q} + 1) * r.links.size();
  }

  // The Valiant intermediate group of a flow: one of the k = g - 2 groups other than the
  // source's and the destination's; the source's group (minimal) inside a group or with 2
  // groups. Digit 0 of valiant_spread (mod k), turned by a hash of the seed and the flow key,
  // so that the pairs of two groups spread over the k groups evenly (exactly for one flow key,
  // as a collective's transfers have) and a pair's flows of different keys over all of them.
  int intermediate(const End& s, const End& d, uint64_t flow_key) const {
    const int sg = s.group, dg = d.group;
    if (sg == dg || d_.groups <= 2) return sg;
    const auto k = static_cast<uint64_t>(d_.groups - 2);
    const auto m = static_cast<uint64_t>(std::max(d_.links_per_group_pair, 1));
    const auto top = static_cast<uint64_t>(valiant_spread(s, d)) / (m * m);
    int via = static_cast<int>((top + mix64(seed_mix_ ^ flow_key) % k) % k);
    // Skip the two excluded groups, lower first.
    for (int skip : {std::min(sg, dg), std::max(sg, dg)})
      if (via >= skip) ++via;
    return via;
  }

  // A Valiant route's choices as the digits of one spread x = (i + floor(sigma(j) K / R)) mod
  // K over K = k m^2, i and j the ranks' indices within their groups of R ranks and sigma(j) =
  // j A mod R a scrambling of j (A coprime to R, near R / golden ratio): the intermediate
  // group (digit 0, mod k), the second global cable (digit 1, mod m) and the first (digit 2,
  // mod m). For each j, i sweeps R consecutive values of x, and the sweeps start at the same
  // points as without sigma, so the R^2 pairs of two groups meet every x equally often (+-1):
  // every (intermediate, first cable, second cable) triple carries the same share of an
  // all-to-all, each global cable its share exactly, and the intermediate group's local hop
  // joins arrival and departure routers chosen apart. sigma keeps the high digits, which a
  // sweep leaves fixed, from following j's router (consecutive j share one without rails).
  // (Copy c of a group's slots sits on router floor((c (g-1) + slot) / h): one copy index on
  // both legs, as before, arrived and left on the same or a neighbouring router; an
  // all-to-all over a=16, h=8, g=8 ran at 17.4 GB/s against its bound of 28, one local link
  // at 99.9% while the mean was 38%.)
  int64_t valiant_spread(const End& s, const End& d) const {
    const int64_t m = std::max(d_.links_per_group_pair, 1), K = int64_t{d_.groups - 2} * m * m;
    return (s.index + d.index * scramble_ % per_group_ * K / per_group_) % K;
  }
  // A: the odd number nearest above R / golden ratio that is coprime to R (sigma's multiplier).
  static int64_t scramble_multiplier(int64_t R) {
    int64_t A = static_cast<int64_t>(static_cast<double>(R) * 0.6180339887498949) | 1;
    while (std::gcd(A, R) != 1) A += 2;
    return A;
  }

  const Route& cached(int src, int dst, int via) {
    return CachedRouter::cached(route_key(src, dst, via), [&] {
      const End s = end_of(src), d = end_of(dst);
      return nic_route(t_, src, dst, d_.nic_up, [&](std::vector<LinkId>& out) { fabric(s, d, via, out); });
    });
  }

  // How one pair's route picks among parallel cables. Global: copy (i + floor(j m / R)) mod
  // m of the group pair's m cables, i and j the two ranks' indices within their groups of R
  // ranks: every source row and destination column of an all-to-all meets each cable R / m
  // times (+-1), so the pairs of two groups load the m cables evenly, and so do permutations
  // that keep a rank's index (i -> i of another group), unlike (i + j) mod m, which uses only
  // every other cable then when m is even. (The cable needing fewest local hops would pile
  // the flows onto the few cables of the source and destination routers.) Local bundles:
  // copy hash(pair, hop) mod the bundle, uncorrelated with the global choice.
  struct Spread {
    int global;      // the global copy
    uint64_t hash;   // of the pair
    int hops = 0;    // local hops taken so far
  };

  int global_copy(const End& s, const End& d) const {
    const int m = d_.links_per_group_pair;
    if (m <= 1) return 0;
    return static_cast<int>((s.index + d.spread) % m);
  }

  // Appends a local hop from router `at` to router `to` of the same group, if they differ.
  void local_hop(int at, int to, Spread& spread, std::vector<LinkId>& out) const {
    if (at == to) return;
    const auto copy = static_cast<int>(mix64(spread.hash + static_cast<uint64_t>(spread.hops++)) %
                                       static_cast<uint64_t>(d_.local_parallel));
    out.push_back(d_.local_link(at, to % d_.routers_per_group, copy));
  }

  // Router `at` to group `to_group` through the spread's global cable; returns the router
  // reached (`at` itself inside its own group).
  int to_group(int at, int to_group, Spread& spread, std::vector<LinkId>& out) const {
    const int from_group = d_.group_of_router(at);
    if (from_group == to_group) return at;
    const LinkId l = d_.global_link(from_group, to_group, spread.global);
    local_hop(at, t_.vertex(t_.link(l).from).index, spread, out);
    out.push_back(l);
    return t_.vertex(t_.link(l).to).index;
  }

  // Router to router: through group `via` (the source's own for a minimal route).
  // A Valiant route's cables are valiant_spread's digits 1 and 2.
  void fabric(const End& s, const End& d, int via, std::vector<LinkId>& out) const {
    Spread spread{global_copy(s, d), mix64((static_cast<uint64_t>(s.rank) << 32) | static_cast<uint64_t>(d.rank))};
    const int m = d_.links_per_group_pair;
    const int64_t x = via != s.group && m > 1 ? valiant_spread(s, d) : 0;
    if (via != s.group && m > 1) spread.global = static_cast<int>(x / m % m);
    int at = to_group(s.router, via, spread, out);  // Valiant leg, if any
    if (via != s.group && m > 1) spread.global = static_cast<int>(x % m);
    at = to_group(at, d.group, spread, out);
    local_hop(at, d.router, spread, out);
  }

  const DragonflyLayout& d_;
  RoutingKind kind_;
  uint64_t seed_mix_;
  int64_t per_group_;  // R: ranks per group
  int64_t scramble_;   // A of valiant_spread
  LoadOracle oracle_;
  Route valiant_;  // choose_into's scratch
};

}  // namespace

std::unique_ptr<Router> make_dragonfly_router(const Topology& t, RoutingKind kind, uint64_t seed) {
  return std::make_unique<DragonflyRouter>(t, kind, seed);
}

}  // namespace cs::topo::detail
