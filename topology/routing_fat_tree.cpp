// Fat-tree routers (D-mod-K, ECMP, adaptive) over any number of tiers, computed from
// FatTreeLayout without a graph search. A route between two leaves climbs to their lowest
// common tier T and comes down; it is fixed by the up-port taken at each level 1 .. T-1, and
// those ports, read as a mixed-radix number (level 1 most significant), are the local index of
// the tier-T switch it turns at: its "choice". The way down is the mirror of the way up from
// the destination leaf through the same ports. Spray takes every choice at once: its routes
// name, per level, the bundle of links the choices spread over (routing.hpp).
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "topology/all_pairs.hpp"
#include "topology/routing_detail.hpp"

namespace cs::topo::detail {
namespace {

class FatTreeRouter final : public CachedRouter {
 public:
  FatTreeRouter(const Topology& t, RoutingKind kind, uint64_t seed)
      : CachedRouter(t), f_(*t.fat_tree()), kind_(kind), seed_mix_(mix64(seed)) {
    if (kind_ == RoutingKind::spray) {
      SprayBundles spray = spray_bundles(t, f_);
      bundles_ = std::move(spray.bundles);
      up_bundle_ = std::move(spray.up);
      down_bundle_ = std::move(spray.down);
    }
  }

  void set_load_oracle(LoadOracle oracle) override { load_ = std::move(oracle); }
  std::span<const LinkBundle> bundles() const override { return bundles_; }

  const Route& route(int src, int dst, uint64_t flow_key) override {
    check_ranks(src, dst);
    if (src == dst) return empty_;
    const auto [top, choice] = choice_now(src, dst, flow_key);
    const Key key{route_key(src, dst, 0), choice};
    if (auto it = routes_.find(key); it != routes_.end()) return it->second;
    Route r;
    compute(src, dst, top, choice, r);
    return routes_.emplace(key, std::move(r)).first->second;
  }

  std::unique_ptr<AllPairsCounter> all_pairs_counter(std::span<const int> ranks) const override {
    if (kind_ == RoutingKind::adaptive) return nullptr;
    // Re-routed pairs leave the tables' arithmetic: route by route.
    if (t_.has_failures()) return CachedRouter::all_pairs_counter(ranks);
    // Between the two leaves: up from the source's, down the mirror to the destination's; a
    // sprayed hop counts on its bundle. The walk is route()'s, from tables made once for the
    // count (PairTables): no division per pair, where choose() and climb() take some 16.
    auto tables = std::make_shared<const PairTables>(*this, ranks);
    std::vector<uint32_t> leaf_of;  // the source classes, where hops depend on the leaf alone
    if (hops_by_source_leaf())
      for (const std::size_t nic : tables->nic) leaf_of.push_back(static_cast<uint32_t>(f_.nic_leaf[nic]));
    return make_leg_counter(t_, f_.nic_up, ranks, [this, tables](std::size_t i, std::size_t j, HopSink& sink) {
      const PairTables& p = *tables;
      const std::size_t gs = p.nic[i], gd = p.nic[j];
      const int top = p.common_tier(gs, gd);
      if (top == 1) return;
      uint32_t port[kMaxPairTiers];
      if (kind_ == RoutingKind::dmodk) {
        for (int l = 1; l < top; ++l) port[l] = p.dmodk_port(gd, l);
      } else {
        ports(gs, gd, top, 0, [&](int l, uint32_t q) { port[l] = q; });
      }
      walk(p, gs, gd, top, port, sink, nullptr);
    }, std::move(leaf_of));
  }

