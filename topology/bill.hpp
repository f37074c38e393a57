#pragma once
// What a fabric costs and draws: the price table, the cable rule, the ports bought per switch,
// and the bill. Units: USD, W (typical draw), bytes/s.
//
// One basis for every family (stated in the report as `pricing_basis`):
//   - switches are bought whole: every switch is priced as its port count times the per-port
//     price (a switch's price over its ports) of the speed class of its fastest cable. Port
//     counts: a fat-tree switch has switch_radix ports; a dragonfly router or torus switch
//     has the ports its design cables (dragonfly_router_ports, torus_switch_ports), or
//     TopologyParams::router_radix when given; a custom switch has its cables.
//   - every NIC; every cable, copper or optical by the cable rule; one transceiver per end
//     of an optical cable, at the cable's speed class.
//   - GPU nodes (fabric NICs excluded) are in the bill and in cost / power, not in the
//     network figures (network = NICs, switches, transceivers, cables).
// Cable rule (stated as `cable_rule`): racks hold nodes_per_rack consecutive nodes. A NIC
// sits in its node's rack; a switch sits in the rack of the NICs cabled to it when they all
// share one (a top-of-rack switch), otherwise in a network rack of its own. A cable whose two
// ends sit in one rack is copper (passive DAC, a few metres); any other is optical (fiber
// plus a transceiver at each end). Rail-optimized leaves serve nodes of many racks, so their
// NIC cables are optical, as in NVIDIA's DGX SuperPOD; node-internal links (NVLink, PCIe)
// are not cables and are priced with the node.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "topology/params.hpp"
#include "topology/topology.hpp"

namespace cs::topo {

// One priced item: USD per unit, typical W per unit, where the figures come from.
struct PriceItem {
  double usd = 0;
  double watts = 0;
  std::string source;
};

// Items priced by speed class: class key = speed in Gb/s. lookup() takes the smallest class at
// or above the speed, the largest class beyond them all. Invariant: classes not empty when used.
struct PriceClasses {
  std::map<double, PriceItem> by_gbps;
  const PriceItem& lookup(double bandwidth_Bps) const;
  double class_gbps(double bandwidth_Bps) const;  // the key lookup() uses
};

struct PriceTable {
  PriceClasses switch_port;  // per switch port
  PriceClasses nic;          // per NIC
  PriceClasses transceiver;  // per optical transceiver (two per optical cable)
  PriceItem copper_cable;    // per DAC cable
  PriceItem optical_cable;   // per optical cable (transceivers excluded)
  PriceItem gpu_node;        // per GPU server, fabric NICs excluded
};

// One line of the bill: count x unit price.
struct CostLine {
  std::string item;  // "gpu_node", "nic_400Gbps", "switch_port_400Gbps", ...
  int64_t count = 0;
  double unit_usd = 0, unit_watts = 0;
  double usd = 0, watts = 0;
  std::string source;  // the price entry's source
  bool network = true; // false for gpu_node
};

struct Bill {
  std::vector<CostLine> lines;
  int64_t copper_cables = 0, optical_cables = 0, transceivers = 0;
  int64_t switch_ports = 0;       // bought (see the basis above)
  int64_t switch_ports_used = 0;  // with a cable attached
  int64_t racks = 0;              // node racks
  double cost_usd = 0, power_w = 0;                  // everything
  double network_cost_usd = 0, network_power_w = 0;  // without the GPU nodes
  std::string pricing_basis, cable_rule;
};

// Rack of every vertex under the cable rule: node vertices their node's rack, switches their
// NICs' rack or -1 (a network rack of their own). nodes_per_rack >= 1.
std::vector<int64_t> vertex_racks(const Topology& topology, int nodes_per_rack);
// Ports bought for a fabric switch that has `cabled` cables attached.
int64_t switch_ports_bought(const Topology& topology, const TopologyParams& params,
                            int64_t cabled);
// The bill. `params` must be the ones `topology` was built from.
Bill make_bill(const Topology& topology, const TopologyParams& params, const PriceTable& prices);

}  // namespace cs::topo
