// Grid points and summary rows: the one definition behind `clustersim sweep` and Python's sweep.
#include "sim/studies/sweep.hpp"

#include <algorithm>
#include <unordered_map>

#include "sim/studies/grid_check.hpp"

namespace cs::studies {


using nlohmann::json;

std::vector<SweepPoint> grid_points(const std::vector<GridAxis>& axes, const std::string& at) {
  std::vector<GridAxisShape> shape;
  for (const auto& axis : axes) shape.push_back({axis.path, axis.values.size()});
  const std::size_t total = check_grid(shape, at);
  std::vector<SweepPoint> points(total);
  for (std::size_t p = 0; p < total; ++p) {
    std::size_t rest = p;
    points[p].resize(axes.size());
    for (std::size_t a = axes.size(); a-- > 0;) {
      const auto& values = axes[a].values;
      points[p][a] = {axes[a].path, values[rest % values.size()]};
      rest /= values.size();
    }
  }
  return points;
}

void SweepRow::put(const std::string& key, json value) {
  const auto [it, added] = index_.emplace(key, cells_.size());
  if (added) cells_.emplace_back(key, std::move(value));
  else cells_[it->second].second = std::move(value);
}

namespace {

void flatten(const std::string& prefix, const json& value, SweepRow& row) {
  if (value.is_object()) {
    for (const auto& [k, v] : value.items()) flatten(prefix.empty() ? k : prefix + "." + k, v, row);
  } else if (!value.is_array()) {
    row.put(prefix, value);
  }
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

}  // namespace

std::vector<SweepRow> summary_rows(const SweepPoint& point, const json& summary) {
  SweepRow base;
  for (const auto& [path, value] : point) base.put(path, value);
  flatten("", summary, base);
  const json* results = nullptr;
  if (summary.contains("collective") && summary["collective"].is_object() &&
      summary["collective"].contains("results") && summary["collective"]["results"].is_array() &&
      !summary["collective"]["results"].empty())
    results = &summary["collective"]["results"];
  if (!results) return {base};
  std::vector<SweepRow> rows;
  for (const auto& r : *results) {
    SweepRow row = base;
    if (r.is_object())
      for (const auto& [k, v] : r.items()) {
        if (v.is_object()) flatten("collective." + k, v, row);
        else row.put("collective." + k, v);
      }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string rows_csv(const std::vector<SweepRow>& rows) {
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

}  // namespace cs::studies
