// The bill: cable rule, ports bought, priced lines (see topology/bill.hpp).
#include "topology/bill.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>

#include "topology/direct_layouts.hpp"

namespace cs::topo {
namespace {

std::string gbps_name(double gbps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%gGbps", gbps);
  return buf;
}

void bill_item(Bill& b, const std::string& item, const PriceItem& p, int64_t count,
               bool network = true) {
  const auto n = static_cast<double>(count);
  if (count > 0)
    b.lines.push_back({item, count, p.usd, p.watts, p.usd * n, p.watts * n, p.source, network});
}

// One bill line per speed class (keys of `classes`) with its count.
void bill_classes(Bill& b, const std::string& item, const PriceClasses& classes,
                  const std::map<double, int64_t>& by_key) {
  for (const auto& [key, count] : by_key)
    bill_item(b, item + "_" + gbps_name(key), classes.by_gbps.at(key), count);
}

bool is_switch(const Topology& t, VertexId v) {
  return t.vertex(v).kind == VertexKind::fabric_switch;
}

std::string pricing_basis(const Topology& t) {
  std::string ports;
  switch (t.kind()) {
    case TopologyKind::fat_tree: ports = "switch_radix ports per switch"; break;
    case TopologyKind::dragonfly:
      ports = "router_radix, or the router's designed ports (p x NICs + (a-1) x local bundle + h)";
      break;
    case TopologyKind::torus:
      ports = "router_radix, or the switch's designed ports (NICs + its torus bundles)";
      break;
    default: ports = "one port per attached cable"; break;
  }
  return "switches bought whole, priced per port at the class of their fastest cable (" + ports +
         "); every NIC; every cable by the cable rule, two transceivers per optical cable; "
         "network figures exclude the GPU nodes";
}

}  // namespace

double PriceClasses::class_gbps(double bandwidth_Bps) const {
  const double gbps = bandwidth_Bps * 8 / 1e9;
  auto it = by_gbps.lower_bound(gbps * (1 - 1e-9));
  if (it == by_gbps.end()) it = std::prev(by_gbps.end());
  return it->first;
}

const PriceItem& PriceClasses::lookup(double bandwidth_Bps) const {
  return by_gbps.at(class_gbps(bandwidth_Bps));
}

std::vector<int64_t> vertex_racks(const Topology& t, int nodes_per_rack) {
  constexpr int64_t kUnset = -2, kNetwork = -1;
  std::vector<int64_t> rack(t.num_vertices(), kUnset);
  for (VertexId v = 0; v < t.num_vertices(); ++v)
    if (t.vertex(v).node >= 0) rack[v] = t.vertex(v).node / nodes_per_rack;
  // A switch: the one rack of the NICs cabled to it, or a network rack.
  for (VertexId v = 0; v < t.num_vertices(); ++v) {
    if (!is_switch(t, v)) continue;
    for (LinkId l : t.out_links(v)) {
      const VertexId u = t.link(l).to;
      if (t.vertex(u).kind != VertexKind::nic) continue;
      if (rack[v] == kUnset) rack[v] = rack[u];
      else if (rack[v] != rack[u]) rack[v] = kNetwork;
    }
    if (rack[v] == kUnset) rack[v] = kNetwork;
  }
  return rack;
}

int64_t switch_ports_bought(const Topology& t, const TopologyParams& p, int64_t cabled) {
  switch (t.kind()) {
    case TopologyKind::fat_tree: return p.switch_radix;
    case TopologyKind::dragonfly: return p.router_radix ? p.router_radix : dragonfly_router_ports(p);
    case TopologyKind::torus: return p.router_radix ? p.router_radix : torus_switch_ports(p);
    default: return cabled;
  }
}

Bill make_bill(const Topology& t, const TopologyParams& params, const PriceTable& prices) {
  Bill b;
  const std::vector<int64_t> rack = vertex_racks(t, std::max(params.nodes_per_rack, 1));
  std::map<double, int64_t> transceivers, ports;
  std::vector<int64_t> degree(t.num_vertices(), 0);
  std::vector<double> fastest(t.num_vertices(), 0);
  for (LinkId l = 0; l < t.num_links(); l += 2) {
    const Link& link = t.link(l);
    if (link.kind != LinkKind::fabric) continue;
    for (VertexId v : {link.from, link.to}) {
      ++degree[v];
      fastest[v] = std::max(fastest[v], link.bandwidth_Bps);
    }
    if (rack[link.from] >= 0 && rack[link.from] == rack[link.to]) {
      ++b.copper_cables;
      continue;
    }
    ++b.optical_cables;
    b.transceivers += 2;
    if (!prices.transceiver.by_gbps.empty())
      transceivers[prices.transceiver.class_gbps(link.bandwidth_Bps)] += 2;
  }
  for (VertexId v = 0; v < t.num_vertices(); ++v) {
    if (!is_switch(t, v)) continue;
    const int64_t n = switch_ports_bought(t, params, degree[v]);
    b.switch_ports += n;
    b.switch_ports_used += degree[v];
    if (!prices.switch_port.by_gbps.empty() && n > 0)
      ports[prices.switch_port.class_gbps(fastest[v])] += n;
  }
  b.racks = (t.nodes() + std::max(params.nodes_per_rack, 1) - 1) / std::max(params.nodes_per_rack, 1);
  b.pricing_basis = pricing_basis(t);
  b.cable_rule = "racks hold " + std::to_string(params.nodes_per_rack) +
                 " consecutive nodes; a switch sits in the rack of the NICs cabled to it when "
                 "they share one, else in a network rack of its own; a cable within one rack is "
                 "copper (DAC), any other optical with a transceiver at each end; node-internal "
                 "links are not cables (priced with the node)";

  bill_item(b, "gpu_node", prices.gpu_node, t.nodes(), false);
  const int64_t nics = int64_t{t.nodes()} * t.nics_per_node();
  if (nics > 0 && !prices.nic.by_gbps.empty())
    bill_classes(b, "nic", prices.nic, {{prices.nic.class_gbps(params.node.nic_bandwidth_Bps), nics}});
  bill_classes(b, "switch_port", prices.switch_port, ports);
  bill_classes(b, "transceiver", prices.transceiver, transceivers);
  bill_item(b, "copper_cable", prices.copper_cable, b.copper_cables);
  bill_item(b, "optical_cable", prices.optical_cable, b.optical_cables);
  for (const CostLine& line : b.lines) {
    b.cost_usd += line.usd;
    b.power_w += line.watts;
    if (!line.network) continue;
    b.network_cost_usd += line.usd;
    b.network_power_w += line.watts;
  }
  return b;
}

}  // namespace cs::topo
