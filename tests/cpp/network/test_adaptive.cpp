// Load-aware routing sees the flows already placed, including ones still in flight, in
// either network model (the communication layer gives the router its model's link loads).
#include <vector>

#include <catch2/catch.hpp>

#include "sim/engine/simulator.hpp"
#include "network_test_support.hpp"
#include "sim/network/comm_factory.hpp"
#include "sim/network/network.hpp"
#include "sim/network/traffic_run.hpp"
#include "topology/topology.hpp"

using namespace cs;

namespace {

topo::TopologyParams three_leaves() {
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::fat_tree;
  p.nodes = 12;
  p.node.gpus = 1;
  p.node.nics = 1;
  p.node.nic_bandwidth_Bps = 50e9;
  p.node.pcie_bandwidth_Bps = 1e12;
  p.node.pcie_latency_s = 0;
  p.link_bandwidth_Bps = 50e9;
  p.link_latency_s = 0;
  p.switch_radix = 8;
  return p;
}

// Seconds a ring all-reduce of 1 GB over ranks 0, 4, 1, 8 takes, the wire alone.
double ring_time(topo::RoutingKind routing, net::NetworkModel model) {
  // Leaves of 4 NICs under 4 spines. Edges 0->4 (leaf0 -> leaf1) and 1->8 (leaf0 -> leaf2) both
  // have a destination on leaf port 0, so D-mod-K sends both up leaf0's link to spine 0: the
  // ring (one pipeline) crosses that link twice and moves at half the rate. Adaptive routing
  // places the ring's edges one after another and sends the second over another spine.
  net::CommConfig config;
  config.model = model;
  config.protocol = net::Protocol::none;
  return test::collective_seconds(topo::build_topology(three_leaves()), routing, config, work::CollectiveOp::all_reduce,
                                  work::CollectiveAlgorithm::ring, 1e9, {0, 4, 1, 8});
}

double makespan(topo::RoutingKind routing, net::NetworkModel model = net::NetworkModel::flow) {
  // Radix 8: 4 NICs and 4 spines per leaf, 3 leaves of single-GPU nodes. Ranks 4 and 8 sit on
  // port 0 of leaves 1 and 2, so D-mod-K sends 0->4 and 1->8 up the same leaf0->spine0 link:
  // each gets B/2 and both take 2S/B. Adaptive routing sees the first flow on that link when
  // the second starts (same instant, still in flight) and takes another spine: S/B.
  const topo::Topology topology = topo::build_topology(three_leaves());
  engine::Simulator sim(1);
  net::Network network(sim, topology, routing);
  net::CommConfig config;
  config.model = model;
  auto comm = net::make_comm(network, net::Placement::identity(topology.ranks()), config);
  net::TrafficRun traffic(*comm, sim, {{0, 4, 1e9, 0.0}, {1, 8, 1e9, 0.0}});
  traffic.start();
  sim.run();
  REQUIRE(traffic.completed() == 2);
  return traffic.makespan_s();
}

}  // namespace

TEST_CASE("adaptive routing avoids a D-mod-K collision", "[routing][adaptive]") {
  CHECK(makespan(topo::RoutingKind::dmodk) == Approx(2 * 1e9 / 50e9));
  CHECK(makespan(topo::RoutingKind::adaptive) == Approx(1e9 / 50e9));
}

TEST_CASE("adaptive routing places a collective's transfers one after another", "[routing][adaptive]") {
  // Ring all-reduce of S over 4 ranks: each edge carries 2(n-1)/n S = 1.5 GB at 50 GB/s.
  for (auto model : {net::NetworkModel::flow, net::NetworkModel::analytical}) {
    CHECK(ring_time(topo::RoutingKind::dmodk, model) == Approx(2 * 1.5e9 / 50e9));
    CHECK(ring_time(topo::RoutingKind::adaptive, model) == Approx(1.5e9 / 50e9));
  }
}

TEST_CASE("adaptive routing sees the analytical model's load too", "[routing][adaptive]") {
  CHECK(makespan(topo::RoutingKind::dmodk, net::NetworkModel::analytical) == Approx(2 * 1e9 / 50e9));
  CHECK(makespan(topo::RoutingKind::adaptive, net::NetworkModel::analytical) == Approx(1e9 / 50e9));
}

namespace {

// The scenario dragonfly_group_shift.json's fabric: a=4 routers x p=2 nodes of 2 GPUs per
// group, h=2, 9 groups (144 GPUs), 400 Gb/s everywhere.
double dragonfly_makespan(topo::RoutingKind routing, work::TrafficPattern pattern) {
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::dragonfly;
  p.node.gpus = 2;
  p.node.nics = 1;
  p.node.nic_bandwidth_Bps = 50e9;
  p.link_bandwidth_Bps = 50e9;
  p.link_latency_s = 0.5e-6;
  p.routers_per_group = 4;
  p.nodes_per_router = 2;
  p.global_links_per_router = 2;
  p.groups = 9;
  p.global_bandwidth_Bps = 50e9;
  p.global_latency_s = 1e-6;
  p.nodes = 4 * 2 * 9;
  const topo::Topology topology = topo::build_topology(p);
  engine::Simulator sim(1);
  net::Network network(sim, topology, routing);
  auto comm = net::make_comm(network, net::Placement::identity(topology.ranks()), {});
  work::TrafficSpec spec;
  spec.pattern = pattern;
  spec.shift = 16;  // the same GPU of the next group
  spec.bytes = pattern == work::TrafficPattern::all_to_all ? 1e6 : 16e6;
  net::TrafficRun traffic(*comm, sim, work::expand_traffic(spec, topology.ranks()));
  traffic.start();
  sim.run();
  REQUIRE(traffic.completed() == traffic.flows());
  return traffic.makespan_s();
}

}  // namespace

TEST_CASE("UGAL is no worse than the better of minimal and Valiant", "[routing][ugal]") {
  // Adversarial (every GPU to the next group: minimal piles a group's traffic on one global
  // cable) and uniform (all-to-all). UGAL chooses per flow from the queues it sees, flows
  // already placed included; on uniform traffic it may take a few Valiant detours minimal
  // would not (allowed: 5%).
  for (auto pattern : {work::TrafficPattern::permutation, work::TrafficPattern::all_to_all}) {
    INFO("pattern " << static_cast<int>(pattern));
    const double minimal = dragonfly_makespan(topo::RoutingKind::minimal, pattern);
    const double valiant = dragonfly_makespan(topo::RoutingKind::valiant, pattern);
    const double ugal = dragonfly_makespan(topo::RoutingKind::ugal, pattern);
    CHECK(ugal <= 1.05 * std::min(minimal, valiant));
    if (pattern == work::TrafficPattern::permutation) CHECK(ugal < std::min(minimal, valiant));
  }
}
