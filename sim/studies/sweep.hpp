#pragma once
// Sweeps: the points of a grid and the rows of a summary, defined once for the CLI
// (`clustersim sweep`) and Python (`clustersim.sweep`), so both give the same rows by
// construction.
#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace cs::studies {

// One axis of a grid: a dot-separated path (as --set takes it) and its values.
struct GridAxis {
  std::string path;
  std::vector<nlohmann::json> values;
};

// A point: (path, value) per axis, in the axes' order.
using SweepPoint = std::vector<std::pair<std::string, nlohmann::json>>;

// The cartesian product of `axes` in itertools.product order (the first axis varies slowest),
// after check_grid (grid_check.hpp: at most kMaxGridPoints points, no path twice or inside
// another, no empty axis; InputError at `at`, "--grid" or "grid"), before any is built.
std::vector<SweepPoint> grid_points(const std::vector<GridAxis>& axes, const std::string& at);

// A row: columns in insertion order; putting an existing column overwrites it in place.
class SweepRow {
 public:
  void put(const std::string& key, nlohmann::json value);
  const std::vector<std::pair<std::string, nlohmann::json>>& cells() const { return cells_; }

 private:
  std::vector<std::pair<std::string, nlohmann::json>> cells_;
  std::unordered_map<std::string, std::size_t> index_;
};

// The rows of one point's summary: the point's columns, then the summary flattened (objects
// become "a.b" columns, lists are left out); a collective gives one row per result (per size
// and algorithm) with its numbers as "collective.<key>" (replicated numbers as
// "collective.<key>.mean" and ".ci95"), anything else one row.
std::vector<SweepRow> summary_rows(const SweepPoint& point, const nlohmann::json& summary);

// Rows as CSV: the union of the columns in order of first appearance (as pandas builds a
// DataFrame from the same rows); null cells empty, strings quoted where needed, numbers in
// their shortest round-trip form.
std::string rows_csv(const std::vector<SweepRow>& rows);

}  // namespace cs::studies
