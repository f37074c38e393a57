// Degraded fabrics (topology/failures.hpp): bisection and all-to-all bound against hand
// calculations, routes that never cross a failed cable, and the refusals.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <string>

#include "direct_helpers.hpp"
#include "topology/bisection.hpp"
#include "topology/failures.hpp"
#include "topology/uniform_traffic.hpp"

using namespace cs::topo;
using cs::topo::test::check_route;
using cs::topo::test::dragonfly;
using cs::topo::test::failing_param;
using cs::topo::test::fat_tree;
using cs::topo::test::kBw;
using cs::topo::test::torus;

namespace {

// 32 nodes of one GPU and one NIC, radix 8, non-blocking: 8 leaves of 4 NICs and 4 up-links,
// k = 4 spines of 8 ports (one cable to each leaf).
TopologyParams small_fat_tree() {
  TopologyParams p = fat_tree(32, 1, 1, 8);
  p.link_bandwidth_Bps = p.node.nic_bandwidth_Bps = kBw;
  return p;
}

// a = 4 routers of one node each, h = 1, g = 4 groups: one global cable per group pair.
TopologyParams small_dragonfly() {
  TopologyParams p = dragonfly(4, 1, 1, 4, 16, 1, 1);
  p.link_bandwidth_Bps = p.node.nic_bandwidth_Bps = kBw;
  return p;
}

std::string name_of(const Topology& t, VertexId v) { return t.vertex(v).name; }

// Every ordered pair's route (route(), and route_into where the routing has it) is a valid
// path that crosses no failed cable.
void check_live_routes(const Topology& t, RoutingKind kind, bool with_oracle = false) {
  auto router = make_router(t, kind, 3);
  if (with_oracle) router->set_load_oracle([](LinkId) { return 0u; });
  Route into;
  for (int s = 0; s < t.ranks(); ++s)
    for (int d = 0; d < t.ranks(); ++d) {
      const Route& r = router->route(s, d, static_cast<uint64_t>(s * 7 + d));
      check_route(t, r, s, d);
      for (LinkId l : r.links) REQUIRE_FALSE(t.failed(l));
      if (router->route_into(s, d, static_cast<uint64_t>(s * 7 + d), into))
        for (LinkId l : into.links) REQUIRE_FALSE(t.failed(l));
    }
}

}  // namespace

TEST_CASE("one spine of k down on a 2-tier fat-tree", "[failures]") {
  TopologyParams p = small_fat_tree();
  const Topology intact = build_topology(p);
  REQUIRE(intact.fat_tree()->spines == 4);
  p.failed.switches = {"spine1"};
  const Topology t = build_topology(p);
  CHECK(t.num_failed_cables() == 8);
  CHECK(dead_switches(t) == 1);

  SECTION("bisection x (k - 1) / k") {
    // Intact: 16 NICs a side, 800 GB/s. Each leaf keeps 3 of its 4 up-links: 8 x 3 x 50 / 2.
    CHECK(bisection(intact, p).Bps == Approx(16 * kBw));
    const Bisection b = bisection(t, p);
    CHECK(b.method == "max_flow");
    CHECK(b.Bps == Approx(16 * kBw * 3 / 4));
  }
  SECTION("all-to-all bound: the leaves' live up-links bind") {
    // A leaf's 4 GPUs send to the 28 GPUs off it: 4 x 28 / 32 r <= 3 x 50 GB/s (intact, 4
    // up-links allow 57.1 GB/s and the NIC binds at 50 x 32 / 31).
    CHECK(uniform_traffic_bound(intact).limit == "nic");
    const UniformTrafficBound u = uniform_traffic_bound(t);
    CHECK(u.limit == "leaf up-links");
    CHECK(u.per_gpu_Bps == Approx(3 * kBw * 32 / (4.0 * 28)));
  }
  SECTION("dmodk, ecmp and adaptive re-hash over the live up-links; shortest recomputes") {
    for (RoutingKind kind : {RoutingKind::dmodk, RoutingKind::ecmp, RoutingKind::shortest})
      check_live_routes(t, kind);
    check_live_routes(t, RoutingKind::adaptive, true);
  }
  SECTION("routes that crossed no failed cable keep their path (resilient hashing)") {
    for (RoutingKind kind : {RoutingKind::dmodk, RoutingKind::ecmp}) {
      auto before = make_router(intact, kind, 3), after = make_router(t, kind, 3);
      int moved = 0;
      for (int s = 0; s < t.ranks(); ++s)
        for (int d = 0; d < t.ranks(); ++d) {
          const Route& a = before->route(s, d, 5);
          bool dead = false;
          for (LinkId l : a.links) dead = dead || t.failed(l);
          if (dead) ++moved;
          else CHECK(after->route(s, d, 5).links == a.links);
        }
      CHECK(moved > 0);
    }
  }
  SECTION("spray refuses a degraded fabric") {
    CHECK_THROWS_AS(make_router(t, RoutingKind::spray, 1), std::invalid_argument);
  }
}

TEST_CASE("one cable down between a leaf and a spine", "[failures]") {
  TopologyParams p = small_fat_tree();
  p.failed.links = {{"leaf0", "spine2", 0}};
  const Topology t = build_topology(p);
  CHECK(t.num_failed_cables() == 1);
  CHECK(dead_switches(t) == 0);
  // leaf0's 4 NICs keep 3 up-links: with leaves 0-3 on one side (the index halves), leaf0
  // sends at most 3 x 50 GB/s across, the other three 4 x 50: 15 x 50 GB/s; no split loses
  // more than leaf0's one cable.
  CHECK(bisection(t, p).Bps == Approx(15 * kBw));
  for (RoutingKind kind : {RoutingKind::dmodk, RoutingKind::ecmp, RoutingKind::shortest}) check_live_routes(t, kind);
}

