// All-pairs counting (topology/all_pairs.hpp): what every router's counter gives equals the
// count of route() over every pair, link by link, and the slowest routes to the last bit; the
// links it lists for a pair are route()'s, in order; the pairs it lists for a rank's leg cross it.
#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "direct_helpers.hpp"
#include "helpers.hpp"
#include "topology/all_pairs.hpp"
#include "topology/routing.hpp"

using namespace cs::topo;
using namespace cs::topo::test;

namespace {

std::size_t model_links(const Topology& t, const Router& r) { return t.num_links() + r.bundles().size(); }

// The reference: route() (cached) for every pair, counted hop by hop.
PairLoads by_route(const Topology& t, Router& r, const std::vector<int>& ranks) {
  PairLoads out;
  out.crossings.assign(model_links(t, r), 0);
  for (int a : ranks)
    for (int b : ranks) {
      if (a == b) continue;
      const Route& route = r.route(a, b, 0);
      count_route(t, route, out.crossings);
      double& slowest = t.node_of_rank(a) == t.node_of_rank(b) ? out.max_latency_same_node_s : out.max_latency_across_s;
      slowest = std::max(slowest, route.latency_s);
    }
  return out;
}

// The counter's, sources split in uneven pieces as threads would take them.
PairLoads by_counter(const Topology& t, const Router& r, const std::vector<int>& ranks) {
  const auto counter = r.all_pairs_counter(ranks);
  REQUIRE(counter != nullptr);
  PairLoads first, second;
  first.crossings.assign(model_links(t, r), 0);
  second.crossings.assign(model_links(t, r), 0);
  const std::size_t cut = ranks.size() / 3;
  counter->add_sources(0, cut, first);
  counter->add_sources(cut, ranks.size(), second);
  for (std::size_t l = 0; l < first.crossings.size(); ++l) first.crossings[l] += second.crossings[l];
  first.max_latency_same_node_s = std::max(first.max_latency_same_node_s, second.max_latency_same_node_s);
  first.max_latency_across_s = std::max(first.max_latency_across_s, second.max_latency_across_s);
  return first;
}

// The counter's listed links of every pair: route()'s model links, in order.
void check_listed_links(const Topology& t, Router& r, const std::vector<int>& ranks) {
  const auto counter = r.all_pairs_counter(ranks);
  REQUIRE(counter != nullptr);
  Route scratch;
  std::vector<uint32_t> got, want;
  std::size_t mismatched = 0;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    for (std::size_t j = 0; j < ranks.size(); ++j) {
      if (i == j) continue;
      got.assign(1, 12345);  // appended after what is there
      counter->append_links(i, j, scratch, got);
      want.assign(1, 12345);
      append_model_links(t, r.route(ranks[i], ranks[j], 0), want);
      mismatched += got != want;
    }
  CHECK(mismatched == 0);
}

// The pairs a leg counter lists for each link: ascending, each crossing it in route() as often
// as it is listed, and every pair between nodes listed on its route's first and last hop (the
// source's GPU -> NIC hop, the destination's NIC -> GPU hop).
void check_leg_pairs(const Topology& t, Router& r, const std::vector<int>& ranks) {
  const auto counter = r.all_pairs_counter(ranks);
  REQUIRE(counter != nullptr);
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> legs(model_links(t, r));
  bool listed = false;
  for (uint32_t l = 0; l < legs.size(); ++l) listed |= counter->append_leg_pairs(l, legs[l]);
  if (!listed) return;  // a route-by-route counter keeps no legs
  std::size_t unsorted = 0, overlisted = 0, missing = 0, entries = 0;
  std::vector<uint32_t> hops;
  for (uint32_t l = 0; l < legs.size(); ++l) {
    unsorted += !std::is_sorted(legs[l].begin(), legs[l].end());
    entries += legs[l].size();
    for (std::size_t k = 0; k < legs[l].size(); ++k) {
      const auto [i, j] = legs[l][k];
      if (k > 0 && legs[l][k - 1] == legs[l][k]) continue;  // counted with its first entry
      hops.clear();
      append_model_links(t, r.route(ranks[i], ranks[j], 0), hops);
      const auto times = std::count(legs[l].begin(), legs[l].end(), legs[l][k]);
      overlisted += std::count(hops.begin(), hops.end(), l) < times;
    }
  }
  for (uint32_t i = 0; i < ranks.size(); ++i)
    for (uint32_t j = 0; j < ranks.size(); ++j) {
      if (t.node_of_rank(ranks[i]) == t.node_of_rank(ranks[j])) continue;
      hops.clear();
      append_model_links(t, r.route(ranks[i], ranks[j], 0), hops);
      for (const uint32_t end : {hops.front(), hops.back()})
        missing += !std::binary_search(legs[end].begin(), legs[end].end(), std::pair{i, j});
    }
  CHECK(entries > 0);
  CHECK(unsorted == 0);
  CHECK(overlisted == 0);
  CHECK(missing == 0);
}

void check_counts(const TopologyParams& p, RoutingKind kind, const std::vector<int>& ranks) {
  const Topology t = build_topology(p);
  const auto router = make_router(t, kind, 7);
  REQUIRE(computes_routes_uncached(kind));
  check_listed_links(t, *router, ranks);
  check_leg_pairs(t, *router, ranks);
  const PairLoads got = by_counter(t, *router, ranks);
  const PairLoads want = by_route(t, *router, ranks);
  CHECK(got.crossings == want.crossings);
  CHECK(got.max_latency_same_node_s == want.max_latency_same_node_s);
  CHECK(got.max_latency_across_s == want.max_latency_across_s);
  // Every pair counted: the pairs' hops, summed.
  const uint64_t hops = std::accumulate(got.crossings.begin(), got.crossings.end(), uint64_t{0});
  CHECK(hops > 0);
}

// Every rank, and a shuffled subset (a group that is not the whole fabric, in any order).
std::vector<std::vector<int>> groups_of(const Topology& t) {
  std::vector<int> all(static_cast<std::size_t>(t.ranks()));
  std::iota(all.begin(), all.end(), 0);
  std::vector<int> some = all;
  std::shuffle(some.begin(), some.end(), std::mt19937(3));
  some.resize(std::max<std::size_t>(2, some.size() * 2 / 3));
  return {all, some};
}

void check_all_groups(const TopologyParams& p, RoutingKind kind) {
  const Topology t = build_topology(p);
  for (const std::vector<int>& ranks : groups_of(t)) {
    CAPTURE(std::string(to_string(kind)), ranks.size());
    check_counts(p, kind, ranks);
  }
}

}  // namespace

