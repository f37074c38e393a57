// Dragonfly routings (minimal, Valiant, UGAL, Valiant and UGAL per packet), computed from
// DragonflyLayout without a graph search. A route is fixed by (src rank, dst rank,
// intermediate group), the intermediate group being the source's own group for a minimal
// route, so routes cache per that triple (per packet: per pair and, for UGAL, its split,
// its lanes through every intermediate group).
#include <algorithm>
#include <array>
#include <numeric>
#include <span>
#include <utility>

#include "topology/direct_layouts.hpp"
#include "topology/routing_detail.hpp"

namespace cs::topo::detail {
namespace {

// UGAL per packet splits a flow into this many equal parts, each minimal or spread over the
// intermediate groups: a split's granularity (a stage of many flows mixes finer).
constexpr int kUgalParts = 4;
// Rounds in which the flows of a batch that start together choose their splits again, each
// against all the others' (Router::rounds_together): packets keep shifting between the ways
// while their queues differ, so the batch settles where no flow would move a part.
constexpr int kUgalRounds = 8;

// Router::lanes of a dragonfly routing over g groups: valiant_packet k = g - 2 lanes, one
// through each group other than the source's and the destination's (1 with 2 groups or
// fewer), ugal_packet kUgalParts x k; the per-flow routings 1.
int dragonfly_lanes(RoutingKind kind, int groups) {
  const int k = std::max(groups - 2, 1);
  if (kind == RoutingKind::valiant_packet) return k;
  return kind == RoutingKind::ugal_packet ? kUgalParts * k : 1;
}

class DragonflyRouter final : public CachedRouter {
 public:
  DragonflyRouter(const Topology& t, RoutingKind kind, uint64_t seed)
      : CachedRouter(t),
        d_(*t.dragonfly()),
        kind_(kind),
        seed_mix_(mix64(seed)),
        per_group_(int64_t{d_.routers_per_group} * d_.nodes_per_router * t.gpus_per_node()),
        scramble_(scramble_multiplier(per_group_)),
        spread_period_(int64_t{std::max(d_.groups - 2, 1)} * std::max(d_.links_per_group_pair, 1) *
                       std::max(d_.links_per_group_pair, 1)),
        turn0_(d_.groups > 2 ? mix64(seed_mix_) % static_cast<uint64_t>(d_.groups - 2) : 0) {
    // Each global cable's routers, by global index (a route's every global hop reads them).
    global_ends_.reserve(d_.global.size());
    for (LinkId l : d_.global)
      global_ends_.push_back({static_cast<int>(t.vertex(t.link(l).from).index), static_cast<int>(t.vertex(t.link(l).to).index)});
    if (!load_aware()) return;
    // UGAL reads a bandwidth for every link of the two routes it weighs: kept dense.
    bandwidth_Bps_.reserve(t.num_links());
    for (LinkId l = 0; l < t.num_links(); ++l) bandwidth_Bps_.push_back(t.link(l).bandwidth_Bps);
    // UGAL weighs every pair of a stage: each rank's end and up-leg (GPU -> NIC -> router)
    // read once.
    std::vector<LinkId> leg;
    leg_begin_.push_back(0);
    for (int rank = 0; rank < ranks_; ++rank) {
      ends_.push_back(end_of(rank));
      leg.clear();
      append_gpu_to_nic(t, rank, leg);
      leg.push_back(d_.nic_up[static_cast<std::size_t>(t.nic_index_of_rank(rank))]);
      legs_.insert(legs_.end(), leg.begin(), leg.end());
      leg_begin_.push_back(legs_.size());
    }
  }

  const Route& route(int src, int dst, uint64_t flow_key) override {
    check_ranks(src, dst);
    if (src == dst) return empty_;
    const End s = end_of(src), d = end_of(dst);
    if (kind_ == RoutingKind::minimal) return cached(src, dst, s.group);
    if (kind_ == RoutingKind::valiant_packet || kind_ == RoutingKind::ugal_packet) {
      // UGAL per packet: cached per split (kUgalParts + 1 of them).
      const int parts = kind_ == RoutingKind::valiant_packet ? 0 : oracle_ ? minimal_parts(s, d, false, scratch_.links) : kUgalParts;
      return CachedRouter::cached(route_key(src, dst, parts), [&] {
        Route r;
        split_into(s, d, parts, r);
        return r;
      });
    }
    const int via = intermediate(s, d, flow_key);
    if (kind_ == RoutingKind::valiant || via == s.group) return cached(src, dst, via);
    // UGAL: the flow's Valiant route only when clearly less loaded, hops counted.
    const bool valiant = oracle_ && prefers_valiant(s, d, via, false, scratch_.links);
    return cached(src, dst, valiant ? via : s.group);
  }

