// The topology report of a scenario, its JSON and text forms, routes and the graph.
#include "sim/world/topology_report.hpp"

#include <cstdio>
#include <stdexcept>

#include "sim/scenario/load.hpp"
#include "sim/scenario/prices.hpp"
#include "sim/world/run.hpp"
#include "topology/growth.hpp"
#include "topology/routing.hpp"

namespace cs::world {

using namespace cs::scenario;
namespace {

using json = nlohmann::json;

json counts_json(const topo::Counts& counts) {
  json out = json::object();
  for (const auto& [name, n] : counts) out[name] = n;
  return out;
}

const char* vertex_kind(topo::VertexKind k) {
  switch (k) {
    case topo::VertexKind::gpu: return "gpu";
    case topo::VertexKind::nic: return "nic";
    case topo::VertexKind::node_switch: return "node_switch";
    case topo::VertexKind::fabric_switch: return "switch";
  }
  return "unknown";
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

void row(std::string& out, const std::string& name, const std::string& value) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %-28s %s\n", name.c_str(), value.c_str());
  out += buf;
}

}  // namespace

topo::TopologyReport topology_report(const json& doc) {
  const Config config = parse_fabric_config(doc);
  const topo::Topology topology = build_topology(config);
  return topo::make_report(topology, config.topology, config.prices);
}

namespace {

// A fabric as built and billed, for growth_json.
struct Priced {
  Config config;
  topo::Topology topology;
  topo::Bill bill;
};
Priced priced(const json& doc) {
  Config config = parse_fabric_config(doc);
  topo::Topology t = build_topology(config);
  topo::Bill bill = topo::make_bill(t, config.topology, config.prices);
  return {std::move(config), std::move(t), std::move(bill)};
}

json fabric_json(const Priced& p) {
  int64_t fabric_cables = 0;
  for (topo::LinkId l = 0; l < p.topology.num_links(); l += 2)
    fabric_cables += p.topology.link(l).kind == topo::LinkKind::fabric;
  return {{"gpus", p.topology.ranks()}, {"nodes", p.topology.nodes()},
          {"switches", p.topology.num_fabric_switches()}, {"fabric_cables", fabric_cables},
          {"network_cost_usd", p.bill.network_cost_usd}, {"cost_usd", p.bill.cost_usd}};
}

}  // namespace

json growth_json(const json& doc, const json& grown) {
  const Priced from = priced(doc), to = priced(grown);
  const topo::Growth g = topo::grow(from.topology, from.bill, to.topology, to.bill);
  json items = json::array();
  for (const topo::GrowthLine& l : g.items)
    items.push_back({{"item", l.item}, {"have", l.have}, {"need", l.need}, {"reused", l.reused},
                     {"bought", l.bought}, {"surplus", l.surplus}, {"unit_usd", l.unit_usd},
                     {"bought_usd", l.bought_usd}, {"network", l.network}});
  return {{"from", fabric_json(from)},
          {"to", fabric_json(to)},
          {"bought_usd", g.bought_usd},
          {"bought_network_usd", g.bought_network_usd},
          {"switches", {{"kept", g.switches_kept}, {"added", g.switches_added}, {"surplus", g.switches_surplus}}},
          {"cables", {{"kept", g.cables_kept}, {"unplugged", g.cables_unplugged}, {"laid", g.cables_laid}}},
          {"items", std::move(items)}};
}

std::string growth_text(const json& g) {
  std::string out = "growth\n";
  const json &from = g["from"], &to = g["to"];
  const auto num = [](const json& v) { return std::to_string(v.get<int64_t>()); };
  row(out, "GPUs", num(from["gpus"]) + " -> " + num(to["gpus"]));
  row(out, "nodes", num(from["nodes"]) + " -> " + num(to["nodes"]));
  row(out, "switches", num(from["switches"]) + " -> " + num(to["switches"]) + "  (" + num(g["switches"]["kept"]) +
                           " kept, " + num(g["switches"]["added"]) + " added, " + num(g["switches"]["surplus"]) +
                           " surplus)");
  row(out, "fabric cables", num(from["fabric_cables"]) + " -> " + num(to["fabric_cables"]) + "  (" +
                                num(g["cables"]["kept"]) + " stay, " + num(g["cables"]["unplugged"]) + " unplugged, " +
                                num(g["cables"]["laid"]) + " laid)");
  row(out, "network cost (USD)", fmt("%.0f", from["network_cost_usd"].get<double>()) + " -> " +
                                     fmt("%.0f", to["network_cost_usd"].get<double>()));
  row(out, "bought (USD)", fmt("%.0f", g["bought_usd"].get<double>()) + "  (network " +
                               fmt("%.0f", g["bought_network_usd"].get<double>()) + ")");
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %-26s %10s %10s %10s %10s %10s %14s\n", "item", "have", "need", "reused", "bought",
                "surplus", "bought USD");
  out += buf;
  for (const json& l : g["items"]) {
    std::snprintf(buf, sizeof buf, "  %-26s %10lld %10lld %10lld %10lld %10lld %14.0f\n",
                  l["item"].get<std::string>().c_str(), static_cast<long long>(l["have"].get<int64_t>()),
                  static_cast<long long>(l["need"].get<int64_t>()), static_cast<long long>(l["reused"].get<int64_t>()),
                  static_cast<long long>(l["bought"].get<int64_t>()), static_cast<long long>(l["surplus"].get<int64_t>()),
                  l["bought_usd"].get<double>());
    out += buf;
  }
  out += "rule: items reused up to what the grown bill needs, the rest bought at its prices; switches kept by "
         "name; a cable stays where the grown fabric joins the same two ends (topology/growth.hpp)\n";
  return out;
}

