#pragma once
// The topology report (`clustersim topo`): what a built topology is made of, how far apart
// its NICs are, how oversubscribed each fat-tree tier is, its bisection bandwidth, and what
// it costs and draws.
//
// Units: bandwidths in bytes/s (one direction), money in USD, power in W, hops in cables.
//
//   - links: every full-duplex cable of the topology, node-internal ones included;
//   - cables, switch ports, prices: topology/bill.hpp (one pricing basis for every family,
//     and the cable rule: copper inside a rack, optical between racks), stated in the report
//     as pricing_basis and cable_rule;
//   - bisection: topology/bisection.hpp (one method per family at every size).
// Diameter: NIC-to-NIC hops over the fabric (NICs, fabric switches, fabric cables).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "topology/bill.hpp"
#include "topology/bisection.hpp"
#include "topology/params.hpp"
#include "topology/topology.hpp"
#include "topology/uniform_traffic.hpp"

namespace cs::topo {

using Counts = std::vector<std::pair<std::string, int64_t>>;  // ordered name -> count

// Effective oversubscription of one fat-tree tier below the top: what enters its switches
// from below against what leaves them upwards.
struct TierRatio {
  std::string tier;                  // "leaf", "spine", "core", "tier4", ...
  int64_t switches = 0;
  int down_ports = 0, up_ports = 0;  // per switch in use (down: the fullest switch)
  int parallel_links = 1;            // cables per bundle to a switch above
  double down_Bps = 0, up_Bps = 0;   // the tier's totals, one direction
  double ratio = 0;                  // down_Bps / up_Bps
  double worst_switch_ratio = 0;     // the most oversubscribed switch's down / up
};

struct TopologyReport {
  std::string kind;                  // "fat_tree", "dragonfly", "torus", "custom", "single_node"
  int64_t gpus = 0, nodes = 0, nics = 0;
  int64_t node_switches = 0;         // NVSwitch / PCIe host per node (not in `switches`)
  int64_t switches = 0;              // fabric switches
  Counts switches_by_tier;           // "leaf", "spine", "core" / "router" / "switch"
  int tiers = 0, tiers_requested = 0;             // fat_tree: switch tiers built and asked for
  std::vector<TierRatio> oversubscription_by_tier;  // fat_tree, tiers below the top
  int64_t links = 0;                 // full-duplex cables, node-internal included
  Counts links_by_kind;              // node_fabric, pcie, nic_switch, switch_switch, ...
  int64_t copper_cables = 0, optical_cables = 0, transceivers = 0;
  int64_t aoc_cables = 0, fiber_cables = 0;  // optical_cables by reach class (bill.hpp)
  int64_t twin_port_transceivers = 0;        // of transceivers
  int64_t switch_ports = 0;          // ports bought (bill.hpp's basis)
  int64_t switch_ports_used = 0;     // ports with a cable
  int64_t racks = 0;                 // node racks (nodes_per_rack each)
  int64_t rows = 0;                  // rows of node racks (racks_per_row each)
  std::string cable_rule, pricing_basis;
  int diameter_hops = 0;
  std::string diameter_method;       // "bfs" (exact, every NIC), "closed_form", "bfs_sampled"
  std::optional<int> diameter_closed_form;  // the family's formula, when there is one
  double bisection_Bps = 0;
  std::string bisection_method;      // "tree_cut", "max_flow", "closed_form", "none"
  int bisection_partitions = 0;      // candidate splits evaluated
  // Uniform traffic (topology/uniform_traffic.hpp): each GPU's all-to-all rate bound, and
  // what binds it.
  double all_to_all_bound_per_gpu_Bps = 0;
  std::string all_to_all_bound_limit;
  std::string global_arrangement;    // dragonfly only
  int64_t failed_cables = 0;         // degraded fabric (topology/failures.hpp): cables down
  int64_t failed_switches = 0;       // fabric switches with every cable down
  std::vector<CostLine> bill;
  double cost_usd = 0, power_w = 0;                  // everything, GPU nodes included
  double network_cost_usd = 0, network_power_w = 0;  // NICs, switches, transceivers, cables
  double network_cost_per_gpu_usd = 0;
  double network_usd_per_bisection_GBps = 0;  // network_cost_usd / bisection in GB/s (0: none)
  std::vector<std::string> notes;    // what the builder decided that the file did not say
  std::vector<std::string> warnings; // links narrower than the NICs feeding them (narrow_links.hpp)
};

// Exact BFS diameter while NICs x fabric cables stays under kBfsWork.
inline constexpr int64_t kBfsWork = int64_t{20} * 1000 * 1000;

// The report. `params` must be the ones `topology` was built from. Deterministic.
TopologyReport make_report(const Topology& topology, const TopologyParams& params,
                           const PriceTable& prices);

// A directed link's class, for roll-ups: "<from role>><to role>", a role being gpu, nic,
// node_switch, or a fabric switch's tier (leaf, spine, core; router; switch), with
// ":local" / ":global" on a dragonfly's router-to-router links ("leaf>spine", "nic>leaf",
// "gpu>node_switch", "router>router:global").
std::string link_class(const Topology& topology, LinkId link);

// What the builder decided that the parameters did not say (fewer tiers than asked, ratios
// rounded by bundles): the report's notes.
std::vector<std::string> build_notes(const Topology& topology, const TopologyParams& params);

// Network USD per GB/s of bus bandwidth delivered to every GPU: network_cost_usd /
// (gpus x busbw in GB/s), i.e. network cost per GPU over busbw; busbw_Bps is a measured
// collective's busbw (nccl-tests definition, bytes/s). 0 when busbw_Bps <= 0.
double network_usd_per_busbw_GBps(const TopologyReport& report, double busbw_Bps);

// The pieces, exposed for tests.
// Family closed form (nullopt for custom / single node).
std::optional<int> closed_form_diameter(const Topology& topology);
// Exact NIC-to-NIC fabric diameter by BFS from the given NIC vertices (all NICs if empty).
int bfs_diameter(const Topology& topology, const std::vector<VertexId>& sources = {});
// Effective ratios of a fat-tree's tiers below the top (empty for other families).
std::vector<TierRatio> tier_ratios(const Topology& topology);

}  // namespace cs::topo
