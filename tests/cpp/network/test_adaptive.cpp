// Load-aware routing sees the flows already placed, including ones still in flight, in
// either network model (the communication layer gives the router its model's link loads).
#include <vector>

#include <catch2/catch.hpp>

#include "sim/engine/simulator.hpp"
#include "sim/network/comm_factory.hpp"
#include "sim/network/network.hpp"
#include "sim/network/traffic_run.hpp"
#include "topology/topology.hpp"

using namespace cs;

namespace {

double makespan(topo::RoutingKind routing, net::NetworkModel model = net::NetworkModel::flow) {
  // Radix 8: 4 NICs and 4 spines per leaf, 3 leaves of single-GPU nodes. Ranks 4 and 8 sit on
  // port 0 of leaves 1 and 2, so D-mod-K sends 0->4 and 1->8 up the same leaf0->spine0 link:
  // each gets B/2 and both take 2S/B. Adaptive routing sees the first flow on that link when
  // the second starts (same instant, still in flight) and takes another spine: S/B.
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
  const topo::Topology topology = topo::build_topology(p);
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

TEST_CASE("adaptive routing sees the analytical model's load too", "[routing][adaptive]") {
  CHECK(makespan(topo::RoutingKind::dmodk, net::NetworkModel::analytical) == Approx(2 * 1e9 / 50e9));
  CHECK(makespan(topo::RoutingKind::adaptive, net::NetworkModel::analytical) == Approx(1e9 / 50e9));
}