json report_json(const topo::TopologyReport& r) {
  json j;
  j["kind"] = r.kind;
  j["gpus"] = r.gpus;
  j["nodes"] = r.nodes;
  j["nics"] = r.nics;
  j["switches"] = r.switches;
  j["node_switches"] = r.node_switches;
  j["links"] = r.links;
  j["diameter_hops"] = r.diameter_hops;
  j["bisection_bandwidth_Bps"] = r.bisection_Bps;
  j["all_to_all_bound_per_gpu_Bps"] = r.all_to_all_bound_per_gpu_Bps;
  j["all_to_all_bound_Bps"] = r.all_to_all_bound_per_gpu_Bps * static_cast<double>(r.gpus);
  j["all_to_all_bound_limit"] = r.all_to_all_bound_limit;
  j["figures_assume"] = {{"bisection", topo::kBisectionAssumes}, {"all_to_all_bound", topo::kUniformTrafficAssumes}};
  j["cost_usd"] = r.cost_usd;
  j["power_w"] = r.power_w;
  j["network_cost_usd"] = r.network_cost_usd;
  j["network_power_w"] = r.network_power_w;
  j["network_cost_per_gpu_usd"] = r.network_cost_per_gpu_usd;
  j["network_usd_per_bisection_GBps"] = r.network_usd_per_bisection_GBps;
  j["pricing_basis"] = r.pricing_basis;
  j["switches_by_tier"] = counts_json(r.switches_by_tier);
  if (r.kind == "fat_tree") {
    j["tiers"] = r.tiers;
    j["tiers_requested"] = r.tiers_requested;
    json tiers = json::array();
    for (const topo::TierRatio& t : r.oversubscription_by_tier)
      tiers.push_back({{"tier", t.tier}, {"switches", t.switches}, {"down_ports", t.down_ports},
                       {"up_ports", t.up_ports}, {"parallel_links", t.parallel_links},
                       {"down_Bps", t.down_Bps}, {"up_Bps", t.up_Bps}, {"ratio", t.ratio},
                       {"worst_switch_ratio", t.worst_switch_ratio}});
    j["oversubscription_by_tier"] = std::move(tiers);
  }
  j["links_by_kind"] = counts_json(r.links_by_kind);
  j["cables"] = {{"copper", r.copper_cables}, {"optical", r.optical_cables}, {"aoc", r.aoc_cables},
                 {"fiber", r.fiber_cables}, {"rule", r.cable_rule}};
  j["racks"] = r.racks;
  j["rows"] = r.rows;
  j["transceivers"] = r.transceivers;
  j["twin_port_transceivers"] = r.twin_port_transceivers;
  j["switch_ports"] = r.switch_ports;
  j["switch_ports_used"] = r.switch_ports_used;
  j["diameter_method"] = r.diameter_method;
  if (r.diameter_closed_form) j["diameter_closed_form_hops"] = *r.diameter_closed_form;
  j["bisection_method"] = r.bisection_method;
  if (r.bisection_partitions > 0) j["bisection_partitions"] = r.bisection_partitions;
  if (!r.global_arrangement.empty()) j["global_arrangement"] = r.global_arrangement;
  if (r.failed_cables > 0) j["failed"] = {{"cables", r.failed_cables}, {"switches", r.failed_switches}};
  json bill = json::array();
  for (const topo::CostLine& c : r.bill)
    bill.push_back({{"item", c.item}, {"count", c.count}, {"unit_usd", c.unit_usd},
                    {"unit_watts", c.unit_watts}, {"usd", c.usd}, {"watts", c.watts},
                    {"network", c.network}, {"source", c.source}});
  j["bill"] = std::move(bill);
  j["notes"] = r.notes;
  j["warnings"] = r.warnings;
  return j;
}

