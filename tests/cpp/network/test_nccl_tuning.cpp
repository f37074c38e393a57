// NCCL's tuning constants: the compiled-in table is data/nccl_tuning.json, in seconds.
#include <fstream>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "network_test_support.hpp"
#include "sim/network/nccl_tuning.hpp"

using namespace cs;
using cs::test::kNvlink;
using work::CollectiveAlgorithm;

namespace {

nlohmann::json file() {
  std::ifstream in(CS_SOURCE_DIR "/data/nccl_tuning.json");
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

constexpr auto kPcie = static_cast<std::size_t>(net::TransferClass::pcie);
constexpr auto kNet = static_cast<std::size_t>(net::TransferClass::net);

}  // namespace

TEST_CASE("the compiled-in NCCL table is the data file", "[nccl]") {
  CHECK(nlohmann::json::parse(net::nccl_tuning_text()) == file());
}

TEST_CASE("nccl_costs(simple) gives the file's ring numbers in seconds", "[nccl]") {
  const nlohmann::json ring = file()["nccl_algorithms"]["ring"]["simple"];
  const net::CollectiveCostTable t = net::nccl_costs("simple");
  const net::CollectiveCosts& c = t[CollectiveAlgorithm::ring];
  CHECK(c.base_latency_s == Approx(ring["base_latency_us"].get<double>() * 1e-6));
  CHECK(c.step_latency_s[kNvlink] == Approx(ring["step_latency_us"]["nvlink"].get<double>() * 1e-6));
  CHECK(c.step_latency_s[kPcie] == Approx(ring["step_latency_us"]["pcie"].get<double>() * 1e-6));
  CHECK(c.step_latency_s[kNet] == Approx(ring["step_latency_us"]["net"].get<double>() * 1e-6));
  CHECK(c.bandwidth_efficiency == 1.0);
  // NCCL 2.20.3: Simple ring baseLat 8.4 us, NET hwLat 14 us.
  CHECK(c.base_latency_s == Approx(8.4e-6));
  CHECK(c.step_latency_s[kNet] == Approx(14e-6));
}

TEST_CASE("nccl_costs fills every algorithm as the file maps it", "[nccl]") {
  for (const char* proto : {"simple", "ll", "ll128"}) {
    const net::CollectiveCostTable t = net::nccl_costs(proto);
    for (CollectiveAlgorithm a : {CollectiveAlgorithm::ring, CollectiveAlgorithm::tree,
                                  CollectiveAlgorithm::halving_doubling, CollectiveAlgorithm::direct,
                                  CollectiveAlgorithm::hierarchical, CollectiveAlgorithm::automatic,
                                  CollectiveAlgorithm::in_network}) {
      CHECK(t[a].step_latency_s[kNet] > 0);
      CHECK(t[a].bandwidth_efficiency > 0);
      CHECK(t[a].bandwidth_efficiency <= 1);
    }
    const auto& ring = t[CollectiveAlgorithm::ring];
    for (CollectiveAlgorithm a : {CollectiveAlgorithm::halving_doubling, CollectiveAlgorithm::direct,
                                  CollectiveAlgorithm::hierarchical}) {
      CHECK(t[a].base_latency_s == ring.base_latency_s);
      CHECK(t[a].step_latency_s == ring.step_latency_s);
    }
    // In-network reduction runs Simple whatever the protocol.
    CHECK(t[CollectiveAlgorithm::in_network].bandwidth_efficiency == 1.0);
    CHECK(t[CollectiveAlgorithm::in_network].step_latency_s[kNvlink] == Approx(23e-6));
  }
  CHECK(net::nccl_costs("ll")[CollectiveAlgorithm::ring].bandwidth_efficiency == 0.5);
  CHECK(net::nccl_costs("ll128")[CollectiveAlgorithm::tree].bandwidth_efficiency ==
        Approx(120.0 / 128.0));
  CHECK(net::nccl_costs("ll")[CollectiveAlgorithm::tree].step_latency_s[kNet] == Approx(5e-6));
}

TEST_CASE("NCCL's tree factors apply its 0.92 under every protocol", "[nccl][tree]") {
  // src/graph/tuning.cc (2.18.3, 2.20.3): the tree's bus bandwidth x 0.92, then LL x 1/3.8 and
  // LL128 x 120/128 across nodes or 7/9 inside one.
  using net::Protocol;
  const auto tree = [](Protocol p, int nodes, double base) {
    return net::nccl_efficiency(CollectiveAlgorithm::tree, p, {work::CollectiveOp::all_reduce, 8 * nodes, nodes, 8, 8},
                                base);
  };
  for (int nodes : {1, 2}) {
    CHECK(tree(Protocol::simple, nodes, 1.0) == Approx(0.92));
    CHECK(tree(Protocol::ll, nodes, 0.5) == Approx(0.92 / 3.8));
  }
  CHECK(tree(Protocol::ll128, 2, 120.0 / 128) == Approx(0.92 * 120.0 / 128));
  CHECK(tree(Protocol::ll128, 1, 120.0 / 128) == Approx(0.92 * 7.0 / 9));
  CHECK(net::nccl_efficiency(CollectiveAlgorithm::tree, Protocol::none, {}, 1.0) == 1.0);
  CHECK(net::nccl_efficiency(CollectiveAlgorithm::halving_doubling, Protocol::ll, {}, 0.5) == 0.5);
}

TEST_CASE("NCCL's tree with one rank a node runs at 0.85 of its bandwidth", "[nccl][tree]") {
  // src/graph/search.cc (2.18.3, 2.20.3, master): a node holding one GPU of the communicator gives
  // the tree graph the TREE pattern; tuning.cc then multiplies the tree's bus bandwidth by 0.85,
  // under every protocol, after its other factors. Master tests the largest pattern over the
  // ranks (init.cc, maxTreePattern): one node holding one rank is enough.
  using net::Protocol;
  const net::NcclGroupShape sparse{work::CollectiveOp::all_reduce, 4, 4, 1, 1};
  CHECK(net::nccl_efficiency(CollectiveAlgorithm::tree, Protocol::simple, sparse, 1.0) == Approx(0.92 * 0.85));
  CHECK(net::nccl_efficiency(CollectiveAlgorithm::tree, Protocol::ll, sparse, 0.5) == Approx(0.92 / 3.8 * 0.85));
  CHECK(net::nccl_efficiency(CollectiveAlgorithm::tree, Protocol::ll128, sparse, 120.0 / 128) ==
        Approx(0.92 * 120.0 / 128 * 0.85));
  // Two ranks on one node of three, one on each of the others: those two nodes' graphs have the
  // TREE pattern, and so does the communicator's largest: 0.85.
  const net::NcclGroupShape mixed{work::CollectiveOp::all_reduce, 4, 3, 2, 1};
  CHECK(net::nccl_efficiency(CollectiveAlgorithm::tree, Protocol::simple, mixed, 1.0) == Approx(0.92 * 0.85));
  // Two ranks on each of two nodes: balanced trees, no 0.85.
  const net::NcclGroupShape pairs{work::CollectiveOp::all_reduce, 4, 2, 2, 2};
  CHECK(net::nccl_efficiency(CollectiveAlgorithm::tree, Protocol::simple, pairs, 1.0) == Approx(0.92));
}

TEST_CASE("NCCL's ring LL and LL128 factors are master's whatever the group", "[nccl][ring]") {
  // src/graph/tuning.cc, master (from 2.21.5 and 2.23.4): ring LL x 0.5 and LL128 x 0.92 for
  // every op and group. (2.12.12 to 2.20.3: LL x 1/4, x 1/3 for one node's gathers, and LL128 x
  // 0.7 below two ranks a node; not modelled, data/nccl_tuning.json says why.)
  using net::Protocol;
  using Op = work::CollectiveOp;
  for (const net::NcclGroupShape& g : {net::NcclGroupShape{Op::all_reduce, 8, 1, 8, 8}, net::NcclGroupShape{Op::all_gather, 8, 1, 8, 8},
                                       net::NcclGroupShape{Op::all_reduce, 4, 4, 1, 1}}) {
    CHECK(net::nccl_efficiency(CollectiveAlgorithm::ring, Protocol::ll, g, 0.5) == 0.5);
    CHECK(net::nccl_efficiency(CollectiveAlgorithm::ring, Protocol::ll128, g, 120.0 / 128) == Approx(0.92));
    CHECK(net::nccl_efficiency(CollectiveAlgorithm::ring, Protocol::simple, g, 1.0) == 1.0);
  }
}

TEST_CASE("nccl_costs rejects an unknown protocol", "[nccl]") {
  CHECK_THROWS_AS(net::nccl_costs("bogus"), std::invalid_argument);
  CHECK_THROWS_AS(net::nccl_costs("none"), std::invalid_argument);
  CHECK_THROWS_AS(net::nccl_costs("Simple"), std::invalid_argument);
}

namespace {

// Seconds of an all-reduce of `bytes` under `protocol` over `nodes` rail-optimized nodes of 8
// GPUs and 8 NICs (a 3-tier-capable radix-64 fat-tree, 0.5 us cables, 0.2 us GPU <-> NVSwitch:
// every wire within NCCL's per-step figures, which then price every step).
double all_reduce_s(int nodes, net::NetworkModel model, net::Protocol protocol, CollectiveAlgorithm algorithm,
                    double bytes) {
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::fat_tree;
  p.nodes = nodes;
  p.tiers = 3;
  p.switch_radix = 64;
  p.rail_optimized = true;
  p.node.gpus = 8;
  p.node.nics = 8;
  p.node.gpu_latency_s = 0.2e-6;
  p.node.nic_bandwidth_Bps = 50e9;
  p.link_bandwidth_Bps = 50e9;
  p.link_latency_s = 0.5e-6;
  net::CommConfig config;
  config.model = model;
  config.protocol = protocol;
  return test::collective_seconds(topo::build_topology(p), topo::RoutingKind::dmodk, config,
                                  work::CollectiveOp::all_reduce, algorithm, bytes);
}

double tree_all_reduce_s(int nodes, net::NetworkModel model, net::Protocol protocol = net::Protocol::ll) {
  return all_reduce_s(nodes, model, protocol, CollectiveAlgorithm::tree, 8);
}

}  // namespace

TEST_CASE("a small tree all-reduce across nodes takes NCCL's tree latency", "[nccl][tree]") {
  // NCCL 2.20.3 src/graph/tuning.cc, tree all-reduce: baseLat + 2 x ((ranks per node - 1) x
  // intra + log2(nodes) x inter); LL: 6.8 + 2 x (7 x 0.6 + log2(nodes) x 5.0) us on 8-GPU
  // NVLink nodes, 125.2 us over 2,048 nodes (16,384 GPUs). 8 bytes move in well under a
  // nanosecond. Before the plan told its inter-node steps apart, every step cost the mean
  // over the tree's edges, mostly NVLink: 48 us at 2,048 nodes.
  for (int nodes : {2, 4, 16, 64, 256, 2048}) {
    CAPTURE(nodes);
    int levels = 0;
    while ((1 << levels) < nodes) ++levels;
    const double formula = (6.8 + 2 * (7 * 0.6 + levels * 5.0)) * 1e-6;
    CHECK(tree_all_reduce_s(nodes, net::NetworkModel::analytical) == Approx(formula).epsilon(1e-3));
    if (nodes <= 64) CHECK(tree_all_reduce_s(nodes, net::NetworkModel::flow) == Approx(formula).epsilon(1e-3));
  }
}

TEST_CASE("a small tree all-reduce on one node takes NCCL's chain latency", "[nccl][tree]") {
  // NCCL's tree inside a node is a chain through its GPUs (src/graph/connect.cc, ncclTopoPreset),
  // and the tuner prices it so (src/graph/tuning.cc, 2.16-2.20: baseLat + 2 x ((ranks per node
  // - 1) x intra + log2(1) x inter)): LL 6.8 + 2 x 7 x 0.6 = 15.2 us on 8 NVLink GPUs, LL128
  // 14 + 2 x 7 x 1.25 = 31.5 us. A binary tree over the node (2 log2 8 steps) gave 10.4 us.
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::single_node;
  p.node.gpu_latency_s = 0.2e-6;  // within NCCL's per-step figures, which then price every step
  for (int gpus : {2, 4, 8}) {
    p.node.gpus = gpus;
    const topo::Topology node = topo::build_topology(p);
    for (net::NetworkModel model : {net::NetworkModel::analytical, net::NetworkModel::flow}) {
      CAPTURE(gpus, static_cast<int>(model));
      net::CommConfig config;
      config.model = model;
      for (const auto& [protocol, base_us, step_us] :
           {std::tuple{net::Protocol::ll, 6.8, 0.6}, std::tuple{net::Protocol::ll128, 14.0, 1.25}}) {
        config.protocol = protocol;
        const double seconds = test::collective_seconds(node, topo::RoutingKind::shortest, config,
                                                        work::CollectiveOp::all_reduce, CollectiveAlgorithm::tree, 8);
        CHECK(seconds == Approx((base_us + 2 * (gpus - 1) * step_us) * 1e-6).epsilon(1e-3));
      }
    }
  }
}

TEST_CASE("a small Simple tree all-reduce across nodes takes NCCL's tree Simple latency", "[nccl][tree]") {
  // NCCL 2.20.3 src/graph/tuning.cc prices tree/Simple at baseLat 0 and hwLat 28 us on every
  // link class (NVLink, PCI and NET alike): 2 x ((8 - 1) x 28 + log2(nodes) x 28) us, 504 us on
  // 4 nodes of 8 GPUs (the ring: 8.4 + 62 steps at the mean of 28 NVLink edges at 3.4 us and 4
  // net edges at 14 us = 301 us), so under Simple the ring wins at small sizes there, as in
  // NCCL's own table. Earlier NCCL releases priced a tree/Simple step at 4 us on NVLink (6 PCI,
  // 14 NET): 112 us here, not the version data/nccl_tuning.json states. Both models agree.
  for (int nodes : {2, 4, 16}) {
    CAPTURE(nodes);
    int levels = 0;
    while ((1 << levels) < nodes) ++levels;
    const double formula = 2 * (7 * 28.0 + levels * 28.0) * 1e-6;
    for (net::NetworkModel model : {net::NetworkModel::analytical, net::NetworkModel::flow})
      CHECK(tree_all_reduce_s(nodes, model, net::Protocol::simple) == Approx(formula).epsilon(1e-3));
  }
}

TEST_CASE("NCCL's tree correction by size scales the tree's bandwidth", "[nccl][tree]") {
  // src/graph/tuning.cc (2.12.12 to 2.20.3 and master), ncclTopoGetAlgoTime: the tree
  // all-reduce's bandwidth x treeCorrectionFactor[protocol][log2i(bytes >> 6)] below 2^23 x 64
  // bytes.
  using net::Protocol;
  const auto tree = [](Protocol p, double bytes) {
    return net::nccl_size_correction(CollectiveAlgorithm::tree, work::CollectiveOp::all_reduce, p, bytes);
  };
  CHECK(tree(Protocol::simple, 32.0 * (1 << 20)) == 0.7);  // 2^19 sixty-fours
  CHECK(tree(Protocol::ll128, 32.0 * (1 << 20)) == 0.9);
  CHECK(tree(Protocol::ll128, 1 << 20) == 0.6);  // 2^14
  CHECK(tree(Protocol::ll, 65536) == 0.6);       // 2^10
  CHECK(tree(Protocol::ll, 65535) == 0.7);       // floor: 2^9.99 -> 9
  CHECK(tree(Protocol::simple, 8) == 0.9);       // below 64 bytes: index 0
  CHECK(tree(Protocol::simple, 256.0 * (1 << 20)) == 0.9);  // 2^22, the last entry
  CHECK(tree(Protocol::simple, 512.0 * (1 << 20)) == 1.0);  // 2^23: none
  CHECK(net::nccl_size_correction(CollectiveAlgorithm::ring, work::CollectiveOp::all_reduce, Protocol::simple, 1 << 20) == 1.0);
  CHECK(net::nccl_size_correction(CollectiveAlgorithm::tree, work::CollectiveOp::all_reduce, Protocol::none, 1 << 20) == 1.0);
  CHECK(net::nccl_size_correction(CollectiveAlgorithm::tree, work::CollectiveOp::broadcast, Protocol::simple, 1 << 20) == 1.0);
  // Through the communication layer: on 2 nodes of 8 the tree's Simple bandwidth time at 32 MiB
  // is 1/0.7 of its share of the 512 MiB one's, latency (the 8-byte time) aside.
  for (net::NetworkModel model : {net::NetworkModel::analytical, net::NetworkModel::flow}) {
    CAPTURE(static_cast<int>(model));
    const auto t = [model](double b) { return all_reduce_s(2, model, Protocol::simple, CollectiveAlgorithm::tree, b); };
    const double latency = t(8), mid = 32.0 * (1 << 20), large = 512.0 * (1 << 20);
    CHECK((t(mid) - latency) / (t(large) - latency) == Approx(mid / large / 0.7).epsilon(2e-3));
  }
}

TEST_CASE("NCCL's ring plateau raises a large Simple ring all-reduce's latency across nodes", "[nccl][ring]") {
  // src/graph/tuning.cc (2.18.3, 2.20.3, master), ncclTopoGetAlgoTime: a Simple ring all-reduce across
  // nodes pays its latency x 1.4 (x 1.9 below compute capability 8.0) once nBytes / (channels x
  // ranks) >= 64, where channels are the communicator's: twice the 8 rings its search finds on
  // 8-NIC nodes (connect.cc). On 2 nodes of 8 GPUs from 64 x 16 x 16 = 16 KiB.
  using net::Protocol;
  const net::NcclGroupShape two_nodes{work::CollectiveOp::all_reduce, 16, 2, 8, 8};
  const auto factor = [&](double bytes, std::string_view arch) {
    return net::nccl_latency_factor(CollectiveAlgorithm::ring, Protocol::simple, two_nodes, bytes, 8, arch);
  };
  CHECK(factor(16383, "hopper") == 1.0);
  CHECK(factor(16384, "hopper") == 1.4);
  CHECK(factor(16384, "ampere") == 1.4);
  CHECK(factor(16384, "volta") == 1.9);
  CHECK(factor(16384, "turing") == 1.9);  // T4: compute capability 7.5, below NCCL's 80
  // At most 64 channels (NCCL master's MAXCHANNELS): 40 rings count as 64 channels, not 80.
  CHECK(net::nccl_latency_factor(CollectiveAlgorithm::ring, Protocol::simple, two_nodes, 64 * 64 * 16 - 1, 40,
                                 "hopper") == 1.0);
  CHECK(net::nccl_latency_factor(CollectiveAlgorithm::ring, Protocol::simple, two_nodes, 64 * 64 * 16, 40,
                                 "hopper") == 1.4);
  const net::NcclGroupShape one_node{work::CollectiveOp::all_reduce, 8, 1, 8, 8};
  const net::NcclGroupShape gather{work::CollectiveOp::all_gather, 16, 2, 8, 8};
  CHECK(net::nccl_latency_factor(CollectiveAlgorithm::ring, Protocol::simple, one_node, 1e9, 8, "hopper") == 1.0);
  CHECK(net::nccl_latency_factor(CollectiveAlgorithm::ring, Protocol::simple, gather, 1e9, 8, "hopper") == 1.0);
  CHECK(net::nccl_latency_factor(CollectiveAlgorithm::ring, Protocol::ll128, two_nodes, 1e9, 8, "hopper") == 1.0);
  CHECK(net::nccl_latency_factor(CollectiveAlgorithm::tree, Protocol::simple, two_nodes, 1e9, 8, "hopper") == 1.0);
  // Through the communication layer (Hopper by default): the step at 16 KiB is all latency.
  for (net::NetworkModel model : {net::NetworkModel::analytical, net::NetworkModel::flow}) {
    CAPTURE(static_cast<int>(model));
    const auto t = [model](double b) { return all_reduce_s(2, model, Protocol::simple, CollectiveAlgorithm::ring, b); };
    CHECK(t(16384) / t(16383) == Approx(1.4).epsilon(2e-3));
  }
}

namespace {

// Seconds of a Simple ring all-reduce of `bytes` over a PCIe node of 2 GPUs at 32 GB/s per
// direction, with or without peer-to-peer between them.
double pcie_ring_all_reduce_s(bool host_staged, double bytes, net::NetworkModel model) {
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::single_node;
  p.node.gpus = 2;
  p.node.nics = 2;
  p.node.fabric = topo::NodeFabric::pcie;
  p.node.pcie_bandwidth_Bps = 32e9;
  net::CommConfig config;
  config.model = model;
  config.protocol = net::Protocol::simple;
  config.host_staged = host_staged;
  return test::collective_seconds(topo::build_topology(p), topo::RoutingKind::shortest, config,
                                  work::CollectiveOp::all_reduce, CollectiveAlgorithm::ring, bytes);
}

}  // namespace

TEST_CASE("without P2P a node's all-reduce runs at NCCL's SHM share of the PCIe rate", "[nccl][shm]") {
  // The file's measurement: 3.9 GB/s busbw over SHM on PCIe Gen3 x16 (15.75 GB/s), 0.248.
  CHECK(net::nccl_shm_efficiency() == Approx(0.248));
  for (net::NetworkModel model : {net::NetworkModel::analytical, net::NetworkModel::flow}) {
    CAPTURE(static_cast<int>(model));
    // The per-byte slope (two sizes remove the latency, which staging leaves as NCCL's PCI one).
    const auto slope = [&](bool staged) {
      return (pcie_ring_all_reduce_s(staged, 64e6, model) - pcie_ring_all_reduce_s(staged, 32e6, model)) / 32e6;
    };
    // 2 GPUs: the ring moves S each way over each GPU's link: S / 32 GB/s with P2P.
    CHECK(slope(false) == Approx(1 / 32e9).epsilon(1e-6));
    CHECK(slope(true) == Approx(1 / (32e9 * 0.248)).epsilon(1e-6));
    // The latency is the same: NCCL prices a SHM path as PCI.
    const double fixed_p2p = pcie_ring_all_reduce_s(false, 32e6, model) - 32e6 * slope(false);
    const double fixed_shm = pcie_ring_all_reduce_s(true, 32e6, model) - 32e6 * slope(true);
    CHECK(fixed_shm == Approx(fixed_p2p).epsilon(1e-6));
  }
}

namespace {

// Seconds of an all-reduce of `bytes` by `algorithm` over one node of `gpus` GPUs (the default
// fabric, NVSwitch) under `config`.
double nccl_node_all_reduce_s(int gpus, const net::CommConfig& config, CollectiveAlgorithm algorithm, double bytes) {
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::single_node;
  p.node.gpus = gpus;
  return test::collective_seconds(topo::build_topology(p), topo::RoutingKind::shortest, config,
                                  work::CollectiveOp::all_reduce, algorithm, bytes);
}

// Seconds of a ring all-reduce of 8 bytes over a node of 2 GPUs under `library` and `protocol`.
double two_rank_all_reduce_s(net::CollectiveLibrary library, net::Protocol protocol, net::NetworkModel model) {
  net::CommConfig config;
  config.model = model;
  config.protocol = protocol;
  config.collective_library = library;
  return nccl_node_all_reduce_s(2, config, CollectiveAlgorithm::ring, 8);
}

}  // namespace

TEST_CASE("Neuron's collectives library prices every protocol with its own latencies", "[nccl][neuron]") {
  // sim/network/neuron_ccom.cpp: 51.7 us once and 3.17 us a step inside an instance; a 2-rank
  // ring all-reduce takes 2 steps. NCCL's Simple gives 8.4 + 2 x 3.4 us (its figures are above the
  // node's wire latency, 1.4 us a step here, as Neuron's are).
  using L = net::CollectiveLibrary;
  for (net::NetworkModel model : {net::NetworkModel::analytical, net::NetworkModel::flow}) {
    CAPTURE(static_cast<int>(model));
    for (net::Protocol protocol : {net::Protocol::ll, net::Protocol::simple, net::Protocol::automatic})
      CHECK(two_rank_all_reduce_s(L::neuron_ccom, protocol, model) == Approx((51.7 + 2 * 3.17) * 1e-6).epsilon(1e-3));
    CHECK(two_rank_all_reduce_s(L::nccl, net::Protocol::simple, model) == Approx((8.4 + 2 * 3.4) * 1e-6).epsilon(1e-3));
    // none is the wire alone under either library.
    CHECK(two_rank_all_reduce_s(L::neuron_ccom, net::Protocol::none, model) ==
          Approx(two_rank_all_reduce_s(L::nccl, net::Protocol::none, model)));
    CHECK(two_rank_all_reduce_s(L::neuron_ccom, net::Protocol::none, model) < 5e-6);
  }
}

TEST_CASE("NVLS's loops and pipeline share follow NCCL's chunk rules", "[nccl][nvls]") {
  // enqueue.cc (2.18.3, 2.20.3): chunk 128 KiB, shrunk to 64 KiB below 64 loops' worth, 32 KiB
  // below 8, 16 KiB below 2, a loop being 16 channels x 8 heads x chunk; 3 pipeline stages.
  CHECK(net::nccl_nvls_loops(1 << 30, 8) == 64);        // 128 KiB chunks: 1 GiB / 16 MiB a loop
  CHECK(net::nccl_nvls_loops(256 << 20, 8) == 32);      // 64 KiB: 256 MiB / 8 MiB
  CHECK(net::nccl_nvls_loops(64 << 20, 8) == 8);        // 64 KiB (64 MiB is not below 8 loops of 64 KiB)
  CHECK(net::nccl_nvls_loops(32 << 20, 8) == 8);        // 32 KiB: 32 MiB / 4 MiB
  CHECK(net::nccl_nvls_loops(16 << 20, 8) == 4);        // 32 KiB: 16 MiB / 4 MiB
  CHECK(net::nccl_nvls_loops(8 << 20, 8) == 2);         // 32 KiB (8 MiB is not below 2 loops of 32 KiB)
  CHECK(net::nccl_nvls_loops(4 << 20, 8) == 2);         // 16 KiB: 4 MiB / 2 MiB
  CHECK(net::nccl_nvls_loops(1024, 8) == 1);            // a partial loop is one
  CHECK(net::nccl_nvls_loops(16 << 20, 4) == 8);        // 4 heads: 32 KiB chunks, 2 MiB a loop
  CHECK(net::nccl_nvls_pipeline_share(16 << 20, 8) == Approx(4.0 / 6.0));
  CHECK(net::nccl_nvls_pipeline_share(1 << 30, 8) == Approx(64.0 / 66.0));
  CHECK(net::nccl_nvls_pipeline_share(1024, 8) == Approx(1.0 / 3.0));
  CHECK_THROWS_AS(net::nccl_nvls_loops(1024, 0), std::invalid_argument);
  // Past 2^31 - 1 loops (1000 PB: 6e10 loops) the count stops there rather than overflowing an
  // int, and the pipeline costs nothing measurable.
  CHECK(net::nccl_nvls_loops(1e18, 8) == std::numeric_limits<int>::max());
  CHECK(net::nccl_nvls_pipeline_share(1e18, 8) == Approx(1.0).epsilon(1e-9));
}

namespace {

// Seconds of an NVLS all-reduce of `bytes` over one NVSwitch node of 8 GPUs under `protocol`.
double nvls_all_reduce_s(double bytes, net::Protocol protocol, net::NetworkModel model) {
  net::CommConfig config;
  config.model = model;
  config.protocol = protocol;
  config.in_network.nvls = true;
  return nccl_node_all_reduce_s(8, config, CollectiveAlgorithm::in_network, bytes);
}

}  // namespace

TEST_CASE("auto offers NVLS to groups of more than two GPUs of a node", "[nccl][nvls]") {
  // NCCL 2.18.3 and 2.20.3 leave NVLS off for two GPUs (src/transport/nvls.cc, ncclNvlsInit:
  // gpuCount <= 2); an explicit request still runs it.
  test::Fabric fabric(test::nvswitch_node());
  net::CommConfig config;
  config.in_network.nvls = true;
  auto comm = net::make_comm(fabric.network, net::Placement::identity(8), config);
  using A = CollectiveAlgorithm;
  for (const std::vector<int>& ranks : {std::vector{0, 1}, std::vector{2, 5}})
    CHECK(comm->candidates(comm->group(ranks), work::CollectiveOp::all_reduce) == std::vector{A::ring, A::tree});
  for (const std::vector<int>& ranks : {std::vector{0, 1, 2}, test::first_ranks(4), test::first_ranks(8)})
    CHECK(comm->candidates(comm->group(ranks), work::CollectiveOp::all_reduce) ==
          std::vector{A::ring, A::tree, A::in_network});
  CHECK_NOTHROW(comm->plan(comm->group(std::vector{0, 1}), work::CollectiveOp::all_reduce, A::in_network));
}

TEST_CASE("an NVLS all-reduce in one node pays its pipeline's fill and drain", "[nccl][nvls]") {
  for (net::NetworkModel model : {net::NetworkModel::analytical, net::NetworkModel::flow}) {
    CAPTURE(static_cast<int>(model));
    // The wire alone (no protocol) keeps the closed form: the bandwidth time doubles from 16
    // to 32 MiB. Under NCCL's Simple the 16 MiB collective runs 4 loops (6 stage times for 4)
    // and the 32 MiB one 8 loops (10 for 8): the bandwidth parts are 6/4 and 10/8 of the wire's.
    const double wire16 = nvls_all_reduce_s(16 << 20, net::Protocol::none, model);
    const double wire32 = nvls_all_reduce_s(32 << 20, net::Protocol::none, model);
    const double per_byte = (wire32 - wire16) / (16 << 20);
    const double fixed = nvls_all_reduce_s(16 << 20, net::Protocol::simple, model) - 1.5 * per_byte * (16 << 20);
    CHECK(nvls_all_reduce_s(32 << 20, net::Protocol::simple, model) - fixed ==
          Approx(1.25 * per_byte * (32 << 20)).epsilon(1e-9));
    CHECK(fixed == Approx(23e-6).epsilon(0.05));  // NCCL's NVLS latency (and the wire's)
  }
}
