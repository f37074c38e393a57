// Every rejected parameter throws BuildError naming its key relative to the topology section.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "helpers.hpp"

using namespace cs::topo;
using cs::topo::test::failing_param;
using cs::topo::test::fat_tree;

namespace {

std::string failing_message(const TopologyParams& p) {
  try {
    build_topology(p);
  } catch (const BuildError& e) {
    return e.what();
  }
  return "";
}

// A numeric parameter: its key and how to set it.
struct NumericParam {
  const char* param;
  void (*set)(TopologyParams&, double);
};

const NumericParam kBandwidthParams[] = {
    {"link_bandwidth", [](TopologyParams& p, double v) { p.link_bandwidth_Bps = v; }},
    {"node.gpu_bandwidth", [](TopologyParams& p, double v) { p.node.gpu_bandwidth_Bps = v; }},
    {"node.nic_bandwidth", [](TopologyParams& p, double v) { p.node.nic_bandwidth_Bps = v; }},
    {"node.pcie_bandwidth", [](TopologyParams& p, double v) { p.node.pcie_bandwidth_Bps = v; }},
};

const NumericParam kLatencyParams[] = {
    {"link_latency", [](TopologyParams& p, double v) { p.link_latency_s = v; }},
    {"node.gpu_latency", [](TopologyParams& p, double v) { p.node.gpu_latency_s = v; }},
    {"node.pcie_latency", [](TopologyParams& p, double v) { p.node.pcie_latency_s = v; }},
};

// failing_param() of a small valid fat-tree with one numeric parameter set to `value`.
std::string failing_param_with(const NumericParam& np, double value) {
  TopologyParams p = fat_tree(2, 2, 1, 8);
  np.set(p, value);
  return failing_param(p);
}

TopologyParams custom_base() {
  TopologyParams p;
  p.kind = TopologyKind::custom;
  p.nodes = 2;
  p.node.gpus = 2;
  p.node.nics = 2;
  p.switches = {"sw0", "sw1"};
  p.links = {{"n0.0", "sw0", 50e9, 1e-6}, {"n1.0", "sw1", 50e9, 1e-6}, {"sw0", "sw1", 50e9, 1e-6}};
  return p;
}

}  // namespace

TEST_CASE("BuildError is an invalid_argument") {
  TopologyParams p;
  p.nodes = 0;
  CHECK_THROWS_AS(build_topology(p), std::invalid_argument);
}

TEST_CASE("node counts and sizes") {
  TopologyParams p = fat_tree(4, 8, 8, 8);
  p.nodes = 0;
  CHECK(failing_param(p) == "nodes");
  p.nodes = -3;
  CHECK(failing_param(p) == "nodes");

  p = fat_tree(4, 0, 8, 8);
  CHECK(failing_param(p) == "node.gpus");
  p = fat_tree(4, 8, 0, 8);
  CHECK(failing_param(p) == "node.nics");

  // More than 2^24 GPUs: refused before any allocation (nodes * gpus would overflow int).
  p = fat_tree(std::numeric_limits<int>::max(), 8, 1, 64);
  CHECK(failing_param(p) == "nodes");
  p = fat_tree((1 << 21) + 1, 8, 1, 64);
  CHECK(failing_param(p) == "nodes");
  p = fat_tree(1, std::numeric_limits<int>::max(), 1, 64);
  CHECK(failing_param(p) == "node.gpus");
  p = fat_tree(1, 1, (1 << 24) + 1, 64);
  CHECK(failing_param(p) == "node.nics");
  p = fat_tree(1 << 20, 1, 32, 64);  // 2^25 NICs
  CHECK(failing_param(p) == "nodes");

  TopologyParams single;
  single.kind = TopologyKind::single_node;
  single.nodes = 2;
  CHECK(failing_param(single) == "nodes");
}

