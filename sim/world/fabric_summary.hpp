#pragma once
// What the fabric a run used costs, for the summary (and so for sweep rows): the network's
// cost and power (NICs, switches, transceivers, cables; not the GPU nodes), per GPU, per GB/s
// of bisection, and per GB/s of bus bandwidth a collective delivered (topology/bill.hpp states
// the pricing basis). The same figures as `clustersim topo`, without its diameter search.
#include <nlohmann/json.hpp>

#include "sim/scenario/config.hpp"

namespace cs::world::detail {

// { "gpus", "switches" (fabric switches), "copper_cables", "optical_cables" ("aoc_cables" in a
//   row + "fiber_cables" between rows, topology/bill.hpp), "transceivers",
//   "network_cost_usd", "network_power_w", "network_cost_per_gpu_usd",
//   "bisection_bandwidth_Bps", "network_usd_per_bisection_GBps", "notes": [...] }
nlohmann::json fabric_summary(const scenario::Config& config);

// An owned fleet on a topology (fleet.ownership with a topology section): sets its ownership's
// fabric_usd to the topology's network bill, so the run amortizes the fabric with the nodes.
// No effect on a rented fleet or without a topology.
void bill_owned_fabric(scenario::Config& config);

// Adds "network_usd_per_busbw_GBps" (network cost per GPU over the row's busbw in GB/s) to
// every row of summary["collective"]["results"] (a replicated row: from its mean busbw).
void add_cost_per_busbw(nlohmann::json& summary, const nlohmann::json& fabric);

}  // namespace cs::world::detail
