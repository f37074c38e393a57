#pragma once
// The checks of a sweep grid, shared by `clustersim sweep` and Python's cs.sweep so both refuse
// the same grids with the same messages.
#include <cstddef>
#include <string>
#include <vector>

namespace cs::studies {

// A grid may have at most this many points: each is validated and its summary kept.
inline constexpr std::size_t kMaxGridPoints = 1'000'000;

struct GridAxisShape {
  std::string path;         // dot-separated, as --set takes it
  std::size_t values = 0;   // how many values the axis takes
};

// Throws InputError at `key` ("--grid" for the CLI, "grid" for Python) when an axis has no
// values, a path is given twice, one path is a prefix of another ("topology" and
// "topology.nodes": the row would be labelled with a value that was not run), or the product
// of the axes' sizes exceeds kMaxGridPoints. Returns the number of points.
std::size_t check_grid(const std::vector<GridAxisShape>& axes, const std::string& key);

}  // namespace cs::studies
