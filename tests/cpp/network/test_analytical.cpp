// The analytical model against closed forms and against the flow model running the same plan.
// Plans are built by hand here, so these tests do not depend on the plan builders.
#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "network_test_support.hpp"

#include "sim/engine/simulator.hpp"
#include "sim/network/analytical_model.hpp"
#include "sim/network/collective_costs.hpp"
#include "sim/network/network.hpp"
#include "topology/topology.hpp"

using namespace cs;

namespace {

using namespace cs::test;

double analytical_time(const topo::TopologyParams& p, const work::CollectivePlan& plan,
                       double bytes, const net::CollectiveCosts& costs) {
  Fabric f(p);
  const net::RoutedPlan routed(f.network, plan);
  net::AnalyticalModel model(f.network);
  return model.estimate(routed, bytes, costs).time_s;
}

}  // namespace

TEST_CASE("analytical ring all-reduce in an NVSwitch node is 2(n-1)(alpha + S/(nB))",
          "[analytical]") {
  Fabric f(nvswitch_node());
  const work::CollectivePlan plan = ring_plan(first_ranks(8));
  const net::RoutedPlan routed(f.network, plan);
  net::AnalyticalModel model(f.network);
  REQUIRE(routed.stages() == 1);
  // GPU -> NVSwitch -> GPU per edge: 16 links, each crossed once.
  CHECK(routed.links(0).size() == 16);
  CHECK(std::all_of(routed.crossings(0).begin(), routed.crossings(0).end(), [](double c) { return c == 1; }));
  // Every hop is GPU -> NVSwitch -> GPU: 2 x 0.7 us of wire. A step costs the larger of that
  // and NCCL's NVLink step (which holds a typical wire): 1.4 us under an NVLink step of 1 us,
  // 3.4 us under one of 3.4 us.
  for (const auto& [eff, nvlink_step, alpha] : {std::tuple{1.0, 1e-6, 1.4e-6}, std::tuple{0.5, 1e-6, 1.4e-6},
                                                std::tuple{1.0, 3.4e-6, 3.4e-6}}) {
    net::CollectiveCosts c = some_costs(eff);
    c.step_latency_s[kNvlink] = nvlink_step;
    for (double S : {8.0 * 1024, 1.0 * (1 << 20), 1.0 * (1 << 30)}) {
      const double B = 450e9;
      const double expected = c.base_latency_s + 2 * 7 * (alpha + S / (8 * B * eff));
      const net::CollectiveEstimate e = model.estimate(routed, S, c);
      CHECK(e.time_s == Approx(expected).epsilon(1e-9));
      REQUIRE(e.stages.size() == 1);
      CHECK(e.stages[0].latency_s == Approx(2 * 7 * alpha).epsilon(1e-12));
      CHECK(e.stages[0].latency_s == Approx(net::stage_latency_s(f.network, plan.stages[0], c)));
      CHECK(f.topology.link(e.stages[0].bottleneck).bandwidth_Bps == B);
    }
  }
}

TEST_CASE("analytical ring all-reduce on a rail-optimized fat-tree matches the closed form",
          "[analytical]") {
  // Ranks 0..7 in order: GPU pairs within a node over NVSwitch (2 x 0.7 us), and between
  // nodes GPU -> NIC -> rail leaf -> (spine, when the rails differ) -> leaf -> NIC -> GPU.
  // The slowest edge crosses rails: 2 PCIe + 2 NIC + 2 spine links of 0.5 us = 3 us, plus the
  // NET step. B = 50 GB/s (NIC and fabric links).
  const topo::TopologyParams p = rail_fat_tree();
  Fabric f(p);
  const std::vector<int> ranks = first_ranks(8);
  const work::CollectivePlan plan = ring_plan(ranks);
  const net::RoutedPlan routed(f.network, plan);
  net::AnalyticalModel model(f.network);
  // No link is crossed twice, so the bottleneck is the slowest link on the ring.
  CHECK(*std::max_element(routed.crossings(0).begin(), routed.crossings(0).end()) == 1.0);
  double max_wire = 0;
  for (int i = 0; i < 8; ++i) max_wire = std::max(max_wire, f.network.route(ranks[i], ranks[(i + 1) % 8]).latency_s);
  REQUIRE(max_wire == Approx(3e-6));
  const net::CollectiveCosts c = some_costs();
  // A pipelined ring's step costs the mean over its edges (a chunk crosses them in turn) of
  // the larger of the wire and the class's step: here the NVLink edges' wires (1.4 us) beat
  // the 1 us NVLink step and the NET step (4 us) beats every cross-node wire (<= 3 us).
  double alpha = 0;
  int wire_won = 0, step_won = 0;
  for (int i = 0; i < 8; ++i) {
    const int a = ranks[i], b = ranks[(i + 1) % 8];
    const double wire = f.network.route(a, b).latency_s;
    const double step = c.step_latency_s[static_cast<std::size_t>(net::transfer_class(f.topology, a, b))];
    alpha += std::max(wire, step) / 8;
    (wire > step ? wire_won : step_won)++;
  }
  REQUIRE(wire_won > 0);
  REQUIRE(step_won > 0);
  const double B = 50e9, S = 64.0 * (1 << 20);
  const net::CollectiveEstimate e = model.estimate(routed, S, c);
  CHECK(e.time_s == Approx(c.base_latency_s + 14 * (alpha + S / (8 * B))).epsilon(1e-9));
  CHECK(f.topology.link(e.stages[0].bottleneck).bandwidth_Bps == B);
  CHECK(e.time_s == Approx(flow_time(p, plan, S, c)).epsilon(1e-9));
}