  // Adaptive's all-pairs stage, pair after pair in the order StagePlacement places them, each
  // choosing as route() would after the pairs before it were placed: by a copy of the loads
  // the search reads (CountedLoads), taken from the oracle once and raised by each pair's
  // choice, not by the oracle per link (an all-to-all over 16,384 GPUs chooses 268 M times).
  std::unique_ptr<AllPairsCounter> choosing_pairs_counter(std::span<const int> ranks) override {
    if (kind_ != RoutingKind::adaptive || !load_ || t_.has_failures()) return nullptr;
    auto count = std::make_shared<ChoosingCount>(*this, ranks);
    if (!count->loads.exact) return nullptr;
    auto legs = make_leg_counter(t_, f_.nic_up, ranks, [this, count](std::size_t i, std::size_t j, HopSink& sink) {
      const PairTables& p = count->tables;
      const std::size_t gs = p.nic[i], gd = p.nic[j];
      const int top = p.common_tier(gs, gd);
      if (top == 1) return;
      uint32_t first = 0;  // D-mod-K's choice
      for (int l = 1; l < top; ++l) first = first * static_cast<uint32_t>(tier(l).up) + p.dmodk_port(gd, l);
      uint32_t choice = least_loaded(count->loads, f_.nic_leaf[gs], f_.nic_leaf[gd], top, first, count->scratch);
      uint32_t port[kMaxPairTiers];
      for (int l = top - 1; l >= 1; --l) {
        port[l] = choice % static_cast<uint32_t>(tier(l).up);
        choice /= static_cast<uint32_t>(tier(l).up);
      }
      walk(p, gs, gd, top, port, sink, &count->loads);
    });
    return std::make_unique<ChoosingCounter>(std::move(legs), std::move(count), ranks.size());
  }

  bool choose_into(int src, int dst, uint64_t flow_key, Route& out) override {
    if (kind_ != RoutingKind::adaptive) return false;
    if (same_rank_into(src, dst, out)) return true;
    const auto [top, choice] = choice_now(src, dst, flow_key);
    compute(src, dst, top, choice, out);
    return true;
  }

  bool route_into(int src, int dst, uint64_t flow_key, Route& out) const override {
    if (kind_ == RoutingKind::adaptive) return false;
    if (same_rank_into(src, dst, out)) return true;
    const auto [top, choice] = fixed_choice(src, dst, flow_key);
    compute(src, dst, top, choice, out);
    return true;
  }

 private:
  // What an all-pairs count reads per pair, by table: per member its NIC; per NIC its leaf's
  // group at every tier (tier 1: the leaf) and its D-mod-K port at every level; per tier l and
  // up-port the link and the tier-(l+1) switch it reaches.
  static constexpr int kMaxPairTiers = 8;
  struct PairTables {
    PairTables(const FatTreeRouter& r, std::span<const int> ranks) : tiers(r.f_.tiers) {
      for (int rank : ranks) nic.push_back(static_cast<std::size_t>(r.t_.nic_index_of_rank(rank)));
      if (tiers > kMaxPairTiers) throw std::invalid_argument("fat-tree router: more than 8 tiers");
      const std::size_t nics = r.f_.nic_leaf.size(), T = static_cast<std::size_t>(tiers);
      groups.resize(nics * (T + 1));
      dmodk_ports.resize(nics * T);
      for (std::size_t g = 0; g < nics; ++g) {
        for (int t = 1; t <= tiers; ++t)
          groups[g * (T + 1) + static_cast<std::size_t>(t - 1)] = r.f_.nic_leaf[g] / r.tier(t).leaves_per_group;
        groups[g * (T + 1) + T] = 0;  // above the top: one group
        for (int l = 1; l < tiers; ++l)
          dmodk_ports[g * T + static_cast<std::size_t>(l)] = r.dmodk_port(r.f_.nic_key[g], l);
      }
      links.resize(T);
      reached.resize(T);
      up.resize(T);
      for (int l = 1; l < tiers; ++l) {
        const FatTreeTier& tr = r.tier(l);
        up[static_cast<std::size_t>(l)] = tr.up;
        links[static_cast<std::size_t>(l)] = tr.up_link;
        for (LinkId link : tr.up_link) reached[static_cast<std::size_t>(l)].push_back(r.t_.vertex(r.t_.link(link).to).index);
      }
    }
    int64_t group(std::size_t nic, int t) const {
      return groups[nic * static_cast<std::size_t>(tiers + 1) + static_cast<std::size_t>(t - 1)];
    }
    int common_tier(std::size_t gs, std::size_t gd) const {
      int top = 1;
      while (group(gs, top) != group(gd, top)) ++top;
      return top;
    }
    // Where tier l's up-link from switch sw through `port` is kept in the per-level tables.
    std::size_t slot(int l, int sw, std::size_t port) const {
      return static_cast<std::size_t>(int64_t{sw} * up[static_cast<std::size_t>(l)]) + port;
    }
    uint32_t dmodk_port(std::size_t nic, int l) const {
      return dmodk_ports[nic * static_cast<std::size_t>(tiers) + static_cast<std::size_t>(l)];
    }
    LinkId up_link(int l, int sw, std::size_t port) const { return links[static_cast<std::size_t>(l)][slot(l, sw, port)]; }
    int next(int l, int sw, std::size_t port) const { return reached[static_cast<std::size_t>(l)][slot(l, sw, port)]; }
    int tiers;
    std::vector<std::size_t> nic;  // per member
    std::vector<int64_t> groups;
    std::vector<uint32_t> dmodk_ports;
    std::vector<int> up;
    std::vector<std::vector<LinkId>> links;
    std::vector<std::vector<int>> reached;
  };

