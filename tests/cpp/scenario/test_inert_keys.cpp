// Keys with no effect where they stand (key_effects.hpp's rule), one test per rule.
#include <catch2/catch.hpp>

#include "parse_helpers.hpp"
#include "sim/scenario/input_error.hpp"

using namespace cs::scenario;
using cs::scenario::test::config_error;
using cs::scenario::test::parse;

TEST_CASE("a parameter of a part the configuration does not have is a warning naming it", "[inert]") {
  const Config c = parse(R"({"topology": {"kind": "fat_tree", "nodes": 4, "dims": [2, 2], "groups": 3}})");
  REQUIRE(c.warnings.size() == 2);
  CHECK(c.warnings[0].find("topology.groups") != std::string::npos);  // in the table's order
  CHECK(c.warnings[1].find("warning: topology.dims: has no effect on a fat_tree") == 0);
  CHECK(parse(R"({"topology": {"kind": "torus", "dims": [2, 2]}})").warnings.empty());
  const Config pcie = parse(R"({"hardware": {"node": {"fabric": "pcie", "gpu_bandwidth": "100GB/s", "gpu_latency": "1us"}}})");
  REQUIRE(pcie.warnings.size() == 2);
  CHECK(pcie.warnings[0].find("warning: hardware.node.gpu_bandwidth: has no effect on a PCIe node") == 0);
  CHECK(pcie.warnings[1].find("warning: hardware.node.gpu_latency") == 0);
}

TEST_CASE("a request the run would not honour is an error at the key", "[inert]") {
  CHECK(config_error(R"({"topology": {"nodes": 2},
      "workload": {"kind": "traffic", "pattern": "permutation", "bytes": "1MB",
                   "background": [{"kind": "collective", "op": "all_reduce", "algorithm": "ring", "sizes": ["1MB"]}]}})")
            .path() == "workload.background");
}
