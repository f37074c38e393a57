// The torus algorithm (XLA's per-dimension bidirectional rings) on torus fabrics: the closed
// form of an uncontended all-reduce, and the error off a torus.
#include <memory>
#include <numeric>
#include <vector>

#include <catch2/catch.hpp>

#include "network_test_support.hpp"

#include "sim/network/comm_factory.hpp"

using namespace cs;
using namespace cs::test;
using work::CollectiveAlgorithm;
using work::CollectiveOp;

namespace {

constexpr double kLinkBps = 45e9;  // per direction (TPU v5e's ICI link)
constexpr double kPcieLatencyS = 0.5e-6, kLinkLatencyS = 0.5e-6;
// One step between torus neighbours: GPU -> NIC (PCIe), NIC -> switch, switch -> switch,
// switch -> NIC (fabric cables), NIC -> GPU (PCIe).
constexpr double kHopS = 2 * kPcieLatencyS + 3 * kLinkLatencyS;

// A torus of one chip per node whose NIC reaches all its torus links at once (as a tpu_slice).
topo::TopologyParams chip_torus(std::vector<int> dims) {
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::torus;
  p.nodes = std::accumulate(dims.begin(), dims.end(), 1, [](int a, int b) { return a * b; });
  p.node.gpus = 1;
  p.node.nics = 1;
  p.node.nic_bandwidth_Bps = 2 * static_cast<double>(dims.size()) * kLinkBps;
  p.node.pcie_bandwidth_Bps = p.node.nic_bandwidth_Bps;
  p.link_bandwidth_Bps = kLinkBps;
  p.node.pcie_latency_s = kPcieLatencyS;
  p.link_latency_s = kLinkLatencyS;
  p.dims = std::move(dims);
  return p;
}

// Seconds one lone collective of `bytes` takes over every rank, with no protocol costs.
// The collective alone on `count` consecutive ranks from `first` (count < 0: every rank).
double run_alone(const topo::TopologyParams& p, CollectiveOp op, double bytes, int first = 0, int count = -1) {
  Fabric fabric(p);
  net::CommConfig c;
  c.protocol = net::Protocol::none;
  auto comm = net::make_comm(fabric.network, net::Placement::identity(fabric.topology.ranks()), c);
  std::vector<int> all(static_cast<std::size_t>(count < 0 ? fabric.topology.ranks() : count));
  std::iota(all.begin(), all.end(), first);
  const net::GroupId g = comm->group(all);
  net::CollectiveOptions o;
  o.algorithm = CollectiveAlgorithm::torus;
  double done = -1;
  fabric.sim.schedule_at(0.0, [&] { comm->collective(g, op, bytes, [&] { done = fabric.sim.now(); }, o); });
  fabric.sim.run();
  return done;
}

// sum_i 2 (d_i - 1) / (d_i prod_{j<i} d_j) S / (2 B), plus the latency of the 2 (d_i - 1)
// steps of each dimension's reduce-scatter and all-gather rings.
double closed_form_s(const std::vector<int>& dims, double bytes) {
  double sum = 0, before = 1, steps = 0;
  for (int d : dims) {
    sum += 2.0 * (d - 1) / (d * before);
    steps += 2.0 * (d - 1);
    before *= d;
  }
  return sum * bytes / (2 * kLinkBps) + steps * kHopS;
}

}  // namespace

TEST_CASE("torus: an uncontended all-reduce takes XLA's per-dimension closed form", "[torus]") {
  const double bytes = 256e6;
  for (const std::vector<int>& dims : {std::vector<int>{4, 4}, std::vector<int>{4, 4, 4}}) {
    CAPTURE(dims);
    const double expected = closed_form_s(dims, bytes);
    CHECK(run_alone(chip_torus(dims), CollectiveOp::all_reduce, bytes) == Approx(expected).epsilon(1e-9));
  }
  // Half of it each: reduce_scatter, then all_gather.
  const std::vector<int> dims{4, 4};
  CHECK(run_alone(chip_torus(dims), CollectiveOp::reduce_scatter, bytes) ==
        Approx(closed_form_s(dims, bytes) / 2).epsilon(1e-9));
  CHECK(run_alone(chip_torus(dims), CollectiveOp::all_gather, bytes) ==
        Approx(closed_form_s(dims, bytes) / 2).epsilon(1e-9));
}

