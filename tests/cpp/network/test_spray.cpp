// Spray (per-packet) routing in both network models: a flow split evenly over its equal-cost
// paths never collides with another on one up-link, an oversubscribed leaf's up-links act as
// one bundle of their summed capacity (closed form), and the link usage folds back evenly onto
// the bundle's links.
#include <numeric>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/engine/simulator.hpp"
#include "sim/network/comm_factory.hpp"
#include "sim/network/network.hpp"
#include "sim/network/traffic_run.hpp"
#include "topology/topology.hpp"

using namespace cs;

namespace {

constexpr double kB = 50e9;

topo::TopologyParams fat_tree(int nodes, int radix, double oversubscription = 1, int tiers = 2) {
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::fat_tree;
  p.nodes = nodes;
  p.tiers = tiers;
  p.node.gpus = 1;
  p.node.nics = 1;
  p.node.nic_bandwidth_Bps = kB;
  p.node.pcie_bandwidth_Bps = 1e12;
  p.node.pcie_latency_s = 0;
  p.link_bandwidth_Bps = kB;
  p.link_latency_s = 0;
  p.switch_radix = radix;
  p.oversubscription = oversubscription;
  return p;
}

struct Traffic {
  double makespan = 0;
  net::LinkUsage usage;
};

Traffic run(const topo::Topology& topology, topo::RoutingKind routing, net::NetworkModel model,
            const std::vector<work::FlowSpec>& flows) {
  engine::Simulator sim(1);
  net::Network network(sim, topology, routing);
  net::CommConfig config;
  config.model = model;
  auto comm = net::make_comm(network, net::Placement::identity(topology.ranks()), config);
  net::TrafficRun traffic(*comm, sim, flows);
  traffic.start();
  sim.run();
  REQUIRE(traffic.completed() == flows.size());
  return {traffic.makespan_s(), comm->link_usage()};
}

std::vector<work::FlowSpec> all_to_all(int n, double bytes) {
  std::vector<work::FlowSpec> flows;
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d)
      if (s != d) flows.push_back({s, d, bytes, 0.0});
  return flows;
}

}  // namespace

TEST_CASE("spray splits a flow over every spine: no D-mod-K collision", "[routing][spray]") {
  // Radix 8: 3 leaves of 4 NICs under 4 spines. D-mod-K sends 0->4 and 1->8 up one link (both
  // destinations sit on leaf port 0): 2S/B. Sprayed, each crosses all of leaf 0's up-links at
  // a quarter of its rate: S/B, NIC-bound.
  const topo::Topology t = topo::build_topology(fat_tree(12, 8));
  const std::vector<work::FlowSpec> flows{{0, 4, 1e9, 0.0}, {1, 8, 1e9, 0.0}};
  for (auto model : {net::NetworkModel::flow, net::NetworkModel::analytical}) {
    CHECK(run(t, topo::RoutingKind::dmodk, model, flows).makespan == Approx(2 * 1e9 / kB));
    CHECK(run(t, topo::RoutingKind::spray, model, flows).makespan == Approx(1e9 / kB));
  }
}

TEST_CASE("spray: an oversubscribed all-to-all is bound by the leaves' summed up-links", "[routing][spray]") {
  // 24 single-GPU nodes, radix 8, 3:1: 4 leaves of 6 NICs with 2 up-links each. Every
  // cross-leaf flow crosses its leaf's up-bundle (and the destination's down-bundle), shared
  // evenly: a leaf's cross-leaf bytes over its up-links' capacity, whichever flow is last.
  const topo::Topology t = topo::build_topology(fat_tree(24, 8, 3));
  const topo::FatTreeLayout& f = *t.fat_tree();
  REQUIRE(f.tiers == 2);
  REQUIRE(f.leaves == 4);
  const int per_leaf = 6, up = f.tier[0].up;
  const double S = 4e6;
  const double cross = per_leaf * (24 - per_leaf) * S;  // bytes leaving one leaf
  const double expected = cross / (up * kB);
  REQUIRE(expected > 23 * S / kB);  // the leaves bind, not the NICs
  for (auto model : {net::NetworkModel::flow, net::NetworkModel::analytical}) {
    const Traffic r = run(t, topo::RoutingKind::spray, model, all_to_all(24, S));
    CHECK(r.makespan == Approx(expected).epsilon(1e-9));
    // Usage folds back onto the bundle's links: each of leaf 0's up-links carries an equal
    // share of its cross-leaf bytes.
    for (int p = 0; p < up; ++p) {
      const topo::LinkId l = f.tier[0].up_link[static_cast<std::size_t>(p)];
      CHECK(r.usage.bytes[l] == Approx(cross / up).epsilon(1e-9));
      CHECK(r.usage.busy_s[l] == Approx(expected).epsilon(1e-9));
      if (model == net::NetworkModel::flow) CHECK(r.usage.peak_utilization[l] == Approx(1.0).epsilon(1e-9));
    }
    // No byte is lost in the fold: every flow crosses two NIC cables, and cross-leaf ones two
    // leaf-spine links.
    const double total = std::accumulate(r.usage.bytes.begin(), r.usage.bytes.end(), 0.0);
    const double pcie = 2.0 * 24 * 23 * S;
    CHECK(total == Approx(pcie + 2.0 * 24 * 23 * S + 2.0 * 4 * cross).epsilon(1e-9));
    CHECK(r.usage.bytes.size() == t.num_links());
  }
  // D-mod-K and ECMP pile some up-links higher: never faster.
  CHECK(run(t, topo::RoutingKind::ecmp, net::NetworkModel::flow, all_to_all(24, S)).makespan >= expected * (1 - 1e-9));
}

TEST_CASE("spray: a 3-tier non-blocking all-to-all runs at the NICs' rate", "[routing][spray]") {
  // 64 single-GPU nodes on radix 8, 3 tiers (k = 8: 16 leaves, 4 pods): spread evenly, no
  // fabric link carries more than a NIC, so each NIC's 63 flows share it to the end.
  const topo::Topology t = topo::build_topology(fat_tree(64, 8, 1, 3));
  REQUIRE(t.fat_tree()->tiers == 3);
  const double S = 1e6;
  for (auto model : {net::NetworkModel::flow, net::NetworkModel::analytical})
    CHECK(run(t, topo::RoutingKind::spray, model, all_to_all(64, S)).makespan == Approx(63 * S / kB).epsilon(1e-9));
}
