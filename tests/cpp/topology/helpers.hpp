#pragma once
// Shared by the topology tests: parameter presets, a route checker and an independent
// hop-distance computation (a plain BFS written here, not the router's Boost search).
#include <catch2/catch.hpp>

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "topology/routing.hpp"
#include "topology/topology.hpp"

namespace cs::topo::test {

inline TopologyParams fat_tree(int nodes, int gpus, int nics, int radix, double oversub = 1.0,
                               bool rail = false) {
  TopologyParams p;
  p.kind = TopologyKind::fat_tree;
  p.nodes = nodes;
  p.node.gpus = gpus;
  p.node.nics = nics;
  p.switch_radix = radix;
  p.oversubscription = oversub;
  p.rail_optimized = rail;
  return p;
}

// A fat-tree of `tiers` tiers; `upper` holds the ratios of the tiers above the leaves.
inline TopologyParams fat_tree_tiers(int tiers, int nodes, int gpus, int nics, int radix,
                                     double oversub = 1.0, bool rail = false,
                                     std::vector<double> upper = {}) {
  TopologyParams p = fat_tree(nodes, gpus, nics, radix, oversub, rail);
  p.tiers = tiers;
  p.upper_oversubscription = std::move(upper);
  return p;
}

// Structural validity: starts at the source GPU, ends at the destination GPU, consecutive
// links touch, latency is the sum of link latencies.
inline void check_route(const Topology& t, const Route& r, int src, int dst) {
  if (src == dst) {
    REQUIRE(r.links.empty());
    REQUIRE(r.latency_s == 0.0);
    return;
  }
  REQUIRE(!r.links.empty());
  REQUIRE(t.link(r.links.front()).from == t.gpu(src));
  REQUIRE(t.link(r.links.back()).to == t.gpu(dst));
  double latency = 0;
  for (std::size_t i = 0; i < r.links.size(); ++i) {
    REQUIRE(r.links[i] < t.num_links());
    latency += t.link(r.links[i]).latency_s;
    if (i + 1 < r.links.size()) REQUIRE(t.link(r.links[i]).to == t.link(r.links[i + 1]).from);
  }
  REQUIRE(r.latency_s == Approx(latency).epsilon(1e-12));
}

// May a route from src to dst pass through (or end at) v? Fabric switches, the destination
// GPU, and the non-GPU vertices of the two end nodes; between two GPUs of one nvlink_mesh
// node, also that node's GPUs.
inline bool may_enter(const Topology& t, VertexId v, int src, int dst) {
  const Vertex& x = t.vertex(v);
  if (x.kind == VertexKind::fabric_switch) return true;
  if (x.kind == VertexKind::gpu)
    return v == t.gpu(dst) || (t.node_fabric() == NodeFabric::nvlink_mesh &&
                               t.node_of_rank(src) == t.node_of_rank(dst) &&
                               x.node == t.node_of_rank(src));
  return x.node == t.node_of_rank(src) || x.node == t.node_of_rank(dst);
}

// Hop distance from GPU src to GPU dst under the transit rule, -1 if unreachable.
inline int hop_distance(const Topology& t, int src, int dst) {
  if (src == dst) return 0;
  std::vector<int> dist(t.num_vertices(), -1);
  std::deque<VertexId> q{t.gpu(src)};
  dist[t.gpu(src)] = 0;
  while (!q.empty()) {
    const VertexId u = q.front();
    q.pop_front();
    for (LinkId l : t.out_links(u)) {
      const VertexId v = t.link(l).to;
      if (dist[v] >= 0 || !may_enter(t, v, src, dst)) continue;
      dist[v] = dist[u] + 1;
      if (v == t.gpu(dst)) return dist[v];
      q.push_back(v);
    }
  }
  return -1;
}

// Every pair: structurally valid and of BFS-minimal length.
inline void check_all_pairs(const Topology& t, RoutingKind kind, uint64_t flow_key = 0) {
  auto router = make_router(t, kind, 7);
  for (int s = 0; s < t.ranks(); ++s)
    for (int d = 0; d < t.ranks(); ++d) {
      const Route& r = router->route(s, d, flow_key + static_cast<uint64_t>(s * 31 + d));
      check_route(t, r, s, d);
      REQUIRE(static_cast<int>(r.links.size()) == hop_distance(t, s, d));
    }
}

// Largest number of flows on one directed link for the permutation i -> (i + shift) mod N.
inline int max_link_load(const Topology& t, Router& router, int shift) {
  std::vector<int> load(t.num_links(), 0);
  int worst = 0;
  const int n = t.ranks();
  for (int s = 0; s < n; ++s)
    for (LinkId l : router.route(s, (s + shift) % n, static_cast<uint64_t>(s)).links)
      worst = std::max(worst, ++load[l]);
  return worst;
}

// The param() of the BuildError that building `p` throws ("" if it does not throw); its
// message in *message when given.
inline std::string failing_param(const TopologyParams& p, std::string* message = nullptr) {
  try {
    build_topology(p);
  } catch (const BuildError& e) {
    CHECK(std::string(e.what()).size() > 0);
    if (message) *message = e.what();
    return e.param();
  }
  return "";
}

// The default NIC and fabric link bandwidth (400 Gb/s), bytes/s.
inline constexpr double kBw = 50e9;

}  // namespace cs::topo::test
