#pragma once
// The architect's comparison (`clustersim compare`, Python `clustersim.compare`): the same
// workloads on several fabrics, side by side. One implementation for both front ends.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cs::studies {

struct ComparedFabric {
  std::string label;    // the column's name (a file's stem)
  nlohmann::json doc;   // a scenario document: its hardware, topology, network and run
};

struct ComparedWorkload {
  std::string label;    // where it came from (a file's stem)
  nlohmann::json workload;  // a scenario's "workload" object: kind collective or traffic
};

// Runs every workload on every fabric (fabric j's document with its "workload" replaced by
// workload i, then `sets` applied as --set does), at most `jobs` at once (0: TBB's default);
// the result is the same for any `jobs`. Every pair is parsed and checked before any runs:
// an InputError names "fabric <label>: <path>". Returns
//   {"fabrics": [{"label", "topology", "routing", "model", <the summary's fabric block>}],
//    "results": [{"fabric", "workload", "case", ...numbers}], "warnings": [...]}
// in workload, case, fabric order. A collective gives one case per result row ("all_reduce
// 1GiB ring": time_s, algbw_GBps, busbw_GBps, network_usd_per_busbw_GBps; under
// replications, means, each with its 95% half-width as "<key>_ci95"); traffic one case
// (makespan_s, mean_fct_s, p99_fct_s, the same way). "warnings": per case and time, where the
// fastest fabric's 95% interval overlaps the runner-up's (not significant; significance.hpp).
nlohmann::json compare_fabrics(const std::vector<ComparedFabric>& fabrics,
                               const std::vector<ComparedWorkload>& workloads,
                               const std::vector<std::string>& sets, int jobs);

// The comparison as a text table: one column per fabric; the fabric's figures, then each
// case's time, busbw and network cost per GB/s of busbw (traffic: makespan and FCTs).
std::string comparison_text(const nlohmann::json& comparison);

}  // namespace cs::studies
