// Sweep grids' checks (grid_check.hpp), shared by `clustersim sweep` and cs.sweep.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/scenario/input_error.hpp"
#include "sim/studies/grid_check.hpp"

using cs::scenario::InputError;
using cs::studies::check_grid;

TEST_CASE("a grid's paths may not repeat or nest, and its size is capped", "[grid]") {
  CHECK(check_grid({{"topology.nodes", 3}, {"seed", 4}}, "grid") == 12);
  auto path_of = [](const std::vector<cs::studies::GridAxisShape>& axes) {
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