  bool choose_into(int src, int dst, uint64_t flow_key, Route& out) override {
    if (!load_aware()) return false;
    if (same_rank_into(src, dst, out)) return true;
    const End &s = ends_[static_cast<std::size_t>(src)], &d = ends_[static_cast<std::size_t>(dst)];
    if (kind_ == RoutingKind::ugal_packet) {
      split_into(s, d, oracle_ ? minimal_parts(s, d, false, scratch_.links) : kUgalParts, out);
      return true;
    }
    const int via = intermediate(s, d, flow_key);
    const bool valiant = via != s.group && oracle_ && prefers_valiant(s, d, via, false, scratch_.links);
    nic_route_into(t_, src, dst, d_.nic_up, [&](std::vector<LinkId>& links) { fabric(s, d, valiant ? via : s.group, links); }, out);
    return true;
  }

  bool start_route_into(int src, int dst, uint64_t flow_key, Route& out) const override {
    (void)flow_key;
    if (!load_aware()) return false;
    if (same_rank_into(src, dst, out)) return true;
    if (kind_ == RoutingKind::ugal_packet) split_into(end_of(src), end_of(dst), kUgalParts, out);
    else minimal_into(end_of(src), end_of(dst), out);
    return true;
  }

  bool keeps_start_route(int src, int dst, uint64_t flow_key, Route& scratch) const override {
    if (!load_aware() || !oracle_) return true;
    check_ranks(src, dst);
    if (src == dst) return true;
    const End &s = ends_[static_cast<std::size_t>(src)], &d = ends_[static_cast<std::size_t>(dst)];
    if (kind_ == RoutingKind::ugal_packet) {
      return minimal_parts(s, d, true, scratch.links) == kUgalParts;
    }
    const int via = intermediate(s, d, flow_key);
    return via == s.group || !prefers_valiant(s, d, via, true, scratch.links);
  }

  bool route_into(int src, int dst, uint64_t flow_key, Route& out) const override {
    if (load_aware()) return false;
    if (same_rank_into(src, dst, out)) return true;
    const End s = end_of(src), d = end_of(dst);
    if (kind_ == RoutingKind::valiant_packet) {
      split_into(s, d, 0, out);
      return true;
    }
    const int via = kind_ == RoutingKind::minimal ? s.group : intermediate(s, d, flow_key);
    nic_route_into(t_, src, dst, d_.nic_up, [&](std::vector<LinkId>& links) { fabric(s, d, via, links); }, out);
    return true;
  }

  std::unique_ptr<AllPairsCounter> all_pairs_counter(std::span<const int> ranks) const override {
    if (load_aware()) return nullptr;
    // Per packet: route by route (each pair's lanes whole), through route_into.
    if (kind_ == RoutingKind::valiant_packet) return CachedRouter::all_pairs_counter(ranks);
    return counter(ranks, kind_ == RoutingKind::minimal);
  }

  std::unique_ptr<AllPairsCounter> start_pairs_counter(std::span<const int> ranks) const override {
    if (!load_aware()) return nullptr;
    // UGAL per packet: route by route (each pair's lanes whole), all on the minimal route.
    if (kind_ == RoutingKind::ugal_packet)
      return count_by_routes(t_, ranks, [this](int a, int b, Route& out) { return start_route_into(a, b, 0, out); });
    return counter(ranks, true);
  }

  void set_load_oracle(LoadOracle oracle) override { oracle_ = std::move(oracle); }

  int lanes() const override { return dragonfly_lanes(kind_, d_.groups); }
  int rounds_together() const override { return kind_ == RoutingKind::ugal_packet ? kUgalRounds : 0; }