  // Cache key: the ranks (as route_key) and the choice, which may exceed 16 bits.
  struct Key {
    uint64_t ranks;
    uint32_t choice;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return static_cast<std::size_t>(mix64(k.ranks ^ (uint64_t{k.choice} << 40 | k.choice)));
    }
  };

  const FatTreeTier& tier(int t) const { return f_.tier[static_cast<std::size_t>(t - 1)]; }

  // Whether a pair's hops between the leaves depend only on the source's leaf and the
  // destination (AllPairsCounter::source_classes): D-mod-K's ports come from the destination's
  // key and spray's bundles from the two leaves, where ECMP hashes the source's NIC and
  // adaptive's choice reads the loads. On an intact fabric (a degraded one counts route by
  // route).
  bool hops_by_source_leaf() const { return kind_ == RoutingKind::dmodk || kind_ == RoutingKind::spray; }

  int common_tier(int leaf_s, int leaf_d) const {
    if (leaf_s == leaf_d) return 1;
    for (int t = 2;; ++t)
      if (leaf_s / tier(t).leaves_per_group == leaf_d / tier(t).leaves_per_group) return t;
  }

  // The lowest common tier of two ranks (1: same leaf or node) and the path choice there of
  // every routing but adaptive's load-aware pick (which starts from D-mod-K's).
  std::pair<int, uint32_t> fixed_choice(int src, int dst, uint64_t flow_key) const {
    if (t_.node_of_rank(src) == t_.node_of_rank(dst)) return {1, 0};
    const auto gs = static_cast<std::size_t>(t_.nic_index_of_rank(src));
    const auto gd = static_cast<std::size_t>(t_.nic_index_of_rank(dst));
    const int top = common_tier(f_.nic_leaf[gs], f_.nic_leaf[gd]);
    if (top == 1) return {1, 0};
    const uint32_t choice = choose(gs, gd, top, flow_key);
    return {top, t_.has_failures() ? surviving_choice(gs, gd, top, choice, flow_key) : choice};
  }

