#pragma once
// Internal to the routers: the shared cache and the node-side legs of every route.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "topology/all_pairs.hpp"
#include "topology/routing.hpp"

namespace cs::topo::detail {

// Cache key: ranks < 2^24 (kMaxGpus) and path choice < 2^16 (kMaxSwitchRadix).
inline uint64_t route_key(int src, int dst, int choice) {
  return (static_cast<uint64_t>(src) << 40) | (static_cast<uint64_t>(dst) << 16) |
         static_cast<uint64_t>(choice);
}

// SplitMix64 finalizer: a full-avalanche 64-bit mix, so neighbouring NICs and flow keys land
// on unrelated paths (ECMP spines, Valiant intermediate groups).
constexpr uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Links from a rank's GPU to its affine NIC: the direct PCIe link when there is one
// (nvswitch nodes), else through the node switch (pcie nodes).
void append_gpu_to_nic(const Topology& t, int rank, std::vector<LinkId>& out);
// The reverse: the affine NIC of `rank` to its GPU.
void append_nic_to_gpu(const Topology& t, int rank, std::vector<LinkId>& out);
// GPU -> node switch -> GPU, for two ranks of the same node (nvlink_mesh: append_mesh_path).
void append_same_node(const Topology& t, int src, int dst, std::vector<LinkId>& out);
// Two ranks of an nvlink_mesh node: their NVLink cable, else a fewest-hop path through the
// node's other GPUs (ties: out-link order). Throws RouteError when the mesh has none.
void append_mesh_path(const Topology& t, int src, int dst, std::vector<LinkId>& out);
// Sets latency_s to the sum over the links.
void finish(const Topology& t, Route& r);

// A finished route between two ranks on a fabric where every NIC has one cable up to a
// switch, nic_up[global NIC index]: the same-node path, or GPU -> NIC -> its switch ->
// middle(out) (switch to switch, appended to out) -> the destination's switch -> NIC -> GPU.
// Written into r (cleared first), or returned (nic_route).
template <class Middle>
void nic_route_into(const Topology& t, int src, int dst, const std::vector<LinkId>& nic_up, Middle&& middle,
                    Route& r) {
  r.links.clear();
  r.bundle.clear();
  if (t.node_of_rank(src) == t.node_of_rank(dst)) {
    append_same_node(t, src, dst, r.links);
  } else {
    append_gpu_to_nic(t, src, r.links);
    r.links.push_back(nic_up[static_cast<std::size_t>(t.nic_index_of_rank(src))]);
    middle(r.links);
    r.links.push_back(reverse(nic_up[static_cast<std::size_t>(t.nic_index_of_rank(dst))]));
    append_nic_to_gpu(t, dst, r.links);
  }
  finish(t, r);
}
template <class Middle>
Route nic_route(const Topology& t, int src, int dst, const std::vector<LinkId>& nic_up, Middle&& middle) {
  Route r;
  nic_route_into(t, src, dst, nic_up, std::forward<Middle>(middle), r);
  return r;
}
// An empty route (src == dst) in r.
inline void clear_route(Route& r) {
  r.links.clear();
  r.bundle.clear();
  r.latency_s = 0;
}

// Where a leg counter's fabric walk puts a pair's hops, in route order: counting, each on its
// model link (a sprayed hop on its bundle) with its latency added to the route's; listing
// (`links` set), its model link appended there, nothing else read.
// `weight`: the pairs the walk stands for (counting a walk shared by a source class's pairs).
struct HopSink {
  const Topology& t;
  std::span<uint64_t> crossings;
  std::vector<uint32_t>* links = nullptr;
  double latency_s = 0;
  std::vector<LinkId>& scratch;  // for the walk's own use
  uint64_t weight = 1;
  void hop(LinkId link, uint32_t bundle = kNoBundle) {
    const uint32_t model = bundle == kNoBundle ? link : static_cast<uint32_t>(t.num_links() + bundle);
    if (links) {
      links->push_back(model);
      return;
    }
    latency_s += t.link(link).latency_s;
    crossings[model] += weight;
  }
};

// An all-pairs count (all_pairs.hpp) for routers whose routes are nic_route's shape: a pair
// between nodes crosses the source's GPU -> NIC -> switch leg and the destination's switch ->
// NIC -> GPU leg whatever its path, so each leg counts once per rank (times its pairs between
// nodes), and each pair walks only its fabric hops: fabric(i, j, sink) for the pair
// (ranks[i], ranks[j]), as the router's middle would append them (routers keep what they read
// per member in tables of their own, made once per count). Latencies add link by link in route order, as
// finish() does, so the slowest route is route()'s to the last bit. Pairs in one node take
// their route whole. Its append_links walks the same legs and fabric: a pair's model links
// from the legs' tables and the walk, with no Route, find_link or latency sum. Keeps the
// router's references: it must outlive the counter.
// `source_class` (per member, or empty): where the router's fabric hops of a pair depend only
// on its source's class (a fat-tree's D-mod-K and spray: the source's leaf) and its
// destination, the count walks one pair per (class, destination) for the class's sources of
// a piece, its hops weighted by those between nodes (a 16,384-GPU all-to-all: 512 leaves x
// 16,384 destinations walked, not 268 M pairs), and its append_links keeps those walks (made
// at its first call, where a class holds 4 sources or more on average: some 170 MB over 16,384
// GPUs) and copies a pair's fabric hops from them. Empty: every pair walks (ECMP hashes the
// source's NIC).
std::unique_ptr<AllPairsCounter> make_leg_counter(
    const Topology& t, const std::vector<LinkId>& nic_up, std::span<const int> ranks,
    std::function<void(std::size_t i, std::size_t j, HopSink& sink)> fabric,
    std::vector<uint32_t> source_class = {});

// Route cache shared by the routers. std::unordered_map is node-based, so references to
// cached routes survive rehashing.
class CachedRouter : public Router {
 public:
  explicit CachedRouter(const Topology& t) : t_(t), ranks_(t.ranks()) {}
  // Route by route (count_by_routes), where route_into works.
  std::unique_ptr<AllPairsCounter> all_pairs_counter(std::span<const int> ranks) const override;

