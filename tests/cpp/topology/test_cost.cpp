// Cost and power: bundled and configured fabrics of the same capacity cost the same; one
// pricing basis; the cable rule by rack; network-only figures and cost per delivered GB/s.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "direct_helpers.hpp"
#include "helpers.hpp"
#include "report_helpers.hpp"
#include "topology/report.hpp"

using namespace cs::topo;
using cs::topo::test::dragonfly;
using cs::topo::test::fat_tree_tiers;
using cs::topo::test::torus;
using cs::topo::test::count;
using cs::topo::test::flat_prices;

namespace {

// Street-like prices (bill.hpp's classes), distinct so a wrong count shows in the total.
PriceTable street_prices() {
  return flat_prices({700, 11}, {2000, 25}, {650, 10}, {100, 0}, {60, 0}, {250000, 10200});
}

TopologyReport street_report(const TopologyParams& p) {
  return make_report(build_topology(p), p, street_prices());
}

// 4,096 GPUs: 512 DGX-like nodes, rails, radix 64, 3 tiers, with the given bundles.
TopologyParams gpus_4k(std::vector<int> parallel) {
  TopologyParams p = fat_tree_tiers(3, 512, 8, 8, 64, 1.0, true);
  p.parallel_links = std::move(parallel);
  return p;
}

}  // namespace

TEST_CASE("a fat-tree costs what the same capacity built with bundled cables costs") {
  // The configurator's 4,096-GPU fabric against the parallel_links = 4 and another
  // bundling of the same capacity: same switches, cables, bisection; cost equal up to the
  // cables' price difference (none here: the cable counts agree too).
  const TopologyReport configured = street_report(gpus_4k({}));
  for (const std::vector<int>& bundles : {std::vector<int>{4, 4}, std::vector<int>{1, 16}}) {
    const TopologyReport bundled = street_report(gpus_4k(bundles));
    CHECK(bundled.switches == configured.switches);
    CHECK(count(bundled.switches_by_tier, "core") == 64);
    CHECK(bundled.bisection_Bps == Approx(configured.bisection_Bps));
    const double cable_difference =
        std::abs(bundled.copper_cables - configured.copper_cables) * 100.0 +
        std::abs(bundled.optical_cables - configured.optical_cables) * (60.0 + 2 * 650);
    CHECK(std::abs(bundled.cost_usd - configured.cost_usd) <= cable_difference + 1e-6);
    CHECK(std::abs(bundled.power_w - configured.power_w) <=
          std::abs(bundled.optical_cables - configured.optical_cables) * 20.0 + 1e-9);
  }
  // Unbundled, a core per spine up-port in each plane: with 4 pods the full k^2/4 core, 1,024
  // cores with 4 of 64 ports used; the configurator takes 10 pods of 12-13 leaves instead,
  // 320 spines of 13 up-ports and 13 x 32 = 416 cores with 10 ports used. The same bisection,
  // 544 more switches and 64 more cables (optical, 2 transceivers each) to pay for.
  const TopologyReport single = street_report(gpus_4k({1, 1}));
  CHECK(count(single.switches_by_tier, "spine") == 320);
  CHECK(count(single.switches_by_tier, "core") == 416);
  CHECK(single.bisection_Bps == Approx(configured.bisection_Bps));
  CHECK(single.switch_ports - configured.switch_ports == 544 * 64);
  CHECK(single.network_cost_usd - configured.network_cost_usd ==
        Approx(544 * 64 * 700.0 + 64 * (60.0 + 2 * 650)));
}

TEST_CASE("network cost per GPU: 4,096 and 16,384 GPUs alike once both use every port") {
  // The issue: $19.0k per GPU at 4K against $10.6k at 16K, from the 4K core's empty ports.
  const TopologyReport r4k = street_report(gpus_4k({}));
  const TopologyReport r16k = street_report(fat_tree_tiers(3, 2048, 8, 8, 64, 1.0, true));
  CHECK(r4k.switch_ports == r4k.switch_ports_used);
  CHECK(r16k.switch_ports == r16k.switch_ports_used);
  CHECK(r4k.network_cost_per_gpu_usd == Approx(r16k.network_cost_per_gpu_usd));
  // Per GPU: a NIC, 5 switch ports (leaf down and up, spine down and up, core down) and 3
  // cables (NIC-leaf, leaf-spine, spine-core), all optical with 2 transceivers.
  CHECK(r4k.network_cost_per_gpu_usd == Approx(2000 + 5 * 700 + 3 * (60 + 2 * 650)));
  CHECK(r4k.network_power_w == Approx(4096 * (25 + 5 * 11 + 3 * 2 * 10)));
}

