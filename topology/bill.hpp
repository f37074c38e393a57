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
// Cable rule (stated as `cable_rule`), a cable's reach class by the distance between its ends:
//   - racks hold nodes_per_rack consecutive nodes, rows hold racks_per_row consecutive racks.
//     A NIC sits in its node's rack. A switch sits in the rack of the NICs cabled to it when
//     they all share one (top of rack); else in a network rack of its own in the row of those
//     NICs when they share a row (end of row: rail-optimized leaves of one scalable unit);
//     else, and for a switch without NICs, in the row its neighbour switches share, or in a
//     central network row (spines and cores of a fabric spanning rows).
//   - same rack: passive copper (DAC, at most ~3 m at 400G);
//     same row, another rack: an active optical cable (AOC, its two optical ends built in;
//     tens of metres);
//     another row: fiber plus a transceiver at each end (multimode to 50 m, single-mode to
//     500 m). At a switch end, two links of one speed class share a twin-port transceiver of
//     twice that class where the table has one (800G twin-port OSFP carrying two 400G links,
//     as NVIDIA Quantum-2 / Spectrum-4 switch cages take); a NIC end takes a single-port one.
//   - a table without AOC classes prices row reach as fiber; one without twin-port classes
//     puts a single-port transceiver at every end.
// Rail-optimized leaves serve nodes of many racks, so their NIC cables are optical, as in
// NVIDIA's DGX SuperPOD; node-internal links (NVLink, PCIe) are not cables and are priced with
// the node.
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
  PriceClasses transceiver;  // per single-port optical transceiver (one per fiber end)
  // Per twin-port transceiver, by its class (twice the links it carries: 800 carries two 400G
  // links); may be empty (single-port transceivers everywhere).
  PriceClasses twin_port_transceiver;
  PriceClasses aoc;          // per active optical cable, both ends; may be empty (fiber instead)
  PriceItem copper_cable;    // per DAC cable
  PriceItem optical_cable;   // per fiber cable (transceivers excluded)
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
  // Cables by reach class: copper (DAC, in a rack), AOC (in a row), fiber (between rows);
  // optical_cables = aoc_cables + fiber_cables.
  int64_t copper_cables = 0, optical_cables = 0, aoc_cables = 0, fiber_cables = 0;
  int64_t transceivers = 0;            // modules bought, single- and twin-port
  int64_t twin_port_transceivers = 0;  // of which twin-port
  int64_t switch_ports = 0;       // bought (see the basis above)
  int64_t switch_ports_used = 0;  // with a cable attached
  int64_t racks = 0;              // node racks
  int64_t rows = 0;               // rows of node racks
  double cost_usd = 0, power_w = 0;                  // everything
  double network_cost_usd = 0, network_power_w = 0;  // without the GPU nodes
  std::string pricing_basis, cable_rule;
};

// The reach class of a cable (see the cable rule above).
enum class CableReach : uint8_t { rack, row, building };
// Where each vertex sits under the cable rule: its rack (node racks 0.., a switch outside a
// node rack a network rack of its own, numbered after them) and its row (node rows 0..rows-1,
// the central network row `rows`). nodes_per_rack, racks_per_row >= 1.
struct VertexPlaces {
  std::vector<int64_t> rack, row;
  int64_t rows = 0;  // rows of node racks
  CableReach reach(VertexId a, VertexId b) const;
};
VertexPlaces vertex_places(const Topology& topology, int nodes_per_rack, int racks_per_row);
// Ports bought for a fabric switch that has `cabled` cables attached.
int64_t switch_ports_bought(const Topology& topology, const TopologyParams& params,
                            int64_t cabled);
// The bill. `params` must be the ones `topology` was built from.
Bill make_bill(const Topology& topology, const TopologyParams& params, const PriceTable& prices);

}  // namespace cs::topo
