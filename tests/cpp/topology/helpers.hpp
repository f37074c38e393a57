#pragma once
// Shared by the topology tests: parameter presets, a route checker and an independent
// hop-distance computation (a plain BFS written here, not the router's Boost search).
#include <catch2/catch.hpp>

#include <deque>
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
// GPU, and the non-GPU vertices of the two end nodes.
inline bool may_enter(const Topology& t, VertexId v, int src, int dst) {
  const Vertex& x = t.vertex(v);
  if (x.kind == VertexKind::fabric_switch) return true;
  if (x.kind == VertexKind::gpu) return v == t.gpu(dst);
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

}  // namespace cs::topo::test
