// `clustersim sweep`: grid points -> validated scenarios -> parallel runs -> CSV.
#include "cli/sweep.hpp"

#include <algorithm>
#include <cstddef>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/scenario/grid_check.hpp"
#include "sim/scenario/load.hpp"
#include "sim/scenario/parallel.hpp"
#include "sim/scenario/run.hpp"

namespace cs::cli {

using nlohmann::json;
using scenario::for_each_index;
using scenario::InputError;

namespace {

// A row: columns in insertion order; setting an existing column overwrites it in place (as
// assigning to a Python dict does).
class Row {
 public:
  void put(const std::string& key, json value) {
    const auto [it, added] = index_.emplace(key, cells_.size());
    if (added) cells_.emplace_back(key, std::move(value));
    else cells_[it->second].second = std::move(value);
  }
  const std::vector<std::pair<std::string, json>>& cells() const { return cells_; }

 private:
  std::vector<std::pair<std::string, json>> cells_;
  std::unordered_map<std::string, std::size_t> index_;
};

// sweep.py's _flatten: objects become "a.b" columns; lists are left out; scalars are cells.
void flatten(const std::string& prefix, const json& value, Row& row) {
  if (value.is_object()) {
    for (const auto& [k, v] : value.items()) flatten(prefix.empty() ? k : prefix + "." + k, v, row);
  } else if (!value.is_array()) {
    row.put(prefix, value);
  }
}

// sweep.py's _rows: one row per collective result (per size), else one row.
std::vector<Row> rows_for(const std::vector<std::pair<std::string, json>>& point, const json& summary) {
  Row base;
  for (const auto& [path, value] : point) base.put(path, value);
  flatten("", summary, base);
  const json* results = nullptr;
  if (summary.contains("collective") && summary["collective"].is_object() &&
      summary["collective"].contains("results") && summary["collective"]["results"].is_array() &&
      !summary["collective"]["results"].empty())
    results = &summary["collective"]["results"];
  if (!results) return {base};
  std::vector<Row> rows;
  for (const auto& r : *results) {
    Row row = base;
    // With run.replications > 1 a result's numbers are {mean, ci95}: flattened to
    // collective.time_s.mean, collective.time_s.ci95 rather than left as one JSON cell.
    if (r.is_object())
      for (const auto& [k, v] : r.items()) {
        if (v.is_object()) flatten("collective." + k, v, row);
        else row.put("collective." + k, v);
      }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_cell(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return csv_field(v.get<std::string>());
  return csv_field(v.dump());  // numbers (shortest round-trip form), true/false, JSON lists/objects
}

std::string to_csv(const std::vector<Row>& rows) {
  // Columns: the union over rows, in order of first appearance (as pandas builds a DataFrame).
  std::vector<std::string> columns;
  std::unordered_map<std::string, std::size_t> column_of;
  for (const auto& row : rows)
    for (const auto& [key, value] : row.cells())
      if (column_of.emplace(key, columns.size()).second) columns.push_back(key);
  std::string out;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (c) out += ",";
    out += csv_field(columns[c]);
  }
  out += "\n";
  std::vector<const json*> line(columns.size());
  for (const auto& row : rows) {
    std::fill(line.begin(), line.end(), nullptr);
    for (const auto& [key, value] : row.cells()) line[column_of.at(key)] = &value;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (c) out += ",";
      if (line[c]) out += csv_cell(*line[c]);
    }
    out += "\n";
  }
  return out;
}

}  // namespace

std::vector<std::string> split_top_level(std::string_view text) {
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      parts.push_back(std::move(current));
      current.clear();
      continue;
    }
    current += c;
  }
  parts.push_back(std::move(current));
  return parts;
}

GridAxis parse_grid(std::string_view arg) {
  const std::string given(arg);
  const std::size_t eq = arg.find('=');
  if (eq == std::string_view::npos)
    throw InputError("--grid", "'" + given + "' has no '='; expected PATH=V1,V2,..., e.g. topology.nodes=8,16,32");
  GridAxis axis;
  axis.path = std::string(arg.substr(0, eq));
  if (axis.path.empty())
    throw InputError("--grid", "'" + given + "' has an empty path; expected PATH=V1,V2,...");
  const std::string_view list = arg.substr(eq + 1);
  if (list.empty())
    throw InputError("--grid", "'" + given + "' has no values; expected PATH=V1,V2,...");
  for (const auto& text : split_top_level(list)) {
    if (text.empty())
      throw InputError("--grid", "'" + given + "' has an empty value (write \"\" for an empty string)");
    // The --set code path: JSON, or else a bare string; errors name the grid's path.
    json holder = json::object();
    try {
      scenario::apply_override(holder, "v=" + text);
    } catch (const InputError& e) {
      throw InputError(axis.path, e.expected(), e.hint());
    }
    axis.values.push_back(std::move(holder["v"]));
  }
  return axis;
}

std::string run_sweep(const json& base, const std::vector<GridAxis>& axes, int jobs) {
  std::vector<scenario::GridAxisShape> shape;
  for (const auto& axis : axes) shape.push_back({axis.path, axis.values.size()});
  const std::size_t total = scenario::check_grid(shape, "--grid");

  // Points in itertools.product order: the last axis varies fastest.
  std::vector<std::vector<std::pair<std::string, json>>> points(total);
  for (std::size_t p = 0; p < total; ++p) {
    std::size_t rest = p;
    points[p].resize(axes.size());
    for (std::size_t a = axes.size(); a-- > 0;) {
      const auto& values = axes[a].values;
      points[p][a] = {axes[a].path, values[rest % values.size()]};
      rest /= values.size();
    }
  }

  // Validate every point (schema, typed parse, topology builds) before running any.
  std::vector<std::optional<scenario::Config>> configs(total);
  for_each_index(total, jobs, [&](std::size_t p) {
    json doc = base;
    for (const auto& [path, value] : points[p]) scenario::set_path(doc, path, value);
    auto config = scenario::parse_config(doc);
    scenario::check_buildable(config);
    configs[p] = std::move(config);
  });

  // Run; each point keeps its scenario's own seed, and results are stored by index.
  std::vector<json> summaries(total);
  for_each_index(total, jobs, [&](std::size_t p) {
    summaries[p] = scenario::run_scenario(*configs[p]).summary;
    configs[p].reset();
  });

  std::vector<Row> rows;
  for (std::size_t p = 0; p < total; ++p)
    for (auto& row : rows_for(points[p], summaries[p])) rows.push_back(std::move(row));
  return to_csv(rows);
}

}  // namespace cs::cli
