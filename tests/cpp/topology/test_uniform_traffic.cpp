// The uniform-traffic (all-to-all) bound against hand calculations, per family.
#include <catch2/catch.hpp>

#include "direct_helpers.hpp"
#include "topology/uniform_traffic.hpp"

using namespace cs::topo;
using cs::topo::test::dragonfly;
using cs::topo::test::fat_tree;
using cs::topo::test::fat_tree_tiers;
using cs::topo::test::torus;

TEST_CASE("uniform-traffic bound of fat-trees", "[uniform_traffic]") {
  SECTION("non-blocking: the NICs bind") {
    // 64 nodes of 8 GPUs and 8 NICs at 50 GB/s: each NIC carries its GPU's traffic to the
    // 504 GPUs off its node, r x 504 / 512 <= 50 GB/s.
    TopologyParams p = fat_tree(64, 8, 8, 64, 1.0, true);
    p.link_bandwidth_Bps = p.node.nic_bandwidth_Bps = 50e9;
    const UniformTrafficBound u = uniform_traffic_bound(build_topology(p));
    CHECK(u.limit == "nic");
    CHECK(u.per_gpu_Bps == Approx(50e9 * 512 / 504));
  }
  SECTION("2:1 leaves, whole nodes per leaf") {
    // Radix 12 at 2:1: 8 NICs (2 nodes of 4) and 4 up-links per leaf, 8 leaves of 16 nodes.
    // A leaf's 8 GPUs send to the 56 GPUs off the leaf: 8 x 56 / 64 r <= 4 x 50 GB/s.
    TopologyParams p = fat_tree(16, 4, 4, 12, 2.0);
    p.link_bandwidth_Bps = p.node.nic_bandwidth_Bps = 50e9;
    const Topology t = build_topology(p);
    const UniformTrafficBound u = uniform_traffic_bound(t);
    CHECK(u.limit == "leaf up-links");
    CHECK(u.per_gpu_Bps == Approx(4 * 50e9 * 64 / (8.0 * 56)));
  }
  SECTION("rail-optimized 3 tiers, 2:1 spines: the pods' up-links bind, bisection does not see them") {
    // 512 nodes of 8 GPUs / NICs, radix 64: 8 rails of 16 leaves (32 NICs, 32 up-links each),
    // 4 pods of 32 leaves = 2 whole rails (1,024 GPUs), 32 spines per pod with 16 up-links
    // (2:1). A pod's GPUs reach 4,096 - 1,024 - 6 GPUs outside it and off their node:
    // r = 32 x 16 x 50 GB/s / (1,024 x 3,066 / 4,096) = 33.40 GB/s against the NICs' 50.1.
    TopologyParams p = fat_tree_tiers(3, 512, 8, 8, 64, 1.0, true, {2.0});
    p.link_bandwidth_Bps = p.node.nic_bandwidth_Bps = 50e9;
    const UniformTrafficBound u = uniform_traffic_bound(build_topology(p));
    CHECK(u.limit == "tier 2 up-links");
    CHECK(u.per_gpu_Bps == Approx(32 * 16 * 50e9 / (1024.0 * 3066 / 4096)));
    // 2:1 leaves as well: the leaves bind first at 25.3 (spines [2, 2] bind lower again).
    p.oversubscription = 2;
    p.upper_oversubscription = {1.0};
    const double leaves_2_1 = uniform_traffic_bound(build_topology(p)).per_gpu_Bps;
    p.upper_oversubscription = {2.0};
    CHECK(uniform_traffic_bound(build_topology(p)).per_gpu_Bps < leaves_2_1);
  }
}

TEST_CASE("uniform-traffic bound of dragonflies and tori", "[uniform_traffic]") {
  SECTION("dragonfly: a group pair's global cables") {
    // a=16, p=1, h=8, g=8, 8 GPUs per node: 18 cables per pair at 12.5 GB/s carry R^2 r / N
    // = 128 x 128 / 1,024 r: r = 18 x 12.5 GB/s x 1,024 / 16,384 = 14.06 GB/s.
    TopologyParams p = dragonfly(16, 1, 8, 8, 128, 8, 8);
    p.link_bandwidth_Bps = p.node.nic_bandwidth_Bps = 50e9;
    p.global_bandwidth_Bps = 12.5e9;
    const UniformTrafficBound u = uniform_traffic_bound(build_topology(p));
    CHECK(u.limit == "global cables");
    CHECK(u.per_gpu_Bps == Approx(18 * 12.5e9 * 1024 / (128.0 * 128)));
  }
  SECTION("rail dragonfly: a group's local links") {
    // compare_dragonfly_1k.json: a=8, p=4, h=16, g=4, NIC j of a node on router j: 32 GPUs per
    // router, 256 per group. Pairs on different routers of a group: 8 x 32 x 224 less the
    // 32 x 8 x 7 within nodes = 55,552; flows leaving or entering: 2 x 7/8 x 256 x 768 =
    // 344,064; over 1,024: 390.25 r on 8 x 7 local cables of 50 GB/s: r = 7.175 GB/s (the
    // direct all-to-all runs at 6.8).
    TopologyParams p = dragonfly(8, 4, 16, 4, 128, 8, 8);
    p.rail_optimized = true;
    p.link_bandwidth_Bps = p.node.nic_bandwidth_Bps = 50e9;
    const UniformTrafficBound u = uniform_traffic_bound(build_topology(p));
    CHECK(u.limit == "local links");
    CHECK(u.per_gpu_Bps == Approx(8 * 7 * 50e9 * 1024 / (55552.0 + 344064)));
  }
  SECTION("torus: a dimension's rings") {
    // 8 x 8, one GPU per node: mean ring distance (0+1+2+3+4+3+2+1)/8 = 2; 64 nodes x 2 hops
    // x r over 128 directed cables of 50 GB/s: r = 50 GB/s (NICs: 50 x 64 / 63).
    TopologyParams p = torus({8, 8}, 1, 1);
    p.link_bandwidth_Bps = p.node.nic_bandwidth_Bps = 50e9;
    const UniformTrafficBound u = uniform_traffic_bound(build_topology(p));
    CHECK(u.limit == "torus dimension 0");
    CHECK(u.per_gpu_Bps == Approx(50e9));
  }
  SECTION("one node: none") {
    const UniformTrafficBound u = uniform_traffic_bound(build_topology(fat_tree(1, 8, 8, 64)));
    CHECK(u.per_gpu_Bps == 0);
  }
}