  // On a degraded fabric (topology/failures.hpp): `choice` if its up-paths from both leaves
  // cross live cables only; else, level by level from the leaf, the port kept where a live
  // path through it remains, otherwise one of the ports that keep one. D-mod-K (and
  // adaptive's start) takes live port (x D + k) mod L, x = the destination key's next digit
  // floor(key / (per_group x up)), k the dead port's rank among the D dead ones, L live
  // ports: the destinations of the dead ports spread round-robin over the live ones, those
  // of one leaf on distinct ports, as a subnet manager's recomputed tables balance them (a
  // hash, or x alone, can put two dead ports' destinations of one leaf on one down-link
  // beside its own: 3 NICs' traffic where one spine of 16 down needs at most 2). ECMP
  // re-hashes the flow over the live members (resilient hashing: flows on live ports stay).
  // Throws RouteError when no up-down path survives.
  uint32_t surviving_choice(std::size_t gs, std::size_t gd, int top, uint32_t choice, uint64_t flow_key) const {
    uint32_t port[kMaxPairTiers];
    for (int l = top - 1; l >= 1; --l) {
      port[l] = choice % static_cast<uint32_t>(tier(l).up);
      choice /= static_cast<uint32_t>(tier(l).up);
    }
    const uint64_t flow_hash = mix64(seed_mix_ ^ ((static_cast<uint64_t>(gs) << 32) | gd) ^ mix64(flow_key));
    const auto spread = [&](int l, uint32_t dead_port, const std::vector<uint32_t>& live_ports) {
      if (kind_ == RoutingKind::ecmp) return mix64(flow_hash + static_cast<uint64_t>(l));
      const auto up = static_cast<uint64_t>(tier(l).up), dead = up - live_ports.size();
      const auto rank = static_cast<uint64_t>(dead_port) -
                        static_cast<uint64_t>(std::lower_bound(live_ports.begin(), live_ports.end(), dead_port) - live_ports.begin());
      return f_.nic_key[gd] / static_cast<uint64_t>(tier(l).per_group) / up * dead + rank;
    };
    std::vector<uint32_t> live;
    for (int l = 1, s = f_.nic_leaf[gs], d = f_.nic_leaf[gd]; l < top; ++l) {
      live.clear();
      for (uint32_t p = 0; p < static_cast<uint32_t>(tier(l).up); ++p)
        if (live_up(l, s, p) && live_up(l, d, p) && reaches_top(l + 1, top, next_switch(l, s, p), next_switch(l, d, p)))
          live.push_back(p);
      if (live.empty())
        throw RouteError("no up-down path between " + t_.vertex(f_.leaf[static_cast<std::size_t>(f_.nic_leaf[gs])]).name +
                         " and " + t_.vertex(f_.leaf[static_cast<std::size_t>(f_.nic_leaf[gd])]).name +
                         " survives the failed cables (topology.failed)");
      if (std::find(live.begin(), live.end(), port[l]) == live.end())
        port[l] = live[spread(l, port[l], live) % live.size()];
      s = next_switch(l, s, port[l]);
      d = next_switch(l, d, port[l]);
    }
    uint32_t out = 0;
    for (int l = 1; l < top; ++l) out = out * static_cast<uint32_t>(tier(l).up) + port[l];
    return out;
  }
  bool live_up(int l, int sw, uint32_t p) const {
    return !t_.failed(tier(l).up_link[static_cast<std::size_t>(int64_t{sw} * tier(l).up + p)]);
  }
  int next_switch(int l, int sw, uint32_t p) const {
    return t_.vertex(t_.link(tier(l).up_link[static_cast<std::size_t>(int64_t{sw} * tier(l).up + p)]).to).index;
  }
  // Whether tier-l switches s and d (above the two leaves) reach tier `top` through the same
  // ports over live cables.
  bool reaches_top(int l, int top, int s, int d) const {
    if (l == top) return true;
    for (uint32_t p = 0; p < static_cast<uint32_t>(tier(l).up); ++p)
      if (live_up(l, s, p) && live_up(l, d, p) && reaches_top(l + 1, top, next_switch(l, s, p), next_switch(l, d, p)))
        return true;
    return false;
  }

  // The path choice: the up-ports below, as a mixed-radix number (level 1 most significant).
  uint32_t choose(std::size_t gs, std::size_t gd, int top, uint64_t flow_key) const {
    uint32_t choice = 0;
    ports(gs, gd, top, flow_key,
          [&](int l, uint32_t port) { choice = choice * static_cast<uint32_t>(tier(l).up) + port; });
    return choice;
  }

  // at(l, port) for each level l = 1 .. top-1 of a pair's path, in order (adaptive: D-mod-K's,
  // its load-aware pick starts there).
  template <class At>
  void ports(std::size_t gs, std::size_t gd, int top, uint64_t flow_key, At&& at) const {
    if (kind_ == RoutingKind::spray) {  // the first path stands for them all
      for (int l = 1; l < top; ++l) at(l, 0u);
      return;
    }
    if (kind_ == RoutingKind::ecmp) {
      // Level 1 hashes exactly as the 2-tier router always has; each level above re-mixes.
      const uint64_t pair = (static_cast<uint64_t>(gs) << 32) | static_cast<uint64_t>(gd);
      uint64_t h = mix64(mix64(seed_mix_ ^ pair) ^ flow_key);
      for (int l = 1; l < top; ++l, h = mix64(h)) at(l, static_cast<uint32_t>(h % static_cast<uint64_t>(tier(l).up)));
      return;
    }
    for (int l = 1; l < top; ++l) at(l, dmodk_port(f_.nic_key[gd], l));
  }