TEST_CASE("bandwidths must be positive and finite, latencies non-negative and finite") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (double bad : {0.0, -1.0, nan, inf}) {
    for (const NumericParam& np : kBandwidthParams) CHECK(failing_param_with(np, bad) == np.param);
  }
  for (double bad : {-1e-9, nan, inf}) {
    for (const NumericParam& np : kLatencyParams) CHECK(failing_param_with(np, bad) == np.param);
  }
  TopologyParams zero_latency = fat_tree(2, 2, 1, 8);
  zero_latency.link_latency_s = 0.0;
  CHECK_NOTHROW(build_topology(zero_latency));
}

TEST_CASE("fat_tree shape") {
  TopologyParams p = fat_tree(4, 8, 8, 8);
  p.tiers = 7;
  CHECK(failing_param(p) == "tiers");
  CHECK_THAT(failing_message(p), Catch::Contains("2 to 6 tiers"));
  p.tiers = 1;
  CHECK(failing_param(p) == "tiers");

  p = fat_tree(4, 8, 8, 1);
  CHECK(failing_param(p) == "switch_radix");
  p = fat_tree(4, 8, 8, (1 << 16) + 1);
  CHECK(failing_param(p) == "switch_radix");

  // 33 NICs need 9 leaves of 4 down-ports; spines of radix 8 reach only 8.
  p = fat_tree(33, 1, 1, 8);
  CHECK(failing_param(p) == "switch_radix");
  CHECK_THAT(failing_message(p),
             Catch::Contains("switch_radix too small for a 2-tier fat-tree of 33 NICs") &&
                 Catch::Contains("at most 32 NICs"));
  // Rail-optimized: 8 rails of ceil(5 / 4) = 2 leaves = 16 leaves > 8.
  p = fat_tree(5, 8, 8, 8, 1.0, true);
  CHECK(failing_param(p) == "switch_radix");

  for (double bad : {0.0, -1.0, std::nan(""), 0.01, 1e12}) {
    // 0.01: floor(8 * 0.01 / 1.01) = 0 down-ports; 1e12: 8 down, 0 up.
    p = fat_tree(4, 8, 8, 8, bad);
    CHECK(failing_param(p) == "oversubscription");
  }
}

TEST_CASE("custom topology errors name the switch or link") {
  CHECK(failing_param(custom_base()).empty());

  TopologyParams p = custom_base();
  p.switches = {"sw0", "sw1", "sw0"};
  CHECK(failing_param(p) == "switches.2");
  CHECK_THAT(failing_message(p), Catch::Contains("duplicate"));

  p = custom_base();
  p.switches = {"sw0", "n1.gpu1", "sw1"};
  CHECK(failing_param(p) == "switches.1");
  p.switches = {"n0.1", "sw0", "sw1"};
  CHECK(failing_param(p) == "switches.0");
  p.switches = {"sw0", "sw1", ""};
  CHECK(failing_param(p) == "switches.2");

  p = custom_base();
  p.links[1].a = "n7.0";
  CHECK(failing_param(p) == "links.1.a");
  CHECK_THAT(failing_message(p), Catch::Contains("unknown vertex 'n7.0'"));
  p = custom_base();
  p.links[2].b = "sw9";
  CHECK(failing_param(p) == "links.2.b");
  p = custom_base();
  p.links[0].a = "n0";  // two NICs per node: the NIC is n0.0, not n0
  CHECK(failing_param(p) == "links.0.a");
  p = custom_base();
  p.links[0].a = "n0.gpu0";  // GPUs are not fabric endpoints
  CHECK(failing_param(p) == "links.0.a");
  p = custom_base();
  p.links[0].b = "n0.nvswitch";
  CHECK(failing_param(p) == "links.0.b");

  p = custom_base();
  p.links.push_back({"sw1", "sw1", 50e9, 0});
  CHECK(failing_param(p) == "links.3.b");

  p = custom_base();
  p.links[2].bandwidth_Bps = 0;
  CHECK(failing_param(p) == "links.2.bandwidth");
  p = custom_base();
  p.links[1].latency_s = -1;
  CHECK(failing_param(p) == "links.1.latency");
}
