// `clustersim sweep`: grid points -> validated scenarios -> parallel runs -> CSV.
#include "cli/sweep.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/load.hpp"
#include "sim/studies/grid_check.hpp"
#include "sim/studies/paired.hpp"
#include "sim/studies/parallel.hpp"
#include "sim/world/run.hpp"

namespace cs::cli {

using nlohmann::json;
using studies::for_each_index;
using scenario::InputError;

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

std::string run_sweep(const json& base, const std::vector<GridAxis>& axes, int jobs,
                      const std::function<bool()>& interrupted) {
  const std::vector<studies::SweepPoint> points = studies::grid_points(axes, "--grid");
  const std::size_t total = points.size();

  // Validate every point (schema, typed parse, topology builds) before running any.
  std::vector<std::optional<scenario::Config>> configs(total);
  for_each_index(total, jobs, [&](std::size_t p) {
    json doc = base;
    for (const auto& [path, value] : points[p]) scenario::set_path(doc, path, value);
    auto config = scenario::parse_config(doc);
    world::check_buildable(config);
    configs[p] = std::move(config);
  });

  // Run; each point keeps its scenario's own seed, and results are stored by index.
  std::vector<json> summaries(total);
  world::RunOptions options;
  options.interrupted = interrupted;
  // Points running at once are the sweep's parallel work: a jobs point then draws its job
  // stream in its own thread rather than start another (world::RunOptions::draw_ahead).
  options.draw_ahead = jobs == 1 || total == 1;
  for_each_index(total, jobs, [&](std::size_t p) {
    summaries[p] = world::run_scenario(*configs[p], options).summary;
    configs[p].reset();
  });

  std::vector<studies::SweepRow> rows;
  for (std::size_t p = 0; p < total; ++p)
    for (auto& row : studies::summary_rows(points[p], summaries[p])) rows.push_back(std::move(row));
  return studies::rows_csv(rows);
}

std::string run_paired_sweep(const json& base, const std::vector<GridAxis>& axes, const std::vector<std::string>& keys,
                             int replications, int jobs, std::vector<std::string>& warnings,
                             const std::function<bool()>& interrupted) {
  const std::vector<studies::SweepPoint> points = studies::grid_points(axes, "--grid");
  std::vector<studies::PairedVariant> variants;
  for (const auto& point : points) {
    std::string label;
    for (const auto& [path, value] : point)
      label.append(label.empty() ? "" : " ").append(path).append("=").append(value.is_string() ? value.get<std::string>()
                                                                                               : value.dump());
    variants.push_back({std::move(label), point});
  }
  const json result = studies::paired_comparison(base, variants, keys, replications, jobs, "--paired", interrupted);
  std::vector<studies::SweepRow> rows;
  for (std::size_t v = 0; v < points.size(); ++v)
    for (const std::string& key : keys) {
      studies::SweepRow row;
      for (const auto& [path, value] : points[v]) row.put(path, value);
      const json& n = result["variants"][v]["numbers"][key];
      row.put("key", key);
      row.put("mean", n["mean"]);
      row.put("ci95", n["ci95"]);
      for (const json& d : result["differences"])
        if (v > 0 && d["key"] == key && d["variant"] == variants[v].label) {
          row.put("difference_mean", d["mean"]);
          row.put("difference_ci95", d["ci95"]);
          for (const char* k : {"conclusive", "lower", "higher", "equal"}) row.put(k, d[k]);
        }
      rows.push_back(std::move(row));
    }
  for (const json& w : result["warnings"]) warnings.push_back(w.get<std::string>());
  return studies::rows_csv(rows);
}

}  // namespace cs::cli