std::string report_text(const topo::TopologyReport& r) {
  std::string out = "topology " + r.kind + "\n";
  row(out, "GPUs", std::to_string(r.gpus));
  row(out, "nodes", std::to_string(r.nodes));
  row(out, "NICs", std::to_string(r.nics));
  row(out, "node switches", std::to_string(r.node_switches));
  row(out, "fabric switches", std::to_string(r.switches));
  for (const auto& [name, n] : r.switches_by_tier) row(out, "  " + name, std::to_string(n));
  if (r.kind == "fat_tree")
    row(out, "tiers", std::to_string(r.tiers) + " (asked " + std::to_string(r.tiers_requested) + ")");
  for (const topo::TierRatio& t : r.oversubscription_by_tier)
    row(out, "  " + t.tier + " down:up",
        fmt("%.3g:1", t.ratio) + fmt("  (worst switch %.3g:1", t.worst_switch_ratio) + ", " +
            std::to_string(t.down_ports) + " down / " + std::to_string(t.up_ports) +
            " up ports, bundles of " + std::to_string(t.parallel_links) + ")");
  row(out, "links (cables)", std::to_string(r.links));
  for (const auto& [name, n] : r.links_by_kind) row(out, "  " + name, std::to_string(n));
  row(out, "copper cables", std::to_string(r.copper_cables) + "  (DAC, in a rack)");
  row(out, "optical cables", std::to_string(r.optical_cables) + "  (" + std::to_string(r.aoc_cables) +
                                 " AOC in a row, " + std::to_string(r.fiber_cables) + " fiber between rows)");
  row(out, "transceivers", std::to_string(r.transceivers) + "  (" + std::to_string(r.twin_port_transceivers) +
                               " twin-port)");
  row(out, "switch ports", std::to_string(r.switch_ports) + " bought, " +
                               std::to_string(r.switch_ports_used) + " used");
  row(out, "racks", std::to_string(r.racks) + " in " + std::to_string(r.rows) + " rows");
  if (!r.global_arrangement.empty()) row(out, "global arrangement", r.global_arrangement);
  if (r.failed_cables > 0)
    row(out, "failed", std::to_string(r.failed_cables) + " cables, " + std::to_string(r.failed_switches) + " switches");
  row(out, "diameter (hops)", std::to_string(r.diameter_hops) + "  (" + r.diameter_method + ")");
  row(out, "bisection (GB/s)",
      fmt("%.6g", r.bisection_Bps / 1e9) + "  (" + r.bisection_method + ")");
  if (r.all_to_all_bound_per_gpu_Bps > 0)
    row(out, "all-to-all bound (GB/s)",
        fmt("%.6g", r.all_to_all_bound_per_gpu_Bps * static_cast<double>(r.gpus) / 1e9) +
            fmt("  (%.4g per GPU, ", r.all_to_all_bound_per_gpu_Bps / 1e9) + r.all_to_all_bound_limit + " bind)");
  row(out, "cost (USD)", fmt("%.0f", r.cost_usd));
  row(out, "power (kW)", fmt("%.3f", r.power_w / 1e3));
  row(out, "network cost (USD)", fmt("%.0f", r.network_cost_usd));
  row(out, "network power (kW)", fmt("%.3f", r.network_power_w / 1e3));
  row(out, "network USD per GPU", fmt("%.0f", r.network_cost_per_gpu_usd));
  if (r.network_usd_per_bisection_GBps > 0)
    row(out, "network USD per bisection GB/s", fmt("%.1f", r.network_usd_per_bisection_GBps));
  out += "bill:\n";
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %-30s %10s %12s %14s %12s\n", "item", "count", "unit USD",
                "USD", "W");
  out += buf;
  for (const topo::CostLine& c : r.bill) {
    std::snprintf(buf, sizeof buf, "  %-30s %10lld %12.0f %14.0f %12.0f\n", c.item.c_str(),
                  static_cast<long long>(c.count), c.unit_usd, c.usd, c.watts);
    out += buf;
  }
  out += "rule: " + r.cable_rule + "\n";
  out += "pricing: " + r.pricing_basis + "\n";
  out += std::string("figures: ") + topo::kBisectionAssumes + "; " + topo::kUniformTrafficAssumes + "\n";
  for (const std::string& note : r.notes) out += "note: " + note + "\n";
  for (const std::string& warning : r.warnings) out += "warning: " + warning + "\n";
  return out;
}

