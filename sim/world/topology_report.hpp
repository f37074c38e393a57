#pragma once
// `clustersim topo` and the Python Topology: the topology report of a scenario in JSON and
// as a text table, routes between ranks, and the graph itself. Scenario documents are taken
// after overrides; every user error is an InputError naming the JSON path.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "topology/report.hpp"

namespace cs::world {

// Parse, build, price (topology.prices over data/prices.json) and report.
topo::TopologyReport topology_report(const nlohmann::json& doc);

// The JSON form: the docs/scenarios.md keys gpus, nodes, switches, links (full-duplex cables),
// diameter_hops, bisection_bandwidth_Bps (bytes/s, one direction), cost_usd, power_w, and
// detail: kind, nics, node_switches, switches_by_tier, links_by_kind, cables (copper,
// optical, rule), racks, transceivers, switch_ports (bought), switch_ports_used,
// diameter_method, bisection_method, bisection_partitions, bill (each line with "network":
// false for the GPU nodes), pricing_basis, network_cost_usd, network_power_w,
// network_cost_per_gpu_usd, network_usd_per_bisection_GBps, notes (list of strings), and
// for fat_tree tiers, tiers_requested and oversubscription_by_tier (per tier below the top:
// tier, switches, down_ports, up_ports, parallel_links, down_Bps, up_Bps, ratio,
// worst_switch_ratio); global_arrangement (dragonfly).
nlohmann::json report_json(const topo::TopologyReport& report);
// A readable table of the same.
std::string report_text(const topo::TopologyReport& report);

// The links ("from->to" vertex names) of the route from GPU src_rank to GPU dst_rank under
// the scenario's routing (seed: the scenario's) for the flow `flow_key` (hashed routings,
// ECMP and Valiant, pick a path per flow; a traffic workload's flow i has key i). A
// load-aware routing (adaptive, UGAL) answers for an idle fabric. InputError for a rank out
// of range.
std::vector<std::string> route_links(const nlohmann::json& doc, int src_rank, int dst_rank, uint64_t flow_key = 0);

// Growing the fabric of `doc` to the one of `grown` (the same document with overrides, e.g.
// topology.nodes; topology/growth.hpp): { "from", "to": { "gpus", "nodes", "switches",
// "fabric_cables", "network_cost_usd", "cost_usd" }, "bought_usd", "bought_network_usd",
// "switches": { "kept", "added", "surplus" }, "cables": { "kept", "unplugged", "laid" },
// "items": [{ "item", "have", "need", "reused", "bought", "surplus", "unit_usd",
// "bought_usd", "network" }] }.
nlohmann::json growth_json(const nlohmann::json& doc, const nlohmann::json& grown);
// A readable table of the same.
std::string growth_text(const nlohmann::json& growth);

// The graph: { "vertices": [{ "name", "kind", "tier", "node" }], "cables": [{ "a", "b",
// "kind", "bandwidth_Bps", "latency_s" }] }, one cable per full-duplex pair of links.
nlohmann::json topology_graph(const nlohmann::json& doc);

}  // namespace cs::world
