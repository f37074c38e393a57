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
  nlohmann::json workload;  // a scenario's "workload" object: kind collective, traffic or training
};

// Runs every workload on every fabric (fabric j's document with its "workload" replaced by
// workload i, then `sets` applied as --set does), at most `jobs` at once (0: TBB's default);
// the result is the same for any `jobs`. Every pair is parsed and checked before any runs:
// an InputError names "fabric <label>: <path>". Returns
//   {"fabrics": [{"label", "topology", "routing", "model", <the summary's fabric block>,
//                 <the nodes' bill: nodes, node_price_usd, nodes_cost_usd, node_power_w,
//                  nodes_power_w>, "cluster_cost_usd", "cluster_cost_per_gpu_usd",
//                 "cluster_power_w" (nodes + network), "network_usd_per_all_to_all_bound_GBps",
//                 where an all_to_all ran "all_to_all_delivered_GBps" (its best algbw) and
//                 "network_usd_per_all_to_all_GBps", "warnings": [topology/narrow_links.hpp],
//                 fat-trees "oversubscription_by_tier": [achieved down:up, leaf first]}],
//    "results": [{"fabric", "workload", "case", ...numbers}], "warnings": [...]}
// in workload, case, fabric order. A collective gives one case per result row ("all_reduce
// 1GiB ring": algorithm and protocol as run, requested_algorithm where that differs (auto),
// time_s, algbw_GBps, busbw_GBps, network_usd_per_busbw_GBps: the network's cost per GPU over
// the busbw in GB/s; all_to_all rows also network_usd_per_all_to_all_GBps, over the algbw);
// traffic one case (makespan_s, mean_fct_s, p99_fct_s); training one, "training step"
// (step_time_s, tokens_per_s, exposed_comm_s, compute_s, mfu, and
// tokens_per_s_per_cluster_musd: tokens/s per $M of nodes + network). Under replications, means,
// each with its 95% half-width as "<key>_ci95". The top-level "warnings": per case and time,
// where the fastest fabric's 95% interval overlaps the runner-up's (not significant;
// significance.hpp).
nlohmann::json compare_fabrics(const std::vector<ComparedFabric>& fabrics,
                               const std::vector<ComparedWorkload>& workloads,
                               const std::vector<std::string>& sets, int jobs);

// The comparison as a text table: one column per fabric; the fabric's figures (network and
// whole cluster), then each case's chosen algorithm (auto), time, busbw and network cost per
// GPU per GB/s (traffic: makespan and FCTs; training: step time, tokens/s, exposed
// communication, MFU); then what the figures assume and the fabrics' warnings.
std::string comparison_text(const nlohmann::json& comparison);

}  // namespace cs::studies
