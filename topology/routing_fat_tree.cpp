// Fat-tree routers (D-mod-K, ECMP, adaptive) over any number of tiers, computed from
// FatTreeLayout without a graph search. A route between two leaves climbs to their lowest
// common tier T and comes down; it is fixed by the up-port taken at each level 1 .. T-1, and
// those ports, read as a mixed-radix number (level 1 most significant), are the local index of
// the tier-T switch it turns at: its "choice". The way down is the mirror of the way up from
// the destination leaf through the same ports.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "topology/routing_detail.hpp"

namespace cs::topo::detail {
namespace {

class FatTreeRouter final : public CachedRouter {
 public:
  FatTreeRouter(const Topology& t, RoutingKind kind, uint64_t seed)
      : CachedRouter(t), f_(*t.fat_tree()), kind_(kind), seed_mix_(mix64(seed)) {}

  void set_load_oracle(LoadOracle oracle) override { load_ = std::move(oracle); }

  const Route& route(int src, int dst, uint64_t flow_key) override {
    check_ranks(src, dst);
    if (src == dst) return empty_;
    int top = 1;  // lowest common tier; 1 = same leaf (or same node)
    uint32_t choice = 0;
    const auto gs = static_cast<std::size_t>(t_.nic_index_of_rank(src));
    const auto gd = static_cast<std::size_t>(t_.nic_index_of_rank(dst));
    if (t_.node_of_rank(src) != t_.node_of_rank(dst)) {
      top = common_tier(f_.nic_leaf[gs], f_.nic_leaf[gd]);
      if (top > 1) choice = choose(gs, gd, top, flow_key);
    }
    const Key key{route_key(src, dst, 0), choice};
    if (auto it = routes_.find(key); it != routes_.end()) return it->second;
    return routes_.emplace(key, compute(src, dst, top, choice)).first->second;
  }

 private:
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

  int common_tier(int leaf_s, int leaf_d) const {
    if (leaf_s == leaf_d) return 1;
    for (int t = 2;; ++t)
      if (leaf_s / tier(t).leaves_per_group == leaf_d / tier(t).leaves_per_group) return t;
  }

  uint32_t choose(std::size_t gs, std::size_t gd, int top, uint64_t flow_key) {
    uint32_t choice = 0;
    if (kind_ == RoutingKind::ecmp) {
      // Level 1 hashes exactly as the 2-tier router always has; each level above re-mixes.
      const uint64_t pair = (static_cast<uint64_t>(gs) << 32) | static_cast<uint64_t>(gd);
      uint64_t h = mix64(mix64(seed_mix_ ^ pair) ^ flow_key);
      for (int l = 1; l < top; ++l, h = mix64(h)) {
        const auto up = static_cast<uint32_t>(tier(l).up);
        choice = choice * up + static_cast<uint32_t>(h % up);
      }
      return choice;
    }
    // D-mod-K: at level l the up-port is floor(key / per_group(l)) mod up(l), per_group(l)
    // being up(1) * .. * up(l-1) divided by the parallel links per connection at each level
    // below: the switches of a tier-l group. Port p reaches switch p mod (up / P) through
    // parallel cable p / (up / P), so the cable index, like the switch, comes from the key.
    const uint64_t key = f_.nic_key[gd];
    for (int l = 1; l < top; ++l) {
      const auto up = static_cast<uint64_t>(tier(l).up);
      const auto below = static_cast<uint64_t>(tier(l).per_group);
      choice = choice * static_cast<uint32_t>(up) + static_cast<uint32_t>(key / below % up);
    }
    if (kind_ == RoutingKind::adaptive && load_) choice = least_loaded(gs, gd, top, choice);
    return choice;
  }

  // The choice whose busiest fabric link (up and down, below tier `top`) has the fewest
  // flows; ties go to the first met from the D-mod-K choice `first` upwards (cyclically).
  // Level by level, the busiest link of every prefix of up-ports is found once.
  uint32_t least_loaded(std::size_t gs, std::size_t gd, int top, uint32_t first) {
    // worst_[i]: busiest link of prefix i at the current level; ends_ the two switches it
    // reaches (source side, destination side).
    worst_.assign(1, 0);
    ends_.assign(1, {f_.nic_leaf[gs], f_.nic_leaf[gd]});
    for (int l = 1; l < top; ++l) {
      const FatTreeTier& tr = tier(l);
      const auto up = static_cast<std::size_t>(tr.up);
      next_worst_.resize(worst_.size() * up);
      next_ends_.resize(worst_.size() * up);
      for (std::size_t i = 0; i < worst_.size(); ++i)
        for (std::size_t p = 0; p < up; ++p) {
          const LinkId a = tr.up_link[static_cast<std::size_t>(ends_[i].first) * up + p];
          const LinkId b = tr.up_link[static_cast<std::size_t>(ends_[i].second) * up + p];
          const uint32_t w = std::max({worst_[i], load_(a), load_(reverse(b))});
          next_worst_[i * up + p] = w;
          next_ends_[i * up + p] = {t_.vertex(t_.link(a).to).index, t_.vertex(t_.link(b).to).index};
        }
      worst_.swap(next_worst_);
      ends_.swap(next_ends_);
    }
    const auto n = static_cast<uint32_t>(worst_.size());
    uint32_t best = first;
    for (uint32_t i = 1; i < n; ++i) {
      const uint32_t c = (first + i) % n;
      if (worst_[c] < worst_[best]) best = c;
    }
    return best;
  }

  // Appends the up-links from `leaf` through the ports encoded in `choice` (levels 1 .. top-1).
  void climb(int leaf, int top, uint32_t choice, std::vector<LinkId>& out) const {
    ports_.resize(static_cast<std::size_t>(top));
    for (int l = top - 1; l >= 1; --l) {
      const auto up = static_cast<uint32_t>(tier(l).up);
      ports_[static_cast<std::size_t>(l)] = choice % up;
      choice /= up;
    }
    int sw = leaf;
    for (int l = 1; l < top; ++l) {
      const FatTreeTier& tr = tier(l);
      const uint32_t port = ports_[static_cast<std::size_t>(l)];
      const LinkId link = tr.up_link[static_cast<std::size_t>(int64_t{sw} * tr.up + port)];
      out.push_back(link);
      sw = t_.vertex(t_.link(link).to).index;
    }
  }

  Route compute(int src, int dst, int top, uint32_t choice) const {
    Route r;
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
      append_nic_to_gpu(t_, dst, r.links);
    }
    finish(t_, r);
    return r;
  }

  const FatTreeLayout& f_;
  RoutingKind kind_;
  uint64_t seed_mix_;
  LoadOracle load_;
  std::unordered_map<Key, Route, KeyHash> routes_;  // node-based: references stay valid
  mutable std::vector<uint32_t> ports_;
  std::vector<uint32_t> worst_, next_worst_;
  std::vector<std::pair<int, int>> ends_, next_ends_;
};

}  // namespace

std::unique_ptr<Router> make_fat_tree_router(const Topology& t, RoutingKind kind, uint64_t seed) {
  return std::make_unique<FatTreeRouter>(t, kind, seed);
}

}  // namespace cs::topo::detail
