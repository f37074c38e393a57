// Ring all-reduce against its uncontended closed form 2(n-1)(alpha + S/(n B)).
#include <numeric>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/engine/simulator.hpp"
#include "sim/network/network.hpp"
#include "sim/network/ring_collective.hpp"
#include "topology/topology.hpp"

using namespace cs;

namespace {

double ring_time(const topo::TopologyParams& p, int ranks, double bytes) {
  const topo::Topology topology = topo::build_topology(p);
  engine::Simulator sim(1);
  net::Network network(sim, topology, p.kind == topo::TopologyKind::fat_tree
                                          ? topo::RoutingKind::dmodk
                                          : topo::RoutingKind::shortest);
  std::vector<int> group(ranks);
  std::iota(group.begin(), group.end(), 0);
  double done_at = -1;
  net::RingAllReduce ring(network, group, bytes, [&] { done_at = sim.now(); });
  ring.start();
  sim.run();
  REQUIRE(ring.done());
  return done_at;
}

}  // namespace

TEST_CASE("ring all-reduce in one NVSwitch node matches 2(n-1)(alpha + S/(nB))", "[ring]") {
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::single_node;
  p.node.gpus = 8;
  p.node.gpu_bandwidth_Bps = 450e9;
  p.node.gpu_latency_s = 0.7e-6;
  for (double S : {8.0 * 1024, 1.0 * (1 << 20), 1.0 * (1 << 30)}) {
    // Every hop is GPU -> NVSwitch -> GPU: alpha = 2 x 0.7 us, B = 450 GB/s.
    const double alpha = 2 * 0.7e-6, B = 450e9;
    CHECK(ring_time(p, 8, S) == Approx(2 * 7 * (alpha + S / (8 * B))).epsilon(1e-12));
  }
}

TEST_CASE("ring all-reduce across a fat-tree matches the closed form with the slowest hop",
          "[ring]") {
  // One GPU and one 400 Gb/s NIC per node, radix 8 (4 nodes per leaf). Within a leaf a hop is
  // GPU-NIC (PCIe), NIC-leaf, leaf-NIC, NIC-GPU: 4 links of 0.5 us. Across leaves two more
  // fabric links (leaf-spine-leaf): 6 links. Each step waits for the slowest hop, so
  // alpha = 3 us once the ring spans two leaves; B = 50 GB/s, the NIC.
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::fat_tree;
  p.node.gpus = 1;
  p.node.nics = 1;
  p.node.nic_bandwidth_Bps = 50e9;
  p.node.pcie_latency_s = 0.5e-6;
  p.link_bandwidth_Bps = 50e9;
  p.link_latency_s = 0.5e-6;
  p.switch_radix = 8;
  const double S = 64.0 * (1 << 20), B = 50e9;
  for (int n : {2, 4}) {
    p.nodes = n;
    CHECK(ring_time(p, n, S) == Approx(2 * (n - 1) * (2e-6 + S / (n * B))).epsilon(1e-12));
  }
  for (int n : {8, 16, 32}) {
    p.nodes = n;
    CHECK(ring_time(p, n, S) == Approx(2 * (n - 1) * (3e-6 + S / (n * B))).epsilon(1e-12));
  }
}

TEST_CASE("a ring over a subset of ranks uses only those ranks", "[ring]") {
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::single_node;
  p.node.gpus = 8;
  const double S = 1 << 20, alpha = 2 * p.node.gpu_latency_s, B = p.node.gpu_bandwidth_Bps;
  CHECK(ring_time(p, 4, S) == Approx(2 * 3 * (alpha + S / (4 * B))).epsilon(1e-12));
}
