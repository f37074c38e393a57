// Growing a fabric (topology/growth.hpp) against hand counts.
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "topology/bill.hpp"
#include "topology/growth.hpp"

using namespace cs::topo;
using cs::topo::test::fat_tree;

namespace {

// Prices that make every count show in the money: $1 per port, $1000 per node.
PriceTable growth_prices() {
  PriceTable p;
  p.switch_port.by_gbps[400] = {1, 0, "test"};
  p.nic.by_gbps[400] = {10, 0, "test"};
  p.transceiver.by_gbps[400] = {100, 0, "test"};
  p.copper_cable = {0.5, 0, "test"};
  p.optical_cable = {0.25, 0, "test"};
  p.gpu_node = {1000, 0, "test"};
  return p;
}

Growth grow_params(const TopologyParams& a, const TopologyParams& b) {
  const Topology from = build_topology(a), to = build_topology(b);
  return grow(from, make_bill(from, a, growth_prices()), to, make_bill(to, b, growth_prices()));
}

const GrowthLine& line(const Growth& g, const std::string& item) {
  for (const GrowthLine& l : g.items)
    if (l.item == item) return l;
  FAIL("no bill item " << item);
  return g.items.front();
}

}  // namespace

TEST_CASE("growing a fabric to itself reuses everything", "[growth]") {
  const TopologyParams p = fat_tree(32, 1, 1, 16);
  const Growth g = grow_params(p, p);
  CHECK(g.bought_usd == 0);
  CHECK(g.cables_unplugged == 0);
  CHECK(g.cables_laid == 0);
  CHECK(g.switches_added == 0);
  CHECK(g.switches_surplus == 0);
  for (const GrowthLine& l : g.items) CHECK(l.reused == l.need);
}

TEST_CASE("growing a 2-tier fat-tree from 32 to 64 nodes", "[growth]") {
  // Radix 16, one NIC per node: 8 NICs and 8 up-links per leaf. 32 nodes: 4 leaves, 2 spines,
  // bundles of 4 cables; 64 nodes: 8 leaves, 4 spines, bundles of 2. Nodes keep their leaf
  // (8 per leaf both times): the 32 NIC cables stay; each old leaf keeps 2 of its 4 cables to
  // spine0 and spine1 (16 stay, 16 unplugged); laid: 32 NIC + 64 leaf-spine - 16 = 80.
  const TopologyParams small = fat_tree(32, 1, 1, 16), large = fat_tree(64, 1, 1, 16);
  const Topology a = build_topology(small), b = build_topology(large);
  REQUIRE(a.fat_tree()->spines == 2);
  REQUIRE(a.fat_tree()->tier[0].parallel == 4);
  REQUIRE(b.fat_tree()->spines == 4);
  REQUIRE(b.fat_tree()->tier[0].parallel == 2);
  const Growth g = grow_params(small, large);
  CHECK(g.switches_kept == 6);
  CHECK(g.switches_added == 6);
  CHECK(g.switches_surplus == 0);
  CHECK(g.cables_kept == 32 + 16);
  CHECK(g.cables_unplugged == 16);
  CHECK(g.cables_laid == 80);
  CHECK(line(g, "gpu_node").bought == 32);
  CHECK(line(g, "switch_port_400Gbps").have == 6 * 16);
  CHECK(line(g, "switch_port_400Gbps").bought == 6 * 16);
  CHECK(line(g, "nic_400Gbps").bought == 32);
  // $1000 x 32 nodes + $10 x 32 NICs + $1 x 96 ports + the cables' and optics' difference.
  double cables = 0;
  for (const char* item : {"copper_cable", "optical_cable", "transceiver_400Gbps"})
    for (const GrowthLine& l : g.items)
      if (l.item == item) cables += l.bought_usd;
  CHECK(g.bought_usd == Approx(32000 + 320 + 96 + cables));
  CHECK(g.bought_network_usd == Approx(g.bought_usd - 32000));
}