TEST_CASE("a dead global cable on a dragonfly", "[failures]") {
  TopologyParams p = small_dragonfly();
  const Topology intact = build_topology(p);
  const DragonflyLayout& d = *intact.dragonfly();
  REQUIRE(d.links_per_group_pair == 1);
  const Link& global = intact.link(d.global_link(0, 2, 0));
  p.failed.links = {{name_of(intact, global.from), name_of(intact, global.to), 0}};
  const Topology t = build_topology(p);
  CHECK(t.num_failed_cables() == 1);

  SECTION("bisection: the group halves lose one of their 4 global cables") {
    // Groups {0, 1} | {2, 3} are joined by 4 global cables; 0 - 2 is down: 3 x 50 GB/s.
    CHECK(bisection(intact, p).Bps == Approx(4 * kBw));
    CHECK(bisection(t, p).Bps == Approx(3 * kBw));
  }
  SECTION("all-to-all bound: the pair's traffic detours over two global hops") {
    // 4 GPUs a group, N = 16: each group pair exchanges 4 x 4 / 16 = 1 r a direction on one
    // cable (intact: r <= 50 GB/s). Groups 0 and 2's share splits over groups 1 and 3, half
    // on each of 0-1, 1-2, 0-3, 3-2 in each direction: 1.5 r on 50 GB/s.
    CHECK(uniform_traffic_bound(intact).per_gpu_Bps == Approx(kBw));
    const UniformTrafficBound u = uniform_traffic_bound(t);
    CHECK(u.limit == "global cables");
    CHECK(u.per_gpu_Bps == Approx(kBw / 1.5));
  }
  SECTION("minimal, valiant and ugal avoid the dead global") {
    for (RoutingKind kind : {RoutingKind::minimal, RoutingKind::valiant, RoutingKind::ugal, RoutingKind::shortest})
      check_live_routes(t, kind);
    check_live_routes(t, RoutingKind::ugal, true);
  }
}

TEST_CASE("dor cannot route around a failure; shortest can", "[failures]") {
  TopologyParams p = torus({4, 4}, 1, 1);
  p.failed.links = {{"t0.0", "t1.0", 0}};
  const Topology t = build_topology(p);
  CHECK_THROWS_AS(make_router(t, RoutingKind::dor, 1), std::invalid_argument);
  check_live_routes(t, RoutingKind::shortest);
}

TEST_CASE("failures: what is refused", "[failures]") {
  std::string message;
  TopologyParams p = small_fat_tree();
  SECTION("a leaf down cuts its NICs off") {
    p.failed.switches = {"leaf0"};
    CHECK(failing_param(p, &message) == "failed");
    CHECK(message.find("cut 4 of 32 NICs") != std::string::npos);
    CHECK(message.find("n0") != std::string::npos);
  }
  SECTION("unknown names, and names that are not switches or not joined") {
    p.failed.links = {{"leaf0", "spine99", 0}};
    CHECK(failing_param(p) == "failed.links.0.b");
    p.failed.links = {{"leaf0", "leaf1", 0}};
    CHECK(failing_param(p) == "failed.links.0");
    p.failed.links = {{"leaf0", "spine0", 2}};
    CHECK(failing_param(p) == "failed.links.0.cables");
    p.failed.links.clear();
    p.failed.switches = {"n3"};
    CHECK(failing_param(p) == "failed.switches.0");
  }
  SECTION("more random cables or switches than there are") {
    p.failed.random_links = 33;  // 8 leaves x 4 up-links
    CHECK(failing_param(p) == "failed.random_links");
    p.failed.random_links = 0;
    p.failed.random_switches = 5;  // 4 spines
    CHECK(failing_param(p) == "failed.random_switches");
  }
}

TEST_CASE("random failures: the count asked, the same ones for the same seed", "[failures]") {
  TopologyParams p = small_fat_tree();
  p.failed.random_links = 5;
  p.failed.seed = 11;
  const Topology a = build_topology(p), b = build_topology(p);
  CHECK(a.num_failed_cables() == 5);
  std::set<LinkId> da, db;
  for (LinkId l = 0; l < a.num_links(); ++l) {
    if (a.failed(l)) da.insert(l);
    if (b.failed(l)) db.insert(l);
  }
  CHECK(da == db);
  p.failed.seed = 12;
  const Topology c = build_topology(p);
  std::set<LinkId> dc;
  for (LinkId l = 0; l < c.num_links(); ++l)
    if (c.failed(l)) dc.insert(l);
  CHECK(dc != da);
  SECTION("a failure rate: about cables x (1 - exp(-window / mtbf)) down") {
    // 32 switch cables, window = mtbf x ln(10/9): each down with probability 1/10; over 100
    // seeds 320 expected (standard deviation 17).
    TopologyParams q = small_fat_tree();
    q.failed.link_mtbf_s = 1000;
    q.failed.window_s = 1000 * std::log(10.0 / 9.0);
    int total = 0;
    for (uint64_t seed = 1; seed <= 100; ++seed) {
      q.failed.seed = seed;
      total += static_cast<int>(build_topology(q).num_failed_cables());
    }
    CHECK(total == Approx(320).epsilon(0.15));
  }
}
