// Dragonfly: closed-form sizes, the global-link arrangements, node attachment, errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "direct_helpers.hpp"

using namespace cs::topo;
using cs::topo::test::dragonfly;
using cs::topo::test::failing_param;
using cs::topo::test::kArrangements;
using cs::topo::test::switch_diameter;

namespace {

bool is_router(const Topology& t, VertexId v) {
  return t.vertex(v).kind == VertexKind::fabric_switch;
}

// Groups reached by the global cables of router r of group G, sorted.
std::vector<int> global_targets(const Topology& t, int G, int r) {
  const DragonflyLayout& d = *t.dragonfly();
  std::vector<int> out;
  for (LinkId l : t.out_links(d.router[static_cast<std::size_t>(G * d.routers_per_group + r)])) {
    const VertexId v = t.link(l).to;
    if (!is_router(t, v)) continue;
    const int T = d.group_of_router(t.vertex(v).index);
    if (T != G) out.push_back(T);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("dragonfly arrangements: slot_of inverts slot_target, every other group once") {
  for (GlobalArrangement arr : kArrangements)
    for (int g = 2; g <= 12; ++g)
      for (int G = 0; G < g; ++G) {
        std::set<int> seen;
        for (int s = 0; s < g - 1; ++s) {
          const int T = dragonfly_slot_target(arr, g, G, s);
          INFO(arrangement_name(arr) << " g=" << g << " G=" << G << " s=" << s);
          REQUIRE(T >= 0);
          REQUIRE(T < g);
          REQUIRE(T != G);
          REQUIRE(dragonfly_slot_of(arr, g, G, T) == s);
          seen.insert(T);
        }
        REQUIRE(static_cast<int>(seen.size()) == g - 1);
      }
}

TEST_CASE("dragonfly closed forms: N = a*p*g, routers, local and global cables") {
  struct Case {
    int a, p, h, g;
  };
  // Full (g = a*h+1, one cable per group pair), partial with parallel cables, unused ports,
  // a single group and two groups.
  const Case cases[] = {{2, 2, 1, 3}, {4, 2, 2, 9}, {4, 1, 2, 5}, {3, 2, 2, 4},
                        {3, 1, 2, 5}, {3, 2, 2, 1}, {2, 1, 2, 2}, {1, 3, 2, 3}};
  for (const Case& c : cases)
    for (GlobalArrangement arr : kArrangements)
      for (int nics : {1, 2}) {
        INFO("a=" << c.a << " p=" << c.p << " h=" << c.h << " g=" << c.g << " "
                  << arrangement_name(arr) << " nics=" << nics);
        const int n = c.a * c.p * c.g;
        const Topology t = build_topology(dragonfly(c.a, c.p, c.h, c.g, n, 2, nics, arr));
        const DragonflyLayout& d = *t.dragonfly();
        const int m = c.g > 1 ? c.a * c.h / (c.g - 1) : 0;
        CHECK(t.kind() == TopologyKind::dragonfly);
        CHECK(t.nodes() == n);
        CHECK(t.ranks() == 2 * n);
        CHECK(d.arrangement == arr);
        CHECK(d.links_per_group_pair == m);
        CHECK(d.unused_global_ports_per_group == c.a * c.h - m * (c.g - 1));
        CHECK(t.num_fabric_switches() == static_cast<std::size_t>(c.a * c.g));
        // Cables: nodes (2 per GPU) + one per NIC + local a(a-1)/2 per group + m per pair.
        const int64_t local = int64_t{c.g} * c.a * (c.a - 1) / 2;
        const int64_t global = int64_t{c.g} * (c.g - 1) / 2 * m;
        CHECK(d.global_cables() == global);
        CHECK(t.num_cables() == static_cast<std::size_t>(4 * n + n * nics + local + global));

        // Count router-router cables per group pair and global cables per router.
        std::map<std::pair<int, int>, int> per_pair;
        std::vector<int> global_degree(static_cast<std::size_t>(c.a * c.g), 0);
        for (LinkId l = 0; l < t.num_links(); l += 2) {
          const Link& k = t.link(l);
          if (!is_router(t, k.from) || !is_router(t, k.to)) continue;
          const int u = t.vertex(k.from).index, v = t.vertex(k.to).index;
          const int gu = d.group_of_router(u), gv = d.group_of_router(v);
          ++per_pair[{std::min(gu, gv), std::max(gu, gv)}];
          if (gu != gv) {
            ++global_degree[static_cast<std::size_t>(u)];
            ++global_degree[static_cast<std::size_t>(v)];
          }
        }
        for (int G = 0; G < c.g; ++G)
          for (int T = G; T < c.g; ++T)
            CHECK(per_pair[{G, T}] == (G == T ? c.a * (c.a - 1) / 2 : m));
        for (int deg : global_degree) {
          CHECK(deg <= c.h);
          if (c.g == c.a * c.h + 1) CHECK(deg == c.h);  // full size: every port used
        }
        // Layout tables agree with the graph.
        for (int R = 0; R < c.a * c.g; ++R) {
          std::string name(1, 'g');  // appended: "g" + std::string trips GCC 12's -Wrestrict
          name += std::to_string(R / c.a) + ".r" + std::to_string(R % c.a);
          CHECK(t.vertex(d.router[static_cast<std::size_t>(R)]).name == name);
          for (int r2 = 0; r2 < c.a; ++r2)
            if (r2 != R % c.a) {
              const Link& k = t.link(d.local_link(R, r2));
              CHECK(k.from == d.router[static_cast<std::size_t>(R)]);
              CHECK(t.vertex(k.to).index == (R / c.a) * c.a + r2);
            }
        }
        for (int G = 0; G < c.g; ++G)
          for (int T = 0; T < c.g; ++T)
            for (int k = 0; k < m && T != G; ++k) {
              const Link& l = t.link(d.global_link(G, T, k));
              CHECK(d.group_of_router(t.vertex(l.from).index) == G);
              CHECK(d.group_of_router(t.vertex(l.to).index) == T);
              CHECK(l.bandwidth_Bps == 50e9);  // link_bandwidth by default
            }
        // Every NIC of node i on router floor(i / p).
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < nics; ++j) {
            const Link& l = t.link(d.nic_up[static_cast<std::size_t>(i * nics + j)]);
            CHECK(l.from == t.nic(i, j));
            CHECK(t.vertex(l.to).index == i / c.p);
          }
        // Full size: any router reaches any other in at most 3 hops (local, global, local).
        if (c.g == c.a * c.h + 1) CHECK(switch_diameter(t) <= 3);
      }
}

TEST_CASE("dragonfly global arrangements: which groups each router reaches") {
  // a = 2, h = 2, g = 5 (full): group ports 0,1 on router 0 and 2,3 on router 1.
  using V = std::vector<int>;
  const auto build = [](GlobalArrangement arr) {
    return build_topology(dragonfly(2, 1, 2, 5, 10, 1, 1, arr));
  };
  const Topology abs = build(GlobalArrangement::absolute);
  CHECK(global_targets(abs, 0, 0) == V{1, 2});
  CHECK(global_targets(abs, 0, 1) == V{3, 4});
  CHECK(global_targets(abs, 2, 0) == V{0, 1});
  CHECK(global_targets(abs, 2, 1) == V{3, 4});
  const Topology rel = build(GlobalArrangement::relative);
  CHECK(global_targets(rel, 2, 0) == V{3, 4});
  CHECK(global_targets(rel, 2, 1) == V{0, 1});
  CHECK(global_targets(rel, 4, 0) == V{0, 1});
  const Topology circ = build(GlobalArrangement::circulant);
  CHECK(global_targets(circ, 0, 0) == V{1, 4});  // +1, -1
  CHECK(global_targets(circ, 0, 1) == V{2, 3});  // +2, -2
  CHECK(global_targets(circ, 3, 0) == V{2, 4});
  CHECK(global_targets(circ, 3, 1) == V{0, 1});
}

TEST_CASE("dragonfly partial fill, global link parameters") {
  // 5 nodes on a = 2, p = 2, g = 3: nodes 0,1 on g0.r0, 2,3 on g0.r1, 4 on g1.r0.
  TopologyParams p = dragonfly(2, 2, 1, 3, 5);
  p.global_bandwidth_Bps = 25e9;
  p.global_latency_s = 2e-6;
  const Topology t = build_topology(p);
  const DragonflyLayout& d = *t.dragonfly();
  CHECK(t.nodes() == 5);
  CHECK(t.num_fabric_switches() == 6);  // all routers of all groups
  CHECK(t.vertex(t.link(d.nic_up[4]).to).name == "g1.r0");
  CHECK(t.vertex(t.link(d.nic_up[3]).to).name == "g0.r1");
  const Link& global = t.link(d.global_link(0, 1, 0));
  CHECK(global.bandwidth_Bps == 25e9);
  CHECK(global.latency_s == 2e-6);
  const Link& local = t.link(d.local_link(0, 1));
  CHECK(local.bandwidth_Bps == p.link_bandwidth_Bps);
  CHECK(local.latency_s == p.link_latency_s);
  CHECK(t.link(d.nic_up[0]).bandwidth_Bps == p.node.nic_bandwidth_Bps);
}

TEST_CASE("dragonfly errors name the parameter") {
  CHECK(failing_param(dragonfly(2, 2, 1, 3, 12)).empty());
  CHECK(failing_param(dragonfly(2, 2, 1, 4, 12)) == "groups");  // g > a*h+1 = 3
  try {
    build_topology(dragonfly(4, 2, 2, 10, 12));
    FAIL("no error");
  } catch (const BuildError& e) {
    CHECK(e.param() == "groups");
    CHECK_THAT(std::string(e.what()), Catch::Contains("a*h+1 = 9"));
  }
  CHECK(failing_param(dragonfly(2, 2, 1, 3, 13)) == "nodes");  // > a*p*g = 12
  CHECK(failing_param(dragonfly(0, 2, 1, 1, 1)) == "routers_per_group");
  CHECK(failing_param(dragonfly(2, 0, 1, 1, 1)) == "nodes_per_router");
  CHECK(failing_param(dragonfly(2, 2, 0, 1, 1)) == "global_links_per_router");
  CHECK(failing_param(dragonfly(2, 2, 1, 0, 1)) == "groups");
  CHECK(failing_param(dragonfly(4096, 1, 4096, 65536, 1)) == "routers_per_group");
  TopologyParams p = dragonfly(2, 2, 1, 3, 12);
  p.global_bandwidth_Bps = 0.0;
  CHECK(failing_param(p) == "global_bandwidth");
  p = dragonfly(2, 2, 1, 3, 12);
  p.global_latency_s = -1e-6;
  CHECK(failing_param(p) == "global_latency");
  p = dragonfly(2, 2, 1, 3, 12);
  p.link_bandwidth_Bps = -1;
  CHECK(failing_param(p) == "link_bandwidth");
  p = dragonfly(2, 2, 1, 3, 12);
  p.global_arrangement = static_cast<GlobalArrangement>(9);
  CHECK(failing_param(p) == "global_arrangement");
}