 private:
  // What a route reads of one of its two ranks.
  struct End {
    int rank = 0;
    int router = 0;        // its NIC's router
    int group = 0;         // its node's group (its router's: nodes fill groups router by router)
    int64_t index = 0;     // its index among its group's ranks (nodes fill groups in order)
    int64_t spread = 0;    // index x m / ranks per group: its term in global_copy as the destination
    int64_t scrambled = 0;  // floor(sigma(index) K / R): its term in valiant_spread as the destination
  };
  End end_of(int rank) const {
    End e;
    e.rank = rank;
    e.router = d_.router_of_nic(t_.nic_index_of_rank(rank));
    e.group = d_.group_of_node(t_.node_of_rank(rank));
    e.index = rank % per_group_;
    e.spread = e.index * int64_t{d_.links_per_group_pair} / per_group_;
    e.scrambled = e.index * scramble_ % per_group_ * spread_period_ / per_group_;
    return e;
  }

  // Counts every pair's minimal route, or its Valiant route (flow key 0).
  std::unique_ptr<AllPairsCounter> counter(std::span<const int> ranks, bool minimal) const {
    // Each member's end read once (no division per pair).
    auto ends = std::make_shared<std::vector<End>>();
    for (int rank : ranks) ends->push_back(end_of(rank));
    return make_leg_counter(t_, d_.nic_up, ranks, [this, ends, minimal](std::size_t i, std::size_t j, HopSink& sink) {
      const End &s = (*ends)[i], &d = (*ends)[j];
      sink.scratch.clear();
      fabric(s, d, minimal ? s.group : intermediate(s, d, 0), sink.scratch);
      for (LinkId l : sink.scratch) sink.hop(l);
    });
  }

  // Valiant per packet's k lanes (dragonfly_lanes): one through each intermediate group.
  int packet_lanes() const { return dragonfly_lanes(RoutingKind::valiant_packet, d_.groups); }
  // The routings that choose by the load oracle.
  bool load_aware() const { return kind_ == RoutingKind::ugal || kind_ == RoutingKind::ugal_packet; }

  // A per-packet route of (s, d) into r, its lanes one after another (Route::links): of the
  // flow's parts (kUgalParts for ugal_packet, 1 for valiant_packet), `minimal_parts` on the
  // minimal route (k lanes each) and the others spread evenly over the k = g - 2 intermediate
  // groups (one lane each through the q-th group other than the two, ascending). A Valiant
  // lane takes the pair's global cables of every Valiant route (valiant_spread's digits 1 and
  // 2, the same in every lane: one fixed cable per leg), so each carries its share through its
  // group, as packets sprayed evenly over the intermediate groups do. Inside a group (and
  // with 2 groups) every lane is the minimal route. The route's latency is its slowest lane's.
  void split_into(const End& s, const End& d, int minimal_parts, Route& r) const {
    const int lanes = this->lanes(), k = packet_lanes();
    const bool between_groups = s.group != d.group && d_.groups > 2;
    const int minimal_lanes = between_groups ? minimal_parts * k : lanes;
    Route lane;
    r.links.clear();
    r.bundle.clear();
    r.latency_s = 0;
    const auto add = [&](int via, int copies) {
      if (copies == 0) return;
      nic_route_into(t_, s.rank, d.rank, d_.nic_up, [&](std::vector<LinkId>& links) { fabric(s, d, via, links); }, lane);
      for (int c = 0; c < copies; ++c) r.links.insert(r.links.end(), lane.links.begin(), lane.links.end());
      r.latency_s = std::max(r.latency_s, lane.latency_s);
    };
    add(s.group, minimal_lanes);
    for (int q = 0, via = 0; between_groups && q < k; ++q, ++via) {
      while (via == s.group || via == d.group) ++via;
      add(via, (lanes - minimal_lanes) / k);
    }
  }

