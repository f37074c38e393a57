// Keys with no effect where they stand (key_effects.hpp's rule) and sweep grids' checks
// (grid_check.hpp), one test per rule.
#include <catch2/catch.hpp>

#include "parse_helpers.hpp"
#include "sim/scenario/grid_check.hpp"
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

TEST_CASE("a grid's paths may not repeat or nest, and its size is capped", "[grid]") {
  CHECK(check_grid({{"topology.nodes", 3}, {"seed", 4}}, "grid") == 12);
  auto path_of = [](const std::vector<GridAxisShape>& axes) {
    try {
      check_grid(axes, "--grid");
    } catch (const InputError& e) {
      return e.path() + ": " + e.expected();
    }
    return std::string("accepted");
  };
  CHECK(path_of({{"topology", 2}, {"topology.nodes", 2}}).find("--grid: topology.nodes lies inside topology") == 0);
  CHECK(path_of({{"topology.nodes", 2}, {"topology", 2}}).find("topology.nodes lies inside topology") != std::string::npos);
  CHECK(path_of({{"topology.nodes", 2}, {"topology.nodes_per_rack", 2}}) == "accepted");  // a prefix of the text only
  CHECK(path_of({{"seed", 2}, {"seed", 2}}).find("given twice") != std::string::npos);
  CHECK(path_of({{"seed", 0}}).find("no values") != std::string::npos);
  CHECK(path_of({{"seed", 1000}, {"topology.nodes", 1000}}) == "accepted");
  CHECK(path_of({{"seed", 1000}, {"topology.nodes", 1001}}).find("1000000 points") != std::string::npos);
}