 protected:
  void check_ranks(int src, int dst) const {
    if (src < 0 || src >= ranks_ || dst < 0 || dst >= ranks_)
      throw std::out_of_range("route: rank out of range (" + std::to_string(src) + " -> " +
                              std::to_string(dst) + ", ranks: " + std::to_string(ranks_) + ")");
  }
  // For the *_into calls: checks the ranks; true, `out` cleared (no hop), where src == dst.
  bool same_rank_into(int src, int dst, Route& out) const {
    check_ranks(src, dst);
    if (src != dst) return false;
    clear_route(out);
    return true;
  }
  // The route cached under `key`, from compute() on a miss.
  template <class Compute>
  const Route& cached(uint64_t key, Compute&& compute) {
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    return cache_.emplace(key, compute()).first->second;
  }
  const Topology& t_;
  int ranks_;
  Route empty_;
  std::unordered_map<uint64_t, Route> cache_;
};

// Spray on a fat-tree: its bundles (Router::bundles()), and per (level - 1) x leaves + leaf the
// leaf's level-l up- and down-bundle (kNoBundle: that level's hop is one link). Throws
// std::invalid_argument where switches do not reach the tier above evenly.
struct SprayBundles {
  std::vector<LinkBundle> bundles;
  std::vector<uint32_t> up, down;
};
SprayBundles spray_bundles(const Topology& t, const FatTreeLayout& f);  // spray_bundles.cpp

std::unique_ptr<Router> make_shortest_router(const Topology& t);
// Needs t.fat_tree(); kind is dmodk, ecmp or adaptive.
std::unique_ptr<Router> make_fat_tree_router(const Topology& t, RoutingKind kind, uint64_t seed);
// Need t.dragonfly() / t.torus(); kind is minimal, valiant or ugal.
std::unique_ptr<Router> make_dragonfly_router(const Topology& t, RoutingKind kind, uint64_t seed);
std::unique_ptr<Router> make_torus_router(const Topology& t);
// On a degraded fabric: `inner`'s routes, those crossing a failed cable replaced by a
// fewest-hop live path between the same NICs (routing_repair.cpp).
std::unique_ptr<Router> make_repairing_router(const Topology& t, std::unique_ptr<Router> inner, uint64_t seed);

}  // namespace cs::topo::detail
