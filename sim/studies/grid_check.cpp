#include "sim/studies/grid_check.hpp"

#include "sim/scenario/input_error.hpp"

namespace cs::studies {

using namespace cs::scenario;

namespace {
// `inner` sets something inside what `outer` sets: "a.b" inside "a" (not "ab" inside "a").
bool nested_in(const std::string& inner, const std::string& outer) {
  return inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 && inner[outer.size()] == '.';
}
}  // namespace

std::size_t check_grid(const std::vector<GridAxisShape>& axes, const std::string& key) {
  std::size_t total = 1;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const GridAxisShape& axis = axes[a];
    for (std::size_t b = 0; b < a; ++b) {
      if (axes[b].path == axis.path)
        throw InputError(key, axis.path + " is given twice; give all its values in one axis");
      const bool inner = nested_in(axis.path, axes[b].path);
      if (inner || nested_in(axes[b].path, axis.path))
        throw InputError(key, (inner ? axis.path : axes[b].path) + " lies inside " + (inner ? axes[b].path : axis.path) +
                                  ": both set the same value, and a row would be labelled with one that was not run",
                         "sweep one of them, or give whole objects in the outer path's values");
    }
    if (axis.values == 0) throw InputError(key, axis.path + " has no values");
    if (axis.values > kMaxGridPoints / total)
      throw InputError(key, "the grid has more than " + std::to_string(kMaxGridPoints) + " points (the limit)");
    total *= axis.values;
  }
  return total;
}

}  // namespace cs::studies