  // D-mod-K: at level l the up-port is floor(key / per_group(l)) mod up(l), per_group(l)
  // being up(1) * .. * up(l-1) divided by the parallel links per connection at each level
  // below: the switches of a tier-l group. Port p reaches switch p mod (up / P) through
  // parallel cable p / (up / P), so the cable index, like the switch, comes from the key.
  uint32_t dmodk_port(uint64_t key, int l) const {
    return static_cast<uint32_t>(key / static_cast<uint64_t>(tier(l).per_group) % static_cast<uint64_t>(tier(l).up));
  }

  // fixed_choice, then adaptive's load-aware pick (by the oracle now).
  static constexpr uint32_t kFailedLoad = ~uint32_t{0};
  std::pair<int, uint32_t> choice_now(int src, int dst, uint64_t flow_key) {
    auto [top, choice] = fixed_choice(src, dst, flow_key);
    if (kind_ == RoutingKind::adaptive && load_ && top > 1)
      choice = least_loaded(OracleLoads{*this}, f_.nic_leaf[static_cast<std::size_t>(t_.nic_index_of_rank(src))],
                            f_.nic_leaf[static_cast<std::size_t>(t_.nic_index_of_rank(dst))], top, choice, scratch_);
    return {top, choice};
  }

  // The loads least_loaded reads, and the switches it walks to: port_load(l, s, d, port) is
  // the busier of tier l's up-link from source-side switch s through `port` and of the
  // reverse of d's (the way down), next(l, sw, port) the tier-(l+1) switch that up-link reaches.
  // By the oracle now, a failed cable as kFailedLoad (surviving_choice found a live path):
  // (row(l, s, d)[port] is port_load(l, s, d, port) for every port, read from the same rows.)
  struct OracleLoads {
    const FatTreeRouter& router;
    struct Row {
      const FatTreeRouter& router;
      const LinkId *s, *d;  // the two switches' up-links, by port
      uint32_t operator[](std::size_t port) const {
        return router.t_.failed(s[port]) || router.t_.failed(d[port])
                   ? kFailedLoad
                   : std::max(router.load_(s[port]), router.load_(reverse(d[port])));
      }
    };
    Row row(int l, int s, int d) const {
      const FatTreeTier& tr = router.tier(l);
      const auto up = static_cast<std::size_t>(tr.up);
      return {router, &tr.up_link[static_cast<std::size_t>(s) * up], &tr.up_link[static_cast<std::size_t>(d) * up]};
    }
    int next(int l, int sw, std::size_t port) const { return router.next_switch(l, sw, static_cast<uint32_t>(port)); }
  };
  // or by a choosing count's own copy (choosing_pairs_counter): per level l and PairTables
  // slot of tier l's up-links, the flows on the up-link and on its reverse as the oracle gave
  // them when the count began, plus the pairs counted since. Exact where no two slots share a
  // link (the builder's trees; checked).
  // The links' latencies are kept beside, by slot, for the pairs' walks.
  struct CountedLoads {
    struct Level {
      std::vector<uint32_t> up, down, up_start, down_start;  // by slot: now, and when the count began
      std::vector<double> up_latency_s, down_latency_s;
    };
    CountedLoads(const FatTreeRouter& router, const PairTables& p) : tables(p), level(static_cast<std::size_t>(p.tiers)) {
      std::vector<char> seen(router.t_.num_links(), 0);
      for (int l = 1; l < p.tiers; ++l) {
        Level& v = level[static_cast<std::size_t>(l)];
        for (LinkId link : p.links[static_cast<std::size_t>(l)]) {
          for (LinkId each : {link, reverse(link)}) {
            if (seen[each] != 0) exact = false;
            seen[each] = 1;
          }
          v.up.push_back(router.load_(link));
          v.down.push_back(router.load_(reverse(link)));
          v.up_latency_s.push_back(router.t_.link(link).latency_s);
          v.down_latency_s.push_back(router.t_.link(reverse(link)).latency_s);
        }
        v.up_start = v.up;
        v.down_start = v.down;
      }
    }
    struct Row {
      const uint32_t *s, *d;
      uint32_t operator[](std::size_t port) const { return std::max(s[port], d[port]); }
    };
    Row row(int l, int s, int d) const {
      const Level& v = level[static_cast<std::size_t>(l)];
      return {&v.up[tables.slot(l, s, 0)], &v.down[tables.slot(l, d, 0)]};
    }
    int next(int l, int sw, std::size_t port) const { return tables.next(l, sw, port); }
    // Adds what the counted pairs put on each fabric link to `crossings`.
    void add_crossings(std::span<uint64_t> crossings) const {
      for (int l = 1; l < tables.tiers; ++l) {
        const Level& v = level[static_cast<std::size_t>(l)];
        const std::vector<LinkId>& links = tables.links[static_cast<std::size_t>(l)];
        for (std::size_t k = 0; k < links.size(); ++k) {
          crossings[links[k]] += v.up[k] - v.up_start[k];
          crossings[reverse(links[k])] += v.down[k] - v.down_start[k];
        }
      }
    }
    const PairTables& tables;
    std::vector<Level> level;
    bool exact = true;
  };
  // least_loaded's scratch: the choices under one port of each level, level 1's port loads.
  struct Scratch {
    std::vector<uint32_t> choices_below, level1;
  };
  struct ChoosingCount {
    ChoosingCount(const FatTreeRouter& router, std::span<const int> ranks) : tables(router, ranks), loads(router, tables) {}
    PairTables tables;
    CountedLoads loads;
    Scratch scratch;
  };
  // choosing_pairs_counter's: the leg counter's count (the fabric hops' latencies summed, their
  // loads raised), and, once the last source is counted, the fabric links' crossings: what the
  // pairs added to the copy of their loads.
  class ChoosingCounter final : public AllPairsCounter {
   public:
    ChoosingCounter(std::unique_ptr<AllPairsCounter> legs, std::shared_ptr<ChoosingCount> count, std::size_t sources)
        : legs_(std::move(legs)), count_(std::move(count)), sources_(sources) {}
    void add_sources(std::size_t first, std::size_t last, PairLoads& into) const override {
      legs_->add_sources(first, last, into);
      if (last == sources_) count_->loads.add_crossings(into.crossings);
    }
    // A choosing count's routes depend on the pairs counted before them (each sees their
    // loads), so no pair's route can be listed on its own: the exchange lists by the fixed
    // counters (Network::all_pairs_counter), never this one.
    void append_links(std::size_t, std::size_t, Route&, std::vector<uint32_t>&) const override {
      throw std::logic_error("fat-tree router: an adaptive all-pairs count lists no single route");
    }