TEST_CASE("torus: refused off a torus, on part of one, and for rooted ops", "[torus]") {
  Fabric fat_tree(rail_fat_tree());
  auto comm = net::make_comm(fat_tree.network, net::Placement::identity(fat_tree.topology.ranks()), net::CommConfig{});
  const net::GroupId g = comm->group(std::vector<int>{0, 1, 2, 3});
  REQUIRE_THROWS_WITH(comm->plan(g, CollectiveOp::all_reduce, CollectiveAlgorithm::torus),
                      Catch::Contains("torus runs on a torus fabric"));

  Fabric torus(chip_torus({4, 4}));
  auto on_torus = net::make_comm(torus.network, net::Placement::identity(torus.topology.ranks()), net::CommConfig{});
  const net::GroupId part = on_torus->group(std::vector<int>{0, 1, 2, 3});
  REQUIRE_THROWS_WITH(on_torus->plan(part, CollectiveOp::all_reduce, CollectiveAlgorithm::torus),
                      Catch::Contains("one rank on each node of whole slices of 16 nodes (16 here)"));
  std::vector<int> all(16);
  std::iota(all.begin(), all.end(), 0);
  const net::GroupId whole = on_torus->group(all);
  REQUIRE_THROWS_WITH(on_torus->plan(whole, CollectiveOp::broadcast, CollectiveAlgorithm::torus),
                      Catch::Contains("torus supports all_reduce, reduce_scatter and all_gather"));
  // A scatter and a gather per dimension; per stage a rank sends (d - 1)/d of what is left.
  const work::CollectivePlan& plan = on_torus->plan(whole, CollectiveOp::all_reduce, CollectiveAlgorithm::torus);
  CHECK(plan.stages.size() == 4);
  CHECK(work::bytes_sent_share(plan, 5) == Approx(2 * (3.0 / 4 + 3.0 / 16)));
}

TEST_CASE("torus: on a multislice, the slices' rings over ICI around a ring across slices over DCN", "[torus]") {
  // MaxText's multislice data parallelism: reduce-scatter inside each slice, all-reduce among
  // the chips at one position over the data-center network, all-gather inside each slice.
  constexpr double kDcnBps = 6.25e9, kDcnLatencyS = 2e-6;
  // A DCN step: PCIe, NIC cable, switch -> DCN switch, DCN switch -> switch, NIC cable, PCIe.
  constexpr double kDcnHopS = 2 * kPcieLatencyS + 2 * kLinkLatencyS + 2 * kDcnLatencyS;
  const std::vector<int> dims{4, 4};
  const double bytes = 256e6, chips = 16;
  for (int slices : {2, 3}) {
    CAPTURE(slices);
    topo::TopologyParams p = chip_torus(dims);
    p.slices = slices;
    p.nodes *= slices;
    p.dcn_bandwidth_Bps = kDcnBps;
    p.dcn_latency_s = kDcnLatencyS;
    const double n = slices;
    const double dcn_s = 2 * (n - 1) / n * bytes / chips / kDcnBps + 2 * (n - 1) * kDcnHopS;
    CHECK(run_alone(p, CollectiveOp::all_reduce, bytes) == Approx(closed_form_s(dims, bytes) + dcn_s).epsilon(1e-9));
    CHECK(run_alone(p, CollectiveOp::reduce_scatter, bytes) ==
          Approx((closed_form_s(dims, bytes) + dcn_s) / 2).epsilon(1e-9));
  }
}

TEST_CASE("torus: a group of two whole slices of three runs as a two-slice multislice", "[torus]") {
  // Hybrid sharding with groups of several slices: the DCN ring joins the group's slices only.
  topo::TopologyParams p = chip_torus({4, 4});
  p.dcn_bandwidth_Bps = 6.25e9;
  const double bytes = 256e6, whole = [&] {
    topo::TopologyParams two = p;
    two.slices = 2;
    two.nodes *= 2;
    return run_alone(two, CollectiveOp::all_reduce, bytes);
  }();
  p.slices = 3;
  p.nodes *= 3;
  CHECK(run_alone(p, CollectiveOp::all_reduce, bytes, 16, 32) == Approx(whole).epsilon(1e-12));
}

TEST_CASE("torus: on a multislice, a group of one slice's chips runs that slice's torus, off the DCN", "[torus]") {
  // Hybrid sharding's group inside a slice (FSDP on ICI, data parallelism across slices).
  const std::vector<int> dims{4, 4};
  const double bytes = 256e6;
  topo::TopologyParams p = chip_torus(dims);
  p.slices = 2;
  p.nodes *= 2;
  p.dcn_bandwidth_Bps = 6.25e9;
  Fabric fabric(p);
  net::CommConfig c;
  c.protocol = net::Protocol::none;
  auto comm = net::make_comm(fabric.network, net::Placement::identity(fabric.topology.ranks()), c);
  std::vector<int> second(16);
  std::iota(second.begin(), second.end(), 16);  // slice 1's chips
  const net::GroupId g = comm->group(second);
  net::CollectiveOptions o;
  o.algorithm = CollectiveAlgorithm::torus;
  double done = -1;
  fabric.sim.schedule_at(0.0, [&] { comm->collective(g, CollectiveOp::all_reduce, bytes, [&] { done = fabric.sim.now(); }, o); });
  fabric.sim.run();
  CHECK(done == Approx(closed_form_s(dims, bytes)).epsilon(1e-9));
  // Half of one slice and half of the other is neither: refused.
  std::vector<int> straddling(16);
  std::iota(straddling.begin(), straddling.end(), 8);
  REQUIRE_THROWS_WITH(comm->plan(comm->group(straddling), CollectiveOp::all_reduce, CollectiveAlgorithm::torus),
                      Catch::Contains("one rank on each node of whole slices of 16 nodes (32 here)"));
}