  // UGAL per packet's split of a flow (s, d) between groups: how many of its kUgalParts parts
  // go minimal (all of them inside a group, or with 2 groups). The parts choose one after
  // another, each as a packet does under UGAL (Kim, Dally, Scott and Abts, ISCA 2008): by the
  // queues of its two ways, the minimal route and the Valiant spread over the k intermediate
  // groups, a way's queue q being its longest in time, the most over its links of (lanes the
  // oracle counts there besides this flow + this flow's parts placed so far + the part) / the
  // link's bandwidth. A part goes round where q_valiant < q_minimal, and on a tie where the
  // detour has fewer hops (the lanes' mean): UGAL's q x hops with the queues of bulk
  // transfers, which grow without bound on an overloaded way, so that at saturation the hops
  // only break ties and the split is the one at which the two ways drain alike
  // (water-filling: a flow keeps every part minimal while its minimal route is no busier than
  // the detour). Weighing the queues by hops (q_v H_v < q_m H_m) held the minimal cables of a
  // group shift at ~1.5 times the detours' load: 69% slower than valiant_packet on
  // dragonfly_group_shift.json. Both ways share the flow's GPU -> NIC -> router legs, which
  // carry all of it. On a degraded fabric the oracle shows a dead cable as full: a minimal
  // route crossing one sends every part round, but a dead cable on one of the detour's k
  // lanes does not count against the detour (that lane alone is repaired onto live cables,
  // RepairingRouter), else one dead cable anywhere on a pair's k lanes kept the whole flow
  // minimal (group shift on dragonfly_group_shift.json with one cable down: minimal's 5.12 ms).
  // Flows that start together then choose again, round after round, against each other's
  // latest splits (kUgalRounds). `own`: the oracle counts this flow on its start route (every
  // lane minimal), taken off here. Reads the oracle and `scratch` only.
  int minimal_parts(const End& s, const End& d, bool own, std::vector<LinkId>& scratch) const {
    if (s.group == d.group || d_.groups <= 2) return kUgalParts;
    const int k = packet_lanes(), lanes = this->lanes();
    // The fabric hops: the minimal way's first, then each intermediate group's path.
    scratch.clear();
    fabric(s, d, s.group, scratch);
    const std::size_t minimal_hops = scratch.size();
    for (int q = 0, via = 0; q < k; ++q, ++via) {
      while (via == s.group || via == d.group) ++via;
      fabric(s, d, via, scratch);
    }
    const auto minimal = std::span<const LinkId>(scratch).first(minimal_hops);
    const auto valiant = std::span<const LinkId>(scratch).subspan(minimal_hops);
    // Per distinct fabric link: the others' lanes, this flow's, and what a part adds each way.
    struct Hop {
      LinkId link;
      double others = 0, own = 0, minimal_part = 0, valiant_part = 0, bandwidth_Bps = 0;
      bool dead = false;  // a failed cable (topology/failures.hpp)
    };
    std::vector<Hop> hops;
    hops.reserve(scratch.size());
    for (LinkId l : scratch) hops.push_back({l});
    std::sort(hops.begin(), hops.end(), [](const Hop& a, const Hop& b) { return a.link < b.link; });
    hops.erase(std::unique(hops.begin(), hops.end(), [](const Hop& a, const Hop& b) { return a.link == b.link; }), hops.end());
    const auto at = [&](LinkId l) -> Hop& {
      return *std::lower_bound(hops.begin(), hops.end(), l, [](const Hop& h, LinkId x) { return h.link < x; });
    };
    for (LinkId l : minimal) at(l).minimal_part += k;
    for (LinkId l : valiant) at(l).valiant_part += 1;
    for (Hop& h : hops) {
      // The start route puts every part minimal: kUgalParts minimal parts' lanes.
      h.others = static_cast<double>(oracle_(h.link)) - (own ? h.minimal_part * kUgalParts : 0);
      h.bandwidth_Bps = bandwidth_Bps_[h.link];
      h.dead = t_.failed(h.link);
    }
    // The legs carry every lane of the flow whichever way its parts go.
    double q_legs = 0;
    const auto up = legs(s.rank), down = legs(d.rank);
    const auto leg = [&](LinkId l) {
      const double others = static_cast<double>(oracle_(l)) - (own ? lanes : 0);
      q_legs = std::max(q_legs, (others + lanes) / bandwidth_Bps_[l]);
    };
    for (LinkId l : up) leg(l);
    for (LinkId l : down) leg(reverse(l));
    const auto leg_hops = static_cast<double>(up.size() + down.size());
    const double hops_minimal = leg_hops + static_cast<double>(minimal.size());
    const double hops_valiant = leg_hops + static_cast<double>(valiant.size()) / k;
    int parts = 0;
    for (int p = 0; p < kUgalParts; ++p) {
      double q_minimal = q_legs, q_valiant = q_legs;
      for (const Hop& h : hops) {
        if (h.minimal_part > 0) q_minimal = std::max(q_minimal, (h.others + h.own + h.minimal_part) / h.bandwidth_Bps);
        if (h.valiant_part > 0 && !h.dead) q_valiant = std::max(q_valiant, (h.others + h.own + h.valiant_part) / h.bandwidth_Bps);
      }
      const bool round = q_valiant < q_minimal || (q_valiant == q_minimal && hops_valiant < hops_minimal);
      for (Hop& h : hops) h.own += round ? h.valiant_part : h.minimal_part;
      parts += round ? 0 : 1;
    }
    return parts;
  }

