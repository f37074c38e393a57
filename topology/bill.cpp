// The bill: cable rule, ports bought, priced lines (see topology/bill.hpp).
#include "topology/bill.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <utility>

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
         "); every NIC; every cable by the cable rule (DAC, AOC, or fiber with its transceivers); "
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

VertexPlaces vertex_places(const Topology& t, int nodes_per_rack, int racks_per_row) {
  constexpr int64_t kUnset = -1;
  VertexPlaces p;
  const int64_t racks = (int64_t{t.nodes()} + nodes_per_rack - 1) / nodes_per_rack;
  p.rows = (racks + racks_per_row - 1) / racks_per_row;
  const int64_t central = p.rows;
  p.rack.assign(t.num_vertices(), kUnset);
  p.row.assign(t.num_vertices(), kUnset);
  for (VertexId v = 0; v < t.num_vertices(); ++v)
    if (t.vertex(v).node >= 0) {
      p.rack[v] = t.vertex(v).node / nodes_per_rack;
      p.row[v] = p.rack[v] / racks_per_row;
    }
  // The one value `of` gives every NIC cabled to switch v, kUnset when there is none, `mixed`
  // when they differ.
  const auto shared = [&](VertexId v, const std::vector<int64_t>& of, int64_t mixed) {
    int64_t value = kUnset;
    for (LinkId l : t.out_links(v)) {
      const VertexId u = t.link(l).to;
      if (t.vertex(u).kind != VertexKind::nic) continue;
      if (value == kUnset) value = of[u];
      else if (value != of[u]) return mixed;
    }
    return value;
  };
  int64_t network_racks = racks;
  std::vector<VertexId> without_nics;
  for (VertexId v = 0; v < t.num_vertices(); ++v) {
    if (!is_switch(t, v)) continue;
    const int64_t rack = shared(v, p.rack, kUnset - 1);
    if (rack >= 0) {  // top of rack
      p.rack[v] = rack;
      p.row[v] = rack / racks_per_row;
      continue;
    }
    p.rack[v] = network_racks++;
    if (rack == kUnset) without_nics.push_back(v);
    else p.row[v] = shared(v, p.row, central);
  }
  // Switches without NICs take the row their placed neighbour switches share (central when
  // they differ), tier by tier upward: each pass places those next to a switch placed before.
  while (!without_nics.empty()) {
    std::vector<std::pair<VertexId, int64_t>> placed;
    std::vector<VertexId> left;
    for (VertexId v : without_nics) {
      int64_t row = kUnset;
      for (LinkId l : t.out_links(v)) {
        const VertexId u = t.link(l).to;
        if (!is_switch(t, u) || p.row[u] == kUnset) continue;
        row = row == kUnset || row == p.row[u] ? p.row[u] : central;
      }
      if (row == kUnset) left.push_back(v);
      else placed.emplace_back(v, row);
    }
    if (placed.empty()) break;  // the rest reach no placed switch: central
    for (const auto& [v, row] : placed) p.row[v] = row;
    without_nics = std::move(left);
  }
  for (VertexId v = 0; v < t.num_vertices(); ++v)
    if (p.row[v] == kUnset) p.row[v] = central;
  return p;
}

