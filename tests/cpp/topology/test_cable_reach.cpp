// Cable reach classes (topology/bill.hpp): DAC in a rack, AOC in a row, fiber with transceivers
// between rows, twin-port transceivers pairing a switch's 400G fiber ends; counts and cost by
// hand.
#include <catch2/catch.hpp>

#include <array>
#include <string>

#include "direct_helpers.hpp"
#include "helpers.hpp"
#include "report_helpers.hpp"
#include "topology/bill.hpp"

using namespace cs::topo;
using cs::topo::test::dragonfly;
using cs::topo::test::fat_tree_tiers;
using cs::topo::test::flat_prices;

namespace {

// Distinct prices, so that a miscounted class shows in the total.
PriceTable reach_prices() {
  PriceTable t = flat_prices({700, 11}, {2000, 25}, {650, 10}, {100, 0}, {60, 0}, {250000, 10200});
  t.aoc.by_gbps[400] = {800, 18, "test"};
  t.twin_port_transceiver.by_gbps[800] = {1000, 17, "test"};
  return t;
}

// { copper, AOC, fiber, transceivers, of which twin-port }.
std::array<int64_t, 5> cable_counts(const Bill& b) {
  return {b.copper_cables, b.aoc_cables, b.fiber_cables, b.transceivers, b.twin_port_transceivers};
}

int64_t line_count(const Bill& b, const std::string& item) {
  for (const CostLine& c : b.lines)
    if (c.item == item) return c.count;
  return 0;
}

}  // namespace

TEST_CASE("cable reach: a leaf-spine fabric in one row and over two rows") {
  // 16 nodes x 8 NICs, radix 64: 4 leaves of 4 nodes (32 NICs down, 32 up), 2 spines of 64
  // ports. Racks of 4 nodes: each leaf is its rack's top-of-rack switch.
  TopologyParams p = fat_tree_tiers(2, 16, 8, 8, 64);
  SECTION("one row (8 racks per row): spines at the row's end, leaf-spine cables are AOCs") {
    const Topology t = build_topology(p);
    const Bill b = make_bill(t, p, reach_prices());
    CHECK(b.racks == 4);
    CHECK(b.rows == 1);
    CHECK(cable_counts(b) == std::array<int64_t, 5>{128, 128, 0, 0, 0});
    CHECK(b.optical_cables == 128);
    CHECK(line_count(b, "aoc_400Gbps") == 128);
    // 6 switches x 64 ports, 128 NICs, 128 DACs, 128 AOCs.
    CHECK(b.network_cost_usd == Approx(6 * 64 * 700.0 + 128 * 2000.0 + 128 * 100.0 + 128 * 800.0));
    CHECK(b.network_power_w == Approx(6 * 64 * 11.0 + 128 * 25.0 + 128 * 18.0));
  }
  SECTION("two racks per row: the spines link two rows, so sit in the central row: fiber") {
    p.racks_per_row = 2;
    const Topology t = build_topology(p);
    const Bill b = make_bill(t, p, reach_prices());
    CHECK(b.rows == 2);
    // 256 fiber ends, all at switches, 32 per leaf and 64 per spine: paired in 128 twin-port
    // 800G modules, no single-port one.
    CHECK(cable_counts(b) == std::array<int64_t, 5>{128, 0, 128, 128, 128});
    CHECK(line_count(b, "twin_port_transceiver_800Gbps") == 128);
    CHECK(line_count(b, "transceiver_400Gbps") == 0);
    CHECK(line_count(b, "optical_cable") == 128);
    CHECK(b.network_cost_usd == Approx(6 * 64 * 700.0 + 128 * 2000.0 + 128 * 100.0 + 128 * (1000.0 + 60.0)));
    CHECK(b.network_power_w == Approx(6 * 64 * 11.0 + 128 * 25.0 + 128 * 17.0));
  }
  SECTION("without AOC or twin-port prices: fiber in the row, a single-port transceiver per end") {
    PriceTable prices = reach_prices();
    prices.aoc.by_gbps.clear();
    prices.twin_port_transceiver.by_gbps.clear();
    const Bill b = make_bill(build_topology(p), p, prices);
    CHECK(cable_counts(b) == std::array<int64_t, 5>{128, 0, 128, 256, 0});
  }
}

TEST_CASE("cable reach: rail-optimized leaves serve a row of racks, NIC cables are AOCs") {
  // 128 nodes x 8 NICs on rails, radix 64: each rail leaf serves 32 nodes (8 racks of 4, one
  // row); 4 rows. Every NIC cable runs inside its row (AOC); the spines gather leaves of all
  // rows (central row): leaf-spine cables are fiber, both ends at switches (twin-port).
  const TopologyParams p = fat_tree_tiers(2, 128, 8, 8, 64, 1.0, true);
  const Topology t = build_topology(p);
  const Bill b = make_bill(t, p, reach_prices());
  CHECK(b.rows == 4);
  // 2,048 fiber ends at switches, an even number per switch: 1,024 twin-port modules.
  CHECK(cable_counts(b) == std::array<int64_t, 5>{0, 1024, 1024, 1024, 1024});
}

TEST_CASE("cable reach: a dragonfly's groups in rows, a half-used twin-port module") {
  // a = 2 routers of p = 2 nodes, h = 1, g = 3 (one global cable per group pair): 12 nodes.
  // Racks of 2 nodes: each router is its rack's top-of-rack switch.
  TopologyParams p = dragonfly(2, 2, 1, 3, 12, 2, 1);
  p.nodes_per_rack = 2;
  struct Case {
    int racks_per_row;
    int64_t rows;
    std::array<int64_t, 5> counts;  // cable_counts
  };
  const Case cases[] = {
      // A group per row: 12 NIC cables (DAC), one local cable per group (AOC), one global per
      // group pair (fiber); each router has one fiber end: a twin-port module each, half used.
      {2, 3, {12, 3, 3, 6, 6}},
      // A rack per row: local cables fiber too, two fiber ends per router, one module.
      {1, 6, {12, 0, 6, 6, 6}},
      // One row: every switch-to-switch cable is an AOC.
      {8, 1, {12, 6, 0, 0, 0}},
  };
  for (const Case& c : cases) {
    p.racks_per_row = c.racks_per_row;
    const Bill b = make_bill(build_topology(p), p, reach_prices());
    CHECK(b.rows == c.rows);
    CHECK(cable_counts(b) == c.counts);
  }
}

TEST_CASE("cable reach: NIC ends of fiber take single-port transceivers") {
  // Racks of 2 nodes, a row per rack: a leaf's 4 nodes span two rows, so it sits in the
  // central row and its NIC cables are fiber: the NIC end single-port, the leaf end paired.
  TopologyParams p = fat_tree_tiers(2, 16, 8, 8, 64);
  p.nodes_per_rack = 2;
  p.racks_per_row = 1;
  const Bill b = make_bill(build_topology(p), p, reach_prices());
  // Leaves and spines all in the central row: leaf-spine cables are AOCs there.
  CHECK(cable_counts(b) == std::array<int64_t, 5>{0, 128, 128, 128 + 64, 64});
  CHECK(line_count(b, "transceiver_400Gbps") == 128);            // one per NIC
  CHECK(line_count(b, "twin_port_transceiver_800Gbps") == 4 * 16);  // 32 NIC ends per leaf
}