   private:
    std::unique_ptr<AllPairsCounter> legs_;
    std::shared_ptr<ChoosingCount> count_;
    std::size_t sources_;
  };

  // A pair's fabric hops through ports port[1 .. top-1] into `sink`: up from the source's
  // leaf, down the mirror into the destination's (a sprayed hop on its bundle). With
  // `counted`, a hop adds a flow to the count's copy of its load instead of a crossing to the
  // sink (ChoosingCounter adds them up at the end), its latency read from the copy's table.
  void walk(const PairTables& p, std::size_t gs, std::size_t gd, int top, const uint32_t* port, HopSink& sink,
            CountedLoads* counted) const {
    const bool spray = kind_ == RoutingKind::spray;
    const int leaf_s = f_.nic_leaf[gs], leaf_d = f_.nic_leaf[gd];
    for (int l = 1, sw = leaf_s; l < top; ++l) {
      const std::size_t k = p.slot(l, sw, port[l]);
      if (counted != nullptr) {
        CountedLoads::Level& v = counted->level[static_cast<std::size_t>(l)];
        sink.latency_s += v.up_latency_s[k];
        ++v.up[k];
      } else {
        sink.hop(p.links[static_cast<std::size_t>(l)][k], spray ? bundle_of(up_bundle_, l, leaf_s) : kNoBundle);
      }
      sw = p.reached[static_cast<std::size_t>(l)][k];
    }
    std::size_t down[kMaxPairTiers];
    for (int l = 1, sw = leaf_d; l < top; ++l) {
      down[l] = p.slot(l, sw, port[l]);
      sw = p.reached[static_cast<std::size_t>(l)][down[l]];
    }
    for (int l = top - 1; l >= 1; --l) {
      if (counted != nullptr) {
        CountedLoads::Level& v = counted->level[static_cast<std::size_t>(l)];
        sink.latency_s += v.down_latency_s[down[l]];
        ++v.down[down[l]];
      } else {
        sink.hop(reverse(p.links[static_cast<std::size_t>(l)][down[l]]), spray ? bundle_of(down_bundle_, l, leaf_d) : kNoBundle);
      }
    }
  }

