#pragma once
// Shared by the dragonfly and torus tests: parameter presets, the fabric-switch graph, and
// an independent BFS that allows at most one dragonfly global link (the "minimal" class).
#include <algorithm>
#include <array>
#include <deque>
#include <unordered_set>
#include <vector>

#include "helpers.hpp"
#include "topology/direct_layouts.hpp"

namespace cs::topo::test {

inline TopologyParams dragonfly(int a, int p, int h, int g, int nodes, int gpus = 2,
                                int nics = 1,
                                GlobalArrangement arrangement = GlobalArrangement::absolute) {
  TopologyParams t;
  t.kind = TopologyKind::dragonfly;
  t.routers_per_group = a;
  t.nodes_per_router = p;
  t.global_links_per_router = h;
  t.groups = g;
  t.nodes = nodes;
  t.node.gpus = gpus;
  t.node.nics = nics;
  t.global_arrangement = arrangement;
  return t;
}

inline TopologyParams torus(std::vector<int> dims, int gpus = 2, int nics = 1) {
  TopologyParams t;
  t.kind = TopologyKind::torus;
  int n = 1;
  for (int d : dims) n *= d;
  t.nodes = n;
  t.dims = std::move(dims);
  t.node.gpus = gpus;
  t.node.nics = nics;
  return t;
}

inline constexpr GlobalArrangement kArrangements[] = {
    GlobalArrangement::absolute, GlobalArrangement::relative, GlobalArrangement::circulant};

// Hop distances between fabric switches (switch-to-switch cables only), from `from`.
inline std::vector<int> switch_distances(const Topology& t, VertexId from) {
  std::vector<int> dist(t.num_vertices(), -1);
  std::deque<VertexId> q{from};
  dist[from] = 0;
  while (!q.empty()) {
    const VertexId u = q.front();
    q.pop_front();
    for (LinkId l : t.out_links(u)) {
      const VertexId v = t.link(l).to;
      if (dist[v] >= 0 || t.vertex(v).kind != VertexKind::fabric_switch) continue;
      dist[v] = dist[u] + 1;
      q.push_back(v);
    }
  }
  return dist;
}

// Largest switch-to-switch distance over all pairs of fabric switches.
inline int switch_diameter(const Topology& t) {
  int diameter = 0;
  for (VertexId v = 0; v < t.num_vertices(); ++v) {
    if (t.vertex(v).kind != VertexKind::fabric_switch) continue;
    const std::vector<int> dist = switch_distances(t, v);
    for (VertexId w = 0; w < t.num_vertices(); ++w) {
      if (t.vertex(w).kind != VertexKind::fabric_switch) continue;
      REQUIRE(dist[w] >= 0);
      diameter = std::max(diameter, dist[w]);
    }
  }
  return diameter;
}

// Hop distance from GPU src to GPU dst under the transit rule, using at most one of the
// links in `global` (a set of directed link ids); -1 if unreachable.
inline int one_global_distance(const Topology& t, const std::unordered_set<LinkId>& global,
                               int src, int dst) {
  if (src == dst) return 0;
  std::vector<std::array<int, 2>> dist(t.num_vertices(), {-1, -1});
  std::deque<std::pair<VertexId, int>> q{{t.gpu(src), 0}};
  dist[t.gpu(src)][0] = 0;
  while (!q.empty()) {
    const auto [u, used] = q.front();
    q.pop_front();
    for (LinkId l : t.out_links(u)) {
      const VertexId v = t.link(l).to;
      const int now = used + (global.count(l) ? 1 : 0);
      if (now > 1 || dist[v][now] >= 0 || !may_enter(t, v, src, dst)) continue;
      dist[v][now] = dist[u][used] + 1;
      if (v == t.gpu(dst)) return dist[v][now];
      q.emplace_back(v, now);
    }
  }
  return -1;
}

}  // namespace cs::topo::test
