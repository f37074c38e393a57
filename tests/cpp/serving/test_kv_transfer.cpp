// Disaggregated serving's KV transfers over the simulated network (CommKvTransfer): each
// tensor-parallel prefill GPU sends its share to a decode GPU through the communication layer,
// so transfers take the fabric's time and share its links.
#include <catch2/catch.hpp>

#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/network/comm_factory.hpp"
#include "sim/network/network.hpp"
#include "sim/serving/kv_transfer_comm.hpp"
#include "topology/topology.hpp"

using namespace cs;
using serving::CommKvTransfer;
using serving::KvPlacement;
using serving::KvTransfer;
using serving::KvTransferObserver;

namespace {

// Two nodes of 2 GPUs, one 50 GB/s NIC per GPU, one leaf; no latency anywhere, so a send of B
// bytes between nodes takes B / 50 GB/s.
topo::TopologyParams two_nodes() {
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::fat_tree;
  p.nodes = 2;
  p.node.gpus = 2;
  p.node.nics = 2;
  p.node.nic_bandwidth_Bps = 50e9;
  p.node.pcie_bandwidth_Bps = 1e12;
  p.node.pcie_latency_s = 0;
  p.node.gpu_latency_s = 0;
  p.link_bandwidth_Bps = 50e9;
  p.link_latency_s = 0;
  p.switch_radix = 8;
  return p;
}

struct Deliveries final : KvTransferObserver {
  engine::Simulator& sim;
  std::vector<std::pair<uint64_t, double>> at;
  explicit Deliveries(engine::Simulator& s) : sim(s) {}
  void on_kv_delivered(uint64_t tag) override { at.emplace_back(tag, sim.now()); }
};

struct Fabric {
  topo::Topology topology = topo::build_topology(two_nodes());
  engine::Simulator sim{1};
  net::Network network{sim, topology, topo::RoutingKind::dmodk};
  std::unique_ptr<net::CommBase> comm;
  explicit Fabric(net::NetworkModel model) {
    net::CommConfig c;
    c.model = model;
    c.protocol = net::Protocol::none;
    comm = net::make_comm(network, net::Placement::identity(topology.ranks()), c);
  }
};

}  // namespace

TEST_CASE("A KV cache crosses the fabric split over the replica's tensor-parallel GPUs",
          "[serving][kv_transfer]") {
  for (const auto model : {net::NetworkModel::flow, net::NetworkModel::analytical}) {
    Fabric f(model);
    // Prefill replicas of 2 GPUs on node 0, decode replicas of 2 GPUs on node 1.
    CommKvTransfer kv(f.sim, *f.comm, KvPlacement{{0, 1}, {2, 3}, 2, 2});
    CHECK(kv.prefill_rank(0, 1) == 1);
    CHECK(kv.decode_rank(0, 0) == 2);
    CHECK(kv.decode_rank(3, 1) == 3);  // slots beyond the region wrap around it
    Deliveries d(f.sim);
    kv.send(0, 0, 1e9, d, 7);
    f.sim.run();
    REQUIRE(d.at.size() == 1);
    CHECK(d.at[0].first == 7);
    // Each GPU sends 0.5 GB over its own 50 GB/s NIC.
    CHECK(d.at[0].second == Approx(0.5e9 / 50e9).epsilon(1e-9));
    CHECK(kv.bytes_sent() == 1e9);
  }
}

TEST_CASE("KV transfers that share NICs share their bandwidth", "[serving][kv_transfer]") {
  Fabric f(net::NetworkModel::flow);
  // One-GPU replicas: prefill on GPUs 0 and 1 (node 0), decode on GPUs 2 and 3 (node 1).
  CommKvTransfer kv(f.sim, *f.comm, KvPlacement{{0, 1}, {2, 3}, 1, 1});
  Deliveries d(f.sim);
  kv.send(0, 0, 1e9, d, 1);  // GPU 0 -> GPU 2
  kv.send(0, 0, 1e9, d, 2);  // the same NICs: each at half the rate
  kv.send(1, 1, 1e9, d, 3);  // GPU 1 -> GPU 3: NICs of its own
  f.sim.run();
  REQUIRE(d.at.size() == 3);
  CHECK(d.at[0].first == 3);
  CHECK(d.at[0].second == Approx(1e9 / 50e9).epsilon(1e-9));
  CHECK(d.at[1].second == Approx(2 * 1e9 / 50e9).epsilon(1e-9));
  CHECK(d.at[2].second == Approx(2 * 1e9 / 50e9).epsilon(1e-9));
}

TEST_CASE("A KV placement outside the topology is refused", "[serving][kv_transfer]") {
  Fabric f(net::NetworkModel::flow);
  CHECK_THROWS_AS(CommKvTransfer(f.sim, *f.comm, KvPlacement{{0, 1}, {2, 9}, 1, 1}), std::invalid_argument);
  CHECK_THROWS_AS(CommKvTransfer(f.sim, *f.comm, KvPlacement{{0}, {2, 3}, 2, 1}), std::invalid_argument);
}