  // The choice whose busiest fabric link (up and down, below tier `top`) has the fewest
  // flows; ties go to the first met from the D-mod-K choice `first` upwards (cyclically).
  // A depth-first search over the up-ports in that cyclic order (from `first` to the last
  // choice, then from 0), keeping the best so far: a prefix whose busiest link already has as
  // many flows as the best is cut (its choices could only tie, and ties go to the earlier),
  // and the search ends once the best has as few as the least loaded level-1 port (no choice
  // has fewer). The same choice as scoring every choice, which at 3 tiers of radix 64 read
  // 2 x 1,056 loads per transfer (an adaptive all-to-all over 4,096 GPUs: 300 s -> 16 s CPU).
  // Between leaves leaf_s and leaf_d, by `loads` (OracleLoads, CountedLoads).
  template <class Loads>
  uint32_t least_loaded(const Loads& loads, int leaf_s, int leaf_d, int top, uint32_t first, Scratch& scratch) const {
    // choices_below[l]: the choices under one level-l port (those of the levels above it).
    std::vector<uint32_t>& choices_below = scratch.choices_below;
    choices_below.assign(static_cast<std::size_t>(top), 1);
    for (int l = top - 2; l >= 1; --l)
      choices_below[static_cast<std::size_t>(l)] = choices_below[static_cast<std::size_t>(l + 1)] * static_cast<uint32_t>(tier(l + 1).up);
    const uint32_t n = choices_below[1] * static_cast<uint32_t>(tier(1).up);
    // Level 1's ports, read once: the search's floor.
    std::vector<uint32_t>& level1 = scratch.level1;
    level1.resize(static_cast<std::size_t>(tier(1).up));
    uint32_t floor = kFailedLoad;
    const auto ports1 = loads.row(1, leaf_s, leaf_d);
    for (std::size_t p = 0; p < level1.size(); ++p) {
      level1[p] = ports1[p];
      floor = std::min(floor, level1[p]);
    }
    Best best{first, uint64_t{kFailedLoad} + 1, floor};  // any choice beats "none yet"
    search(loads, scratch, 1, top, leaf_s, leaf_d, 0, 0, first, n, best);
    if (best.load > floor) search(loads, scratch, 1, top, leaf_s, leaf_d, 0, 0, 0, first, best);
    return best.choice;
  }

  struct Best {
    uint32_t choice;
    uint64_t load;   // its busiest link's flows (kFailedLoad + 1: none found yet)
    uint32_t floor;  // no choice has fewer: the search may stop there
  };
  // The choices in [lo, hi) below level-l switches s and d (source and destination side),
  // `base` the first choice under them and `worst` the busiest link above, in ascending order.
  template <class Loads>
  void search(const Loads& loads, const Scratch& scratch, int l, int top, int s, int d, uint32_t worst, uint32_t base,
              uint32_t lo, uint32_t hi, Best& best) const {
    const uint32_t below = scratch.choices_below[static_cast<std::size_t>(l)];
    const auto up = static_cast<std::size_t>(tier(l).up);
    const auto ports = loads.row(l, s, d);
    // The ports whose choices [begin, begin + below) meet [lo, hi).
    const std::size_t p_begin = lo > base ? (lo - base) / below : 0;
    const std::size_t p_end = hi > base ? std::min<std::size_t>(up, (hi - base + below - 1) / below) : 0;
    for (std::size_t p = p_begin; p < p_end; ++p) {
      const uint32_t begin = base + static_cast<uint32_t>(p) * below;
      const uint32_t w = std::max(worst, l == 1 ? scratch.level1[p] : ports[p]);
      if (w >= best.load) continue;
      if (l + 1 == top) {
        best = {begin, w, best.floor};
      } else {
        search(loads, scratch, l + 1, top, loads.next(l, s, p), loads.next(l, d, p), w, begin, lo, hi, best);
      }
      if (best.load <= best.floor) return;
    }
  }