TEST_CASE("all-pairs counts equal route() over every pair on fat-trees", "[all_pairs]") {
  for (RoutingKind kind : {RoutingKind::dmodk, RoutingKind::ecmp, RoutingKind::spray}) {
    check_all_groups(fat_tree(8, 4, 4, 8, 1.0, true), kind);                       // 2 tiers, rails
    check_all_groups(fat_tree_tiers(3, 16, 2, 2, 8), kind);                        // 3 tiers
    check_all_groups(fat_tree_tiers(3, 24, 2, 1, 8, 3.0, false, {2.0}), kind);    // tapered
    TopologyParams parallel = fat_tree(8, 2, 2, 8);
    parallel.parallel_links = {2};
    check_all_groups(parallel, kind);
    TopologyParams pcie = fat_tree(4, 4, 2, 8);  // legs through PCIe switches and the host
    pcie.node.fabric = NodeFabric::pcie;
    pcie.node.pcie_switches = 2;
    check_all_groups(pcie, kind);
  }
}

TEST_CASE("all-pairs counts equal route() over every pair on dragonflies and tori", "[all_pairs]") {
  for (RoutingKind kind : {RoutingKind::minimal, RoutingKind::valiant}) {
    check_all_groups(dragonfly(4, 2, 2, 9, 72), kind);
    TopologyParams bundled = dragonfly(2, 2, 2, 3, 12, 2, 1);
    bundled.local_parallel_links = 2;
    check_all_groups(bundled, kind);
  }
  check_all_groups(torus({4, 3}), RoutingKind::dor);
}

TEST_CASE("route-by-route counters: valiant_packet's lanes, a degraded fat-tree", "[all_pairs]") {
  check_all_groups(dragonfly(4, 2, 2, 9, 72), RoutingKind::valiant_packet);
  TopologyParams degraded = fat_tree(8, 4, 4, 8);
  degraded.failed.links = {{"leaf0", "spine2", 0}};
  check_all_groups(degraded, RoutingKind::dmodk);
}

TEST_CASE("routings that cannot compute routes uncached give no counter", "[all_pairs]") {
  const std::vector<int> ranks{0, 1, 2, 3};
  const Topology tree = build_topology(fat_tree(4, 1, 1, 8));
  CHECK(make_router(tree, RoutingKind::adaptive, 1)->all_pairs_counter(ranks) == nullptr);
  CHECK(make_router(tree, RoutingKind::shortest, 1)->all_pairs_counter(ranks) == nullptr);
  CHECK_FALSE(computes_routes_uncached(RoutingKind::adaptive));
  CHECK_FALSE(computes_routes_uncached(RoutingKind::shortest));
  const Topology fly = build_topology(dragonfly(2, 1, 1, 3, 6));
  CHECK(make_router(fly, RoutingKind::ugal, 1)->all_pairs_counter(ranks) == nullptr);
  CHECK_FALSE(computes_routes_uncached(RoutingKind::ugal));
  Route r;
  CHECK_FALSE(make_router(tree, RoutingKind::adaptive, 1)->route_into(0, 1, 0, r));
  // The load-aware ones choose routes one by one without a cache instead; shortest cannot.
  CHECK(make_router(tree, RoutingKind::adaptive, 1)->choose_into(0, 1, 0, r));
  CHECK_FALSE(make_router(tree, RoutingKind::dmodk, 1)->choose_into(0, 1, 0, r));
  CHECK(routes_without_cache(RoutingKind::adaptive));
  CHECK(routes_without_cache(RoutingKind::ugal));
  CHECK_FALSE(routes_without_cache(RoutingKind::shortest));
}

