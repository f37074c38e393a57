#pragma once
// `clustersim sweep`: run a scenario at every point of a grid and tabulate the summaries as
// CSV, with the rows and columns of the Python `clustersim.sweep` (python/clustersim/sweep.py).
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/studies/sweep.hpp"

namespace cs::cli {

using studies::GridAxis;

// Split on the commas outside brackets, braces and double-quoted strings: "1,[2,3],\"a,b\""
// gives "1", "[2,3]", "\"a,b\"".
std::vector<std::string> split_top_level(std::string_view text);

// Parse "PATH=V1,V2,...". Throws InputError for a missing '=', an empty path, no values or
// an empty value; the path itself is checked when the points are built (run_sweep).
GridAxis parse_grid(std::string_view arg);

// Run `base` at every point of the cartesian product of `axes` (in the order given, the first
// axis varying slowest), on `jobs` threads. Every point's scenario is validated before any
// simulation starts (InputError naming the JSON path otherwise). Returns the CSV: the grid
// columns, then the summary flattened ("topology.nodes", "traffic.makespan_s", ...); one row
// per point, or per point x size for a collective ("collective.bytes", "collective.time_s",
// ...). Rows are in grid order and identical whatever `jobs` is (apart from wall_time_s).
// `interrupted` (may be empty) is polled by every point's run (world::RunOptions::interrupted).
std::string run_sweep(const nlohmann::json& base, const std::vector<GridAxis>& axes, int jobs,
                      const std::function<bool()>& interrupted = {});

// `sweep --paired KEY...`: every grid point a variant of `base`, run at `replications` common
// seeds (studies::paired_comparison, the first point the baseline). Returns the CSV, one row
// per point and key: the grid columns, "key", the point's "mean" and "ci95", and for every
// point but the first its paired difference from the first ("difference_mean",
// "difference_ci95", "conclusive", "lower", "higher", "equal"); `warnings` gets the
// comparison's (differences not significant while the seeds disagree).
std::string run_paired_sweep(const nlohmann::json& base, const std::vector<GridAxis>& axes,
                             const std::vector<std::string>& keys, int replications, int jobs,
                             std::vector<std::string>& warnings, const std::function<bool()>& interrupted = {});

}  // namespace cs::cli