CableReach VertexPlaces::reach(VertexId a, VertexId b) const {
  if (rack[a] == rack[b]) return CableReach::rack;
  return row[a] == row[b] ? CableReach::row : CableReach::building;
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
  const int per_rack = std::max(params.nodes_per_rack, 1), per_row = std::max(params.racks_per_row, 1);
  const VertexPlaces places = vertex_places(t, per_rack, per_row);
  std::map<double, int64_t> transceivers, twin_ports, aocs, ports;
  // Per (switch, transceiver class): fiber ends that a twin-port module can pair.
  std::map<std::pair<VertexId, double>, int64_t> switch_fiber_ends;
  std::vector<int64_t> degree(t.num_vertices(), 0);
  std::vector<double> fastest(t.num_vertices(), 0);
  for (LinkId l = 0; l < t.num_links(); l += 2) {
    const Link& link = t.link(l);
    if (link.kind != LinkKind::fabric) continue;
    for (VertexId v : {link.from, link.to}) {
      ++degree[v];
      fastest[v] = std::max(fastest[v], link.bandwidth_Bps);
    }
    CableReach reach = places.reach(link.from, link.to);
    if (reach == CableReach::row && prices.aoc.by_gbps.empty()) reach = CableReach::building;
    if (reach == CableReach::rack) {
      ++b.copper_cables;
      continue;
    }
    ++b.optical_cables;
    if (reach == CableReach::row) {
      ++b.aoc_cables;
      ++aocs[prices.aoc.class_gbps(link.bandwidth_Bps)];
      continue;
    }
    ++b.fiber_cables;
    if (prices.transceiver.by_gbps.empty()) continue;
    const double gbps = prices.transceiver.class_gbps(link.bandwidth_Bps);
    const bool twin = prices.twin_port_transceiver.by_gbps.count(2 * gbps) > 0;
    for (VertexId v : {link.from, link.to}) {
      if (twin && is_switch(t, v)) ++switch_fiber_ends[{v, gbps}];
      else ++transceivers[gbps];
    }
  }
  for (const auto& [at, ends] : switch_fiber_ends) twin_ports[2 * at.second] += (ends + 1) / 2;
  for (const auto& [gbps, n] : transceivers) b.transceivers += n;
  for (const auto& [gbps, n] : twin_ports) b.twin_port_transceivers += n;
  b.transceivers += b.twin_port_transceivers;
  for (VertexId v = 0; v < t.num_vertices(); ++v) {
    if (!is_switch(t, v)) continue;
    // A multislice's DCN switch stands for the data-center network: its cabled ports.
    const bool dcn = t.torus() && t.torus()->slices > 1 && v == t.torus()->dcn;
    const int64_t n = dcn ? degree[v] : switch_ports_bought(t, params, degree[v]);
    b.switch_ports += n;
    b.switch_ports_used += degree[v];
    if (!prices.switch_port.by_gbps.empty() && n > 0)
      ports[prices.switch_port.class_gbps(fastest[v])] += n;
  }
  b.racks = (t.nodes() + per_rack - 1) / per_rack;
  b.rows = places.rows;
  b.pricing_basis = pricing_basis(t);
  b.cable_rule = "racks hold " + std::to_string(per_rack) + " consecutive nodes, rows " + std::to_string(per_row) +
                 " consecutive racks; a switch sits in the rack of the NICs cabled to it when they share one, "
                 "else in a network rack of its own, in their row when they share one, else in the row its "
                 "neighbour switches share or a central network row; a cable within a rack is copper (DAC), "
                 "within a row an active optical cable (AOC), between rows fiber with a transceiver at each end "
                 "(at a switch, two links share a twin-port transceiver of twice their speed where priced); "
                 "node-internal links are not cables (priced with the node)";

  bill_item(b, "gpu_node", prices.gpu_node, t.nodes(), false);
  const int64_t nics = int64_t{t.nodes()} * t.nics_per_node();
  if (nics > 0 && !prices.nic.by_gbps.empty())
    bill_classes(b, "nic", prices.nic, {{prices.nic.class_gbps(params.node.nic_bandwidth_Bps), nics}});
  bill_classes(b, "switch_port", prices.switch_port, ports);
  bill_classes(b, "transceiver", prices.transceiver, transceivers);
  bill_classes(b, "twin_port_transceiver", prices.twin_port_transceiver, twin_ports);
  bill_classes(b, "aoc", prices.aoc, aocs);
  bill_item(b, "copper_cable", prices.copper_cable, b.copper_cables);
  bill_item(b, "optical_cable", prices.optical_cable, b.fiber_cables);
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