TEST_CASE("route_into gives route()'s route without caching it", "[all_pairs]") {
  const Topology t = build_topology(fat_tree_tiers(3, 16, 2, 2, 8));
  for (RoutingKind kind : {RoutingKind::dmodk, RoutingKind::ecmp, RoutingKind::spray}) {
    const auto router = make_router(t, kind, 5);
    Route r;
    for (int a = 0; a < t.ranks(); a += 3)
      for (int b = 0; b < t.ranks(); b += 5)
        for (uint64_t key : {uint64_t{0}, uint64_t{9}}) {
          REQUIRE(router->route_into(a, b, key, r));
          const Route& want = router->route(a, b, key);
          REQUIRE(r.links == want.links);
          REQUIRE(r.bundle == want.bundle);
          REQUIRE(r.latency_s == want.latency_s);
        }
  }
  const auto router = make_router(t, RoutingKind::dmodk, 5);
  Route r;
  CHECK_THROWS_AS(router->route_into(0, t.ranks(), 0, r), std::out_of_range);
}

TEST_CASE("D-mod-K and spray list a pair's hops from its leaf's walk: route()'s links", "[all_pairs]") {
  // Eight sources a leaf (rails: a node's eight NICs on eight leaves): the counter keeps each
  // (leaf, destination) walk and lists a pair's fabric hops from it; a subset of about one
  // source a leaf walks each pair (a table would hold more walks than it saves). Each
  // listing equals route()'s, the legs and the pairs in one node included.
  for (RoutingKind kind : {RoutingKind::dmodk, RoutingKind::spray}) {
    const TopologyParams p = fat_tree_tiers(3, 32, 8, 8, 16, 1.0, true);
    const Topology t = build_topology(p);
    const auto router = make_router(t, kind, 7);
    std::vector<int> all(static_cast<std::size_t>(t.ranks()));
    std::iota(all.begin(), all.end(), 0);
    check_listed_links(t, *router, all);
    std::vector<int> few;
    for (int rank = 0; rank < t.ranks(); rank += 9) few.push_back(rank);
    check_listed_links(t, *router, few);
  }
}

TEST_CASE("D-mod-K and spray walk a leaf's sources once per destination, ECMP each pair", "[all_pairs]") {
  // Rails (a node's members on different leaves) and not (all on one leaf: a class's sources
  // in the destination's node are left out of its walk's weight), 2 and 3 tiers.
  for (const TopologyParams& p : {fat_tree(8, 4, 4, 8, 1.0, true), fat_tree_tiers(3, 16, 2, 2, 8),
                                  fat_tree_tiers(3, 24, 2, 1, 8, 3.0, false, {2.0})}) {
    const Topology t = build_topology(p);
    for (const std::vector<int>& ranks : groups_of(t)) {
      for (RoutingKind kind : {RoutingKind::dmodk, RoutingKind::spray, RoutingKind::ecmp}) {
        CAPTURE(std::string(to_string(kind)), ranks.size());
        const auto router = make_router(t, kind, 7);
        const auto counter = router->all_pairs_counter(ranks);
        REQUIRE(counter != nullptr);
        const std::span<const uint32_t> classes = counter->source_classes();
        if (kind == RoutingKind::ecmp) {
          CHECK(classes.empty());
          continue;
        }
        // The classes are the sources' leaves.
        REQUIRE(classes.size() == ranks.size());
        const FatTreeLayout& f = *t.fat_tree();
        for (std::size_t i = 0; i < ranks.size(); ++i)
          CHECK(classes[i] == static_cast<uint32_t>(f.nic_leaf[static_cast<std::size_t>(t.nic_index_of_rank(ranks[i]))]));
        // Pieces of one source, of 5 and the rest: every piece's classes split differently, the
        // sum route()'s count.
        PairLoads got;
        got.crossings.assign(model_links(t, *router), 0);
        for (std::size_t i = 0; i < ranks.size();) {
          const std::size_t piece = i < 3 ? 1 : std::min<std::size_t>(5, ranks.size() - i);
          counter->add_sources(i, i + piece, got);
          i += piece;
        }
        const PairLoads want = by_route(t, *router, ranks);
        CHECK(got.crossings == want.crossings);
        CHECK(got.max_latency_same_node_s == want.max_latency_same_node_s);
        CHECK(got.max_latency_across_s == want.max_latency_across_s);
      }
    }
  }
  // A degraded fabric counts route by route.
  TopologyParams degraded = fat_tree(8, 4, 4, 8);
  degraded.failed.links = {{"leaf0", "spine2", 0}};
  const Topology t = build_topology(degraded);
  const std::vector<int> ranks{0, 5, 9, 17, 30};
  CHECK(make_router(t, RoutingKind::dmodk, 1)->all_pairs_counter(ranks)->source_classes().empty());
}