TEST_CASE("one pricing basis: switches bought whole in every family") {
  // A fat-tree switch has switch_radix ports even when some are empty: 5 pods leave each
  // core 5 of 8 ports used.
  const TopologyReport ft = street_report(fat_tree_tiers(3, 40, 1, 1, 8));
  CHECK(ft.switch_ports == 28 * 8);
  CHECK(ft.switch_ports_used < ft.switch_ports);
  CHECK_THAT(ft.pricing_basis, Catch::Contains("switches bought whole"));
  // A dragonfly router has its designed ports, the global ports left unused by the
  // arrangement included: a = 3, h = 2, g = 5 uses 4 of each group's 6 global ports.
  const TopologyParams df = dragonfly(3, 2, 2, 5, 30, 1, 1);
  const TopologyReport d = street_report(df);
  CHECK(d.switch_ports == 15 * (2 + 2 + 2));
  CHECK(d.switch_ports_used == 15 * 2 + 15 * 2 + 5 * 4);  // NICs, local, global
  // A torus switch likewise (NICs + 2 bundles per ring dimension).
  const TopologyReport to = street_report(torus({4, 4}, 1, 2));
  CHECK(to.switch_ports == 16 * (2 + 4));
  CHECK(to.switch_ports_used == to.switch_ports);
}

TEST_CASE("cable rule: copper inside a rack, optical between racks") {
  SECTION("top-of-rack leaves: a leaf's 4 nodes share a rack, NIC cables are copper") {
    const TopologyReport r = street_report(fat_tree_tiers(2, 16, 8, 8, 64));
    CHECK(r.racks == 4);
    CHECK(r.copper_cables == 128);
    CHECK(r.optical_cables == 4 * 32);  // leaf to spine
    CHECK(r.transceivers == 2 * 128);
  }
  SECTION("racks of 2 nodes: the same leaves span 2 racks, NIC cables turn optical") {
    TopologyParams p = fat_tree_tiers(2, 16, 8, 8, 64);
    p.nodes_per_rack = 2;
    const TopologyReport r = street_report(p);
    CHECK(r.racks == 8);
    CHECK(r.copper_cables == 0);
    CHECK(r.optical_cables == 128 + 128);
  }
  SECTION("rail-optimized: a rail leaf serves nodes of many racks, every NIC cable optical") {
    // 16,384 GPUs: 16,384 NIC, leaf-spine and spine-core cables, 98,304 transceivers (the
    // 32,768 for the NIC cables were missing when they were priced as copper).
    const TopologyReport r = street_report(fat_tree_tiers(3, 2048, 8, 8, 64, 1.0, true));
    CHECK(r.copper_cables == 0);
    CHECK(r.optical_cables == 3 * 16384);
    CHECK(r.transceivers == 6 * 16384);
  }
  SECTION("torus: neighbours in one rack are copper") {
    // 4 x 4, racks of 4 positions: each row of dimension 0 is a rack; its ring (4 cables)
    // and NIC cables are copper, the dimension-1 rings (16 cables) optical.
    const TopologyReport r = street_report(torus({4, 4}, 1, 1));
    CHECK(r.copper_cables == 16 + 16);
    CHECK(r.optical_cables == 16);
  }
}

TEST_CASE("network-only cost, per GPU, per bisection GB/s and per measured busbw") {
  const TopologyParams p = fat_tree_tiers(2, 128, 8, 8, 64, 1.0, true);
  const TopologyReport r = street_report(p);
  double network = 0, nodes = 0;
  for (const CostLine& line : r.bill) (line.network ? network : nodes) += line.usd;
  CHECK(nodes == Approx(128 * 250000.0));
  CHECK(r.network_cost_usd == Approx(network));
  CHECK(r.cost_usd == Approx(network + nodes));
  CHECK(r.network_cost_per_gpu_usd == Approx(network / 1024));
  CHECK(r.network_usd_per_bisection_GBps == Approx(network / (r.bisection_Bps / 1e9)));
  // A measured busbw of 40 GB/s to each of the 1,024 GPUs.
  CHECK(network_usd_per_busbw_GBps(r, 40e9) == Approx(network / (1024 * 40.0)));
  CHECK(network_usd_per_busbw_GBps(r, 0) == 0);
}