std::vector<std::string> route_links(const json& doc, int src_rank, int dst_rank, uint64_t flow_key) {
  const Config config = parse_fabric_config(doc);
  const topo::Topology topology = build_topology(config);
  for (const auto& [name, rank] : {std::pair{"src_rank", src_rank}, {"dst_rank", dst_rank}})
    if (rank < 0 || rank >= topology.ranks())
      throw InputError(name, "a rank from 0 to " + std::to_string(topology.ranks() - 1) +
                                 ", got " + std::to_string(rank));
  std::unique_ptr<topo::Router> router;
  try {
    router = topo::make_router(topology, config.network.routing, config.seed);
  } catch (const std::invalid_argument& e) {
    throw InputError("network.routing", e.what());
  }
  std::vector<std::string> out;
  try {
    for (topo::LinkId l : router->route(src_rank, dst_rank, flow_key).links) {
      const topo::Link& link = topology.link(l);
      out.push_back(topology.vertex(link.from).name + "->" + topology.vertex(link.to).name);
    }
  } catch (const topo::RouteError& e) {
    throw InputError("topology", e.what());
  }
  return out;
}

json topology_graph(const json& doc) {
  const Config config = parse_fabric_config(doc);
  const topo::Topology t = build_topology(config);
  json vertices = json::array(), cables = json::array();
  for (topo::VertexId v = 0; v < t.num_vertices(); ++v) {
    const topo::Vertex& x = t.vertex(v);
    vertices.push_back(
        {{"name", x.name}, {"kind", vertex_kind(x.kind)}, {"tier", x.tier}, {"node", x.node}});
  }
  for (topo::LinkId l = 0; l < t.num_links(); l += 2) {
    const topo::Link& link = t.link(l);
    cables.push_back({{"a", t.vertex(link.from).name}, {"b", t.vertex(link.to).name},
                      {"kind", std::string(topo::link_kind_name(link.kind))}, {"bandwidth_Bps", link.bandwidth_Bps},
                      {"latency_s", link.latency_s}});
  }
  return {{"vertices", std::move(vertices)}, {"cables", std::move(cables)}};
}

}  // namespace cs::world