TEST_CASE("analytical equals the flow model when nothing contends", "[analytical]") {
  // Three stages on the rail fat-tree: independent transfers on disjoint routes with
  // different shares and latencies, a ring pipeline, then intra- and inter-node pairs.
  const topo::TopologyParams p = rail_fat_tree();
  work::CollectivePlan plan;
  plan.ranks = first_ranks(8);
  work::Stage pairs;
  pairs.name = "rail pairs";
  pairs.steps = 3;
  pairs.transfers = {{0, 2, 0.75, -1}, {4, 6, 0.25, -1}, {1, 0, 0.5, -1}};
  plan.stages.push_back(pairs);
  plan.stages.push_back(ring_all_reduce({0, 2, 4, 6}));
  work::Stage last;
  last.name = "mixed";
  last.transfers = {{3, 7, 1.0, -1}, {6, 7, 2.0, -1}};
  plan.stages.push_back(last);

  for (double eff : {1.0, 120.0 / 128.0}) {
    const net::CollectiveCosts c = some_costs(eff);
    for (double S : {4096.0, 1.0 * (1 << 20), 1.0 * (1 << 30)})
      CHECK(analytical_time(p, plan, S, c) == Approx(flow_time(p, plan, S, c)).epsilon(1e-9));
  }
  // The wire alone (default costs) too.
  CHECK(analytical_time(p, plan, 1 << 20, {}) == Approx(flow_time(p, plan, 1 << 20, {})).epsilon(1e-9));
}

TEST_CASE("a pipeline crossing a link twice: analytical equals the flow model", "[analytical]") {
  // Two nodes of 2 GPUs and one NIC. The ring 0 -> 2 -> 1 -> 3 -> 0 leaves each node twice
  // through its one NIC, so the NIC links carry the pipeline twice: half its rate.
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::fat_tree;
  p.nodes = 2;
  p.node.gpus = 2;
  p.node.nics = 1;
  p.node.nic_bandwidth_Bps = 50e9;
  p.node.pcie_bandwidth_Bps = 64e9;
  p.switch_radix = 8;
  const std::vector<int> ranks{0, 2, 1, 3};
  const work::CollectivePlan plan = ring_plan(ranks);
  const double S = 1.0 * (1 << 26);
  const net::CollectiveCosts c = some_costs();

  Fabric f(p);
  const net::RoutedPlan routed(f.network, plan);
  // Two of the ring's edges cross the NIC links: rows with two entries.
  CHECK(*std::max_element(routed.crossings(0).begin(), routed.crossings(0).end()) == 2.0);
  net::AnalyticalModel model(f.network);
  const net::CollectiveEstimate e = model.estimate(routed, S, c);
  CHECK(e.stages[0].bandwidth_s == Approx(2 * (1.5 * S) / 50e9).epsilon(1e-12));
  CHECK(e.time_s == Approx(flow_time(p, plan, S, c)).epsilon(1e-9));
}