  // The minimal route of (s, d), whole, into r.
  void minimal_into(const End& s, const End& d, Route& r) const {
    nic_route_into(t_, s.rank, d.rank, d_.nic_up, [&](std::vector<LinkId>& links) { fabric(s, d, s.group, links); }, r);
  }

  // UGAL's choice for (s, d) and Valiant group `via` (not s's): true where the Valiant route
  // wins, q_valiant * hops_valiant < q_minimal * hops_minimal, q a route's longest queue in
  // time: the most of (flows the oracle counts on the link besides this one + 1) / the link's
  // bandwidth (`own`: the oracle counts this flow once on every link of its minimal route,
  // taken off here). A queue drains at its link's rate, so a slow global cable's flows weigh
  // more than a fast NIC link's. The two routes share their legs (GPU -> NIC -> router and
  // back); `fabric_links` is scratch for their fabric hops.
  bool prefers_valiant(const End& s, const End& d, int via, bool own, std::vector<LinkId>& fabric_links) const {
    fabric_links.clear();
    fabric(s, d, s.group, fabric_links);
    const std::size_t minimal_hops = fabric_links.size();
    fabric(s, d, via, fabric_links);
    const auto minimal = std::span<const LinkId>(fabric_links).first(minimal_hops);
    const auto add = [&](LongestQueue& q, LinkId l, uint32_t on_minimal) {
      q.add(bandwidth_Bps_[l], oracle_(l) - (own ? on_minimal : 0));
    };
    LongestQueue q_legs;
    const auto up = legs(s.rank), down = legs(d.rank);
    for (LinkId l : up) add(q_legs, l, 1);
    for (LinkId l : down) add(q_legs, reverse(l), 1);
    LongestQueue q_minimal = q_legs, q_valiant = q_legs;
    for (std::size_t i = 0; i < fabric_links.size(); ++i) {
      const LinkId l = fabric_links[i];
      add(i < minimal_hops ? q_minimal : q_valiant, l, static_cast<uint32_t>(std::count(minimal.begin(), minimal.end(), l)));
    }
    const auto leg_hops = static_cast<double>(up.size() + down.size());
    return q_valiant.seconds() * (leg_hops + static_cast<double>(fabric_links.size() - minimal_hops)) <
           q_minimal.seconds() * (leg_hops + static_cast<double>(minimal_hops));
  }
  // The longest of some links' queues, (flows + 1) / bandwidth (s): links of one bandwidth keep
  // their most flows only, divided once (a division by a positive number is monotone, so the
  // maximum is the same number as dividing every link's and taking the most); a route has a
  // few bandwidths (GPU and NIC legs, local and global cables).
  struct LongestQueue {
    std::array<double, 4> bandwidth_Bps{};
    std::array<uint32_t, 4> flows{};
    int kinds = 0;
    double overflow_s = 0;  // links of a fifth bandwidth and beyond, divided each
    void add(double bw_Bps, uint32_t link_flows) {
      for (int i = 0; i < kinds; ++i)
        if (bandwidth_Bps[i] == bw_Bps) {
          flows[i] = std::max(flows[i], link_flows);
          return;
        }
      if (kinds < 4) {
        bandwidth_Bps[kinds] = bw_Bps, flows[kinds++] = link_flows;
        return;
      }
      overflow_s = std::max(overflow_s, (link_flows + 1.0) / bw_Bps);
    }
    double seconds() const {
      double q = overflow_s;
      for (int i = 0; i < kinds; ++i) q = std::max(q, (flows[i] + 1.0) / bandwidth_Bps[i]);
      return q;
    }
  };
  // A rank's up-leg (GPU -> NIC -> router; its down-leg is the reverse), UGAL's routers only.
  std::span<const LinkId> legs(int rank) const {
    const auto r = static_cast<std::size_t>(rank);
    return std::span<const LinkId>(legs_).subspan(leg_begin_[r], leg_begin_[r + 1] - leg_begin_[r]);
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
    const auto x = static_cast<uint64_t>(valiant_spread(s, d));
    const uint64_t top = m == 1 ? x : x / (m * m), turn = flow_key == 0 ? turn0_ : mix64(seed_mix_ ^ flow_key) % k;
    int via = static_cast<int>(top + turn >= k ? top + turn - k : top + turn);  // both below k
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
    return (s.index + d.scrambled) % spread_period_;
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
    // (One cable per bundle: copy 0, whatever the hash.)
    const auto copy = d_.local_parallel == 1 ? 0
                                             : static_cast<int>(mix64(spread.hash + static_cast<uint64_t>(spread.hops++)) %
                                                                static_cast<uint64_t>(d_.local_parallel));
    out.push_back(d_.local_link(at, to % d_.routers_per_group, copy));
  }

