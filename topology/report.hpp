#pragma once
// The topology report (`clustersim topo`): what a built topology is made of, how far apart
// its NICs are, its bisection bandwidth, and what it costs and draws.
//
// Units: bandwidths in bytes/s (one direction), money in USD, power in W, hops in cables.
//
// Counting rules (stated in the report as `cable_rule`):
//   - links: every full-duplex cable of the topology, node-internal ones included;
//   - cables: a NIC-to-switch (or NIC-to-NIC) cable is copper (DAC, same rack); a
//     switch-to-switch cable is optical, with two transceivers (one per end); node-internal
//     links (NVLink, PCIe) are not cables and are priced with the node;
//   - switch ports: a fat-tree switch is bought whole (switch_radix ports); a dragonfly,
//     torus or custom switch has one port per cable attached to it.
// Diameter: NIC-to-NIC hops over the fabric (NICs, fabric switches, fabric cables).
// Bisection: the minimum, over balanced splits of the nodes into two halves, of the fabric
// cable bandwidth (one direction) that must be cut to separate them.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
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
};

using Counts = std::vector<std::pair<std::string, int64_t>>;  // ordered name -> count

struct TopologyReport {
  std::string kind;                  // "fat_tree", "dragonfly", "torus", "custom", "single_node"
  int64_t gpus = 0, nodes = 0, nics = 0;
  int64_t node_switches = 0;         // NVSwitch / PCIe host per node (not in `switches`)
  int64_t switches = 0;              // fabric switches
  Counts switches_by_tier;           // "leaf", "spine", "core" / "router" / "switch"
  int64_t links = 0;                 // full-duplex cables, node-internal included
  Counts links_by_kind;              // node_fabric, pcie, nic_switch, switch_switch, ...
  int64_t copper_cables = 0, optical_cables = 0, transceivers = 0;
  int64_t switch_ports = 0;          // ports bought (see the rule above)
  std::string cable_rule;
  int diameter_hops = 0;
  std::string diameter_method;       // "bfs" (exact, every NIC), "closed_form", "bfs_sampled"
  std::optional<int> diameter_closed_form;  // the family's formula, when there is one
  double bisection_Bps = 0;
  std::string bisection_method;      // "max_flow", "closed_form", "none" (fewer than 2 nodes)
  int bisection_partitions = 0;      // balanced partitions evaluated by max_flow
  std::string global_arrangement;    // dragonfly only
  std::vector<CostLine> bill;
  double cost_usd = 0, power_w = 0;
};

// Limits for the exact methods: max-flow bisection up to kMaxFlowNodes nodes (all halves up
// to kAllHalvesNodes); exact BFS diameter while NICs x fabric cables stays under kBfsWork.
inline constexpr int kMaxFlowNodes = 64;
inline constexpr int kAllHalvesNodes = 12;
inline constexpr int64_t kBfsWork = int64_t{20} * 1000 * 1000;

// The report. `params` must be the ones `topology` was built from. Deterministic.
TopologyReport make_report(const Topology& topology, const TopologyParams& params,
                           const PriceTable& prices);

// The pieces, exposed for tests.
// Family closed forms (nullopt for custom / single node).
std::optional<int> closed_form_diameter(const Topology& topology);
std::optional<double> closed_form_bisection(const Topology& topology, const TopologyParams& p);
// Exact NIC-to-NIC fabric diameter by BFS from the given NIC vertices (all NICs if empty).
int bfs_diameter(const Topology& topology, const std::vector<VertexId>& sources = {});
// Minimum over the given node partitions (side[node] = true for one half) of the max-flow min
// cut between the halves' NICs over fabric cables (bytes/s).
double max_flow_bisection(const Topology& topology, const std::vector<std::vector<bool>>& halves);
// Balanced node partitions as the report uses them: all halves for up to kAllHalvesNodes
// nodes (node 0 fixed on one side), else index halves, interleaved and 16 random (seeded).
std::vector<std::vector<bool>> balanced_partitions(int nodes);

}  // namespace cs::topo