TEST_CASE("link_bytes and link_busy_s accumulate each estimate's loads", "[analytical]") {
  Fabric f(nvswitch_node());
  const work::CollectivePlan plan = ring_plan(first_ranks(4));
  const net::RoutedPlan routed(f.network, plan);
  net::AnalyticalModel model(f.network);
  const double S = 1e6, eff = 0.5;
  model.estimate(routed, S, some_costs(eff));
  model.estimate(routed, S, some_costs(eff));
  const topo::LinkId l = f.network.route(0, 1).links.front();
  CHECK(model.link_bytes()[l] == Approx(2 * 1.5 * S / eff));
  CHECK(model.link_busy_s()[l] == Approx(2 * 1.5 * S / eff / 450e9));
  const topo::LinkId unused = f.network.route(5, 6).links.front();
  CHECK(model.link_bytes()[unused] == 0);
  CHECK_THROWS_AS(model.estimate(routed, -1, some_costs()), std::invalid_argument);
  CHECK_THROWS_AS(model.estimate(routed, S, some_costs(0)), std::invalid_argument);
}

TEST_CASE("a ring over thousands of ranks: estimate and time_s agree, time_s records nothing",
          "[analytical]") {
  // A 3-tier radix-64 fat-tree of 8-GPU nodes; a ring over every rank (one stage, n transfers).
  // Speed is the benchmark's business (bench/bench_collective); here, the numbers.
  for (int ranks : {4096, 16384}) {
    topo::TopologyParams p;
    p.kind = topo::TopologyKind::fat_tree;
    p.tiers = 3;
    p.nodes = ranks / 8;
    p.rail_optimized = true;
    Fabric f(p);
    const work::CollectivePlan plan = ring_plan(first_ranks(ranks));
    const net::RoutedPlan routed(f.network, plan);
    net::AnalyticalModel model(f.network);
    const net::CollectiveCosts c = some_costs(0.5);
    const double S = 1 << 30;
    const double quiet = net::AnalyticalModel::time_s(routed, S, c);
    CHECK(std::all_of(model.link_bytes().begin(), model.link_bytes().end(), [](double x) { return x == 0; }));
    const net::CollectiveEstimate e = model.estimate(routed, S, c);
    CHECK(quiet == Approx(e.time_s).epsilon(1e-14));
    // One ring: the bottleneck carries 2(n-1)/n x S / efficiency.
    const topo::LinkId b = e.stages[0].bottleneck;
    CHECK(model.link_bytes()[b] == Approx(2.0 * (ranks - 1) / ranks * S / 0.5).epsilon(1e-12));
    CHECK(e.stages[0].bandwidth_s == Approx(model.link_bytes()[b] / f.topology.link(b).bandwidth_Bps).epsilon(1e-12));
  }
}

TEST_CASE("StageLatency: each step costs the larger of its wire and NCCL's step for its class",
          "[analytical]") {
  // One pipeline of three network edges with wires 0.5, 1.5 and 3 us and one NVLink edge of
  // 1 us, under a NET step of 2 us and an NVLink step of 0.6 us: (2 + 2 + 3 + 1) / 4 = 2 us.
  // An independent transfer beside it (wire 2.5 us, NET) costs 2.5 us: the stage's step.
  work::Stage st;
  st.steps = 3;
  for (int i = 0; i < 4; ++i) st.transfers.push_back({i, i + 1, 1.0, 0});
  st.transfers.push_back({0, 9, 1.0, -1});
  using W = net::StageLatency::Wire;
  const std::vector<W> wires{{0.5e-6, net::TransferClass::net}, {1.5e-6, net::TransferClass::net},
                             {3e-6, net::TransferClass::net}, {1e-6, net::TransferClass::nvlink},
                             {2.5e-6, net::TransferClass::net}};
  net::CollectiveCosts c;
  c.step_latency_s = {0.6e-6, 0, 2e-6};
  CHECK(net::StageLatency(st, wires).seconds(c) == Approx(3 * 2.5e-6).epsilon(1e-12));
  st.transfers.pop_back();
  const std::vector<W> pipeline(wires.begin(), wires.end() - 1);
  CHECK(net::StageLatency(st, pipeline).seconds(c) == Approx(3 * 2e-6).epsilon(1e-12));
  // No protocol: the wire alone, (0.5 + 1.5 + 3 + 1) / 4.
  CHECK(net::StageLatency(st, pipeline).seconds(net::CollectiveCosts{}) == Approx(3 * 1.5e-6).epsilon(1e-12));
}