  // Router `at` to group `to_group` through the spread's global cable; returns the router
  // reached (`at` itself inside its own group).
  int to_group(int at, int from_group, int to_group, Spread& spread, std::vector<LinkId>& out) const {
    if (from_group == to_group) return at;
    const std::size_t g = d_.global_index(from_group, to_group, spread.global);
    local_hop(at, global_ends_[g].from, spread, out);
    out.push_back(d_.global[g]);
    return global_ends_[g].to;
  }

  // Router to router: through group `via` (the source's own for a minimal route).
  // A Valiant route's cables are valiant_spread's digits 1 and 2.
  void fabric(const End& s, const End& d, int via, std::vector<LinkId>& out) const {
    Spread spread{global_copy(s, d), d_.local_parallel == 1 ? 0 : mix64((static_cast<uint64_t>(s.rank) << 32) | static_cast<uint64_t>(d.rank))};
    const int m = d_.links_per_group_pair;
    const int64_t x = via != s.group && m > 1 ? valiant_spread(s, d) : 0;
    if (via != s.group && m > 1) spread.global = static_cast<int>(x / m % m);
    int at = to_group(s.router, s.group, via, spread, out);  // Valiant leg, if any
    if (via != s.group && m > 1) spread.global = static_cast<int>(x % m);
    at = to_group(at, via, d.group, spread, out);
    local_hop(at, d.router, spread, out);
  }

  const DragonflyLayout& d_;
  RoutingKind kind_;
  uint64_t seed_mix_;
  int64_t per_group_;  // R: ranks per group
  int64_t scramble_;   // A of valiant_spread
  int64_t spread_period_;  // K of valiant_spread (1 with at most 2 groups: no Valiant route)
  uint64_t turn0_;     // intermediate's turn for flow key 0 (a collective's transfers)
  struct GlobalEnds {
    int from, to;  // router indices
  };
  std::vector<GlobalEnds> global_ends_;  // by DragonflyLayout::global_index
  std::vector<double> bandwidth_Bps_;    // UGAL's: by link
  LoadOracle oracle_;
  Route scratch_;  // route()'s and choose_into's, for UGAL's choice
  // UGAL's: every rank's End, and its up-leg's links (legs_[leg_begin_[r], leg_begin_[r + 1])).
  std::vector<End> ends_;
  std::vector<LinkId> legs_;
  std::vector<std::size_t> leg_begin_;
};

}  // namespace

std::unique_ptr<Router> make_dragonfly_router(const Topology& t, RoutingKind kind, uint64_t seed) {
  return std::make_unique<DragonflyRouter>(t, kind, seed);
}

}  // namespace cs::topo::detail

namespace cs::topo {

int route_lanes(const TopologyParams& params, RoutingKind kind) {
  return params.kind == TopologyKind::dragonfly ? detail::dragonfly_lanes(kind, params.groups) : 1;
}

}  // namespace cs::topo