  // Appends the up-links from `leaf` through the ports encoded in `choice` (levels 1 .. top-1).
  void climb(int leaf, int top, uint32_t choice, std::vector<LinkId>& out) const {
    // Level l's port is digit l of `choice` in the mixed radix up(1) .. up(top-1), level 1
    // most significant: choice / (up(l+1) x .. x up(top-1)) mod up(l).
    uint32_t below = 1;
    for (int l = 2; l < top; ++l) below *= static_cast<uint32_t>(tier(l).up);
    int sw = leaf;
    for (int l = 1; l < top; ++l) {
      const FatTreeTier& tr = tier(l);
      const uint32_t port = choice / below % static_cast<uint32_t>(tr.up);
      if (l + 1 < top) below /= static_cast<uint32_t>(tier(l + 1).up);
      const LinkId link = tr.up_link[static_cast<std::size_t>(int64_t{sw} * tr.up + port)];
      out.push_back(link);
      sw = t_.vertex(t_.link(link).to).index;
    }
  }

  // The route for a choice, into r (cleared first).
  void compute(int src, int dst, int top, uint32_t choice, Route& r) const {
    r.links.clear();
    r.bundle.clear();
    if (t_.node_of_rank(src) == t_.node_of_rank(dst)) {
      append_same_node(t_, src, dst, r.links);
    } else {
      const auto gs = static_cast<std::size_t>(t_.nic_index_of_rank(src));
      const auto gd = static_cast<std::size_t>(t_.nic_index_of_rank(dst));
      append_gpu_to_nic(t_, src, r.links);
      r.links.push_back(f_.nic_up[gs]);
      climb(f_.nic_leaf[gs], top, choice, r.links);
      const std::size_t down = r.links.size();
      climb(f_.nic_leaf[gd], top, choice, r.links);
      std::reverse(r.links.begin() + static_cast<std::ptrdiff_t>(down), r.links.end());
      for (std::size_t i = down; i < r.links.size(); ++i) r.links[i] = reverse(r.links[i]);
      r.links.push_back(reverse(f_.nic_up[gd]));
      if (kind_ == RoutingKind::spray && top > 1) {
        // Up-hops at levels 1 .. top-1 start right after the NIC's cable; the down-hops
        // follow, from level top-1 down to 1.
        const std::size_t up = down - static_cast<std::size_t>(top - 1);
        r.bundle.assign(r.links.size(), kNoBundle);
        for (int l = 1; l < top; ++l) {
          r.bundle[up + static_cast<std::size_t>(l - 1)] = bundle_of(up_bundle_, l, f_.nic_leaf[gs]);
          r.bundle[down + static_cast<std::size_t>(top - 1 - l)] = bundle_of(down_bundle_, l, f_.nic_leaf[gd]);
        }
      }
      append_nic_to_gpu(t_, dst, r.links);
      if (!r.bundle.empty()) r.bundle.resize(r.links.size(), kNoBundle);
    }
    finish(t_, r);
  }

  uint32_t bundle_of(const std::vector<uint32_t>& table, int level, int leaf) const {
    return table[static_cast<std::size_t>(level - 1) * static_cast<std::size_t>(tier(1).switches) +
                 static_cast<std::size_t>(leaf)];
  }

  const FatTreeLayout& f_;
  RoutingKind kind_;
  uint64_t seed_mix_;
  LoadOracle load_;
  std::unordered_map<Key, Route, KeyHash> routes_;  // node-based: references stay valid
  // Spray: the bundles, and per (level - 1) * leaves + leaf its up- and down-bundle.
  std::vector<LinkBundle> bundles_;
  std::vector<uint32_t> up_bundle_, down_bundle_;
  Scratch scratch_;  // least_loaded's, for route() and choose_into
};

}  // namespace

std::unique_ptr<Router> make_fat_tree_router(const Topology& t, RoutingKind kind, uint64_t seed) {
  return std::make_unique<FatTreeRouter>(t, kind, seed);
}

}  // namespace cs::topo::detail
