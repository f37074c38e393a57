#pragma once
// What a topology is built from: plain parameters in SI units (bytes/s, seconds).
// Filled by the scenario loader (which validates them); consumed by the builders.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/enum_table.hpp"

namespace cs::topo {

enum class NodeFabric : uint8_t { nvswitch, pcie, nvlink_mesh };
// hardware.node.fabric.
inline constexpr auto kNodeFabricNames = std::to_array<EnumName<NodeFabric>>({
    {"nvswitch", NodeFabric::nvswitch, "every GPU on NVSwitches: all to all at gpu_bandwidth"},
    {"nvlink_mesh", NodeFabric::nvlink_mesh, "direct GPU-GPU NVLink cables, wired as the mesh says"},
    {"pcie", NodeFabric::pcie, "GPUs reach each other over PCIe through the host"},
});
static_assert(names_every_value<kNodeFabricNames>());

// GPU-GPU NVLink cables of an nvlink_mesh node (see node.cpp for the exact wiring):
//   full:        every pair of GPUs, gpu_bandwidth split evenly over the GPU's gpus-1 cables;
//   hybrid_cube: the DGX-1 (V100) hybrid cube-mesh of 8 GPUs, 6 NVLinks per GPU carrying
//                gpu_bandwidth / 6 each, some neighbour pairs joined by two of them;
//   torus_4x4:   16 chips on a 4 x 4 wrap-around grid, 4 links per chip of gpu_bandwidth / 4
//                (AWS trn1 and trn2 servers' NeuronLink);
//   ring:        GPU i cabled to i + 1 (mod gpus), 2 links per GPU of gpu_bandwidth / 2 (inf2's
//                NeuronLink ring).
enum class NodeMesh : uint8_t { full, hybrid_cube, torus_4x4, ring };
// hardware.node.mesh.
inline constexpr auto kNodeMeshNames = std::to_array<EnumName<NodeMesh>>({
    {"full", NodeMesh::full, "every GPU pair cabled"},
    {"hybrid_cube", NodeMesh::hybrid_cube, "the 8-GPU DGX-1 hybrid cube-mesh, 6 NVLinks per GPU"},
    {"torus_4x4", NodeMesh::torus_4x4, "16 chips on a 4x4 wrap-around grid, 4 links each (trn1, trn2)"},
    {"ring", NodeMesh::ring, "each GPU cabled to the next, the last to the first (inf2)"},
});
static_assert(names_every_value<kNodeMeshNames>());

// One server. GPUs reach each other over the node fabric; each GPU reaches its NIC (GPU i
// uses NIC floor(i * nics / gpus), its "affinity") over PCIe.
struct NodeParams {
  int gpus = 8;
  NodeFabric fabric = NodeFabric::nvswitch;
  NodeMesh mesh = NodeMesh::full;     // nvlink_mesh only
  double gpu_bandwidth_Bps = 450e9;   // per GPU, per direction, into the node fabric
  double gpu_latency_s = 0.7e-6;      // GPU <-> node fabric, one way
  int nics = 8;
  double nic_bandwidth_Bps = 50e9;    // 400 Gb/s, per direction
  double pcie_bandwidth_Bps = 64e9;   // GPU <-> NIC (and GPU <-> host for pcie nodes), per direction
  double pcie_latency_s = 0.5e-6;
  // PCIe switches per node; 0: not modelled (GPUs and NICs cabled as described above). With
  // s >= 1, GPU i sits behind switch floor(i * s / gpus) and NIC j behind floor(j * s / nics)
  // (pcie_bandwidth cables), and each switch joins the host root complex with a
  // pcie_bandwidth uplink: GPU-NIC traffic under one switch stays under it, otherwise (and
  // GPU-GPU traffic of pcie nodes between switches) it crosses the host.
  int pcie_switches = 0;
  // pcie nodes: the GPUs reach each other by PCIe peer-to-peer. false: only through host
  // memory (a chipset or IOMMU that blocks P2P, as on many rented PCIe servers); the routes
  // are the same, the communication layer prices the staging (comm_config.hpp host_staged).
  bool gpu_p2p = true;
};

enum class TopologyKind : uint8_t { single_node, fat_tree, custom, dragonfly, torus };
// topology.kind, in the order the scenario schema lists them.
inline constexpr auto kTopologyKindNames = std::to_array<EnumName<TopologyKind>>({
    {"single_node", TopologyKind::single_node, "one node and its node fabric; no network"},
    {"fat_tree", TopologyKind::fat_tree, "a folded Clos of up to `tiers` tiers of switches"},
    {"dragonfly", TopologyKind::dragonfly, "groups of all-to-all routers joined by global links"},
    {"torus", TopologyKind::torus, "nodes on a 2- or 3-dimensional wrap-around grid, a switch at each position"},
    {"custom", TopologyKind::custom, "the switches and links the file lists"},
});
static_assert(names_every_value<kTopologyKindNames>());

// How a dragonfly's global links join groups (see topology/direct_layouts.hpp).
enum class GlobalArrangement : uint8_t { absolute, relative, circulant };
// topology.global_arrangement.
inline constexpr auto kGlobalArrangementNames = std::to_array<EnumName<GlobalArrangement>>({
    {"absolute", GlobalArrangement::absolute, "global port q leads to group q, skipping its own"},
    {"relative", GlobalArrangement::relative, "global port q leads to group G+1+q mod g"},
    {"circulant", GlobalArrangement::circulant, "global ports alternate +/- group offsets"},
});
static_assert(names_every_value<kGlobalArrangementNames>());

struct CustomLink {
  std::string a, b;         // vertex names: a switch name, or "n<i>" / "n<i>.<j>" for a NIC
  double bandwidth_Bps = 0; // per direction
  double latency_s = 0;
};

// Cables between two named vertices taken down (topology.failed.links).
struct FailedLink {
  std::string a, b;   // vertex names, as the report and routes name them ("leaf3", "g2.r5", "n7.1")
  int cables = 0;     // how many of the parallel cables between them; 0: all
};

// A degraded fabric (topology/failures.hpp): what is down for the whole run. Everything
// named fails together with what is drawn at random; the draws use `seed` alone, so the same
// file fails the same cables whatever else changes.
struct FailureParams {
  std::vector<FailedLink> links;
  std::vector<std::string> switches;  // fabric switch names: every cable of each
  int random_links = 0;               // switch-to-switch cables drawn at random
  int random_switches = 0;            // fabric switches without NICs drawn at random (spines, cores)
  // Each switch-to-switch cable is down with probability 1 - exp(-window / link_mtbf): the
  // fabric as a run of length `window` ends up if nothing is repaired (0: not drawn).
  double link_mtbf_s = 0;
  double window_s = 0;
  uint64_t seed = 1;
  bool any() const {
    return !links.empty() || !switches.empty() || random_links > 0 || random_switches > 0 ||
           (link_mtbf_s > 0 && window_s > 0);
  }
};

struct TopologyParams {
  TopologyKind kind = TopologyKind::fat_tree;
  NodeParams node;
  int nodes = 1;
  double link_bandwidth_Bps = 50e9;  // fabric links, per direction
  double link_latency_s = 0.5e-6;    // fabric links, one way (cable + switch traversal)
  // Racks hold nodes_per_rack consecutive nodes; the report's cable rule (copper inside a
  // rack, AOC inside a row, fiber between rows: topology/bill.hpp) places switches by them. Default 4: the
  // DGX SuperPOD compute rack (four DGX H100 / B300 per rack).
  int nodes_per_rack = 4;
  // Rows hold racks_per_row consecutive racks (the cable rule's AOC reach, bill.hpp). Default
  // 8: a DGX SuperPOD scalable unit of 32 DGX H100 (8 racks of 4) laid out in one row with its
  // leaf switches at the row's end, an assumption of this model, not a vendor floor plan.
  int racks_per_row = 8;
  // fat_tree
  int tiers = 2;                     // tiers asked for; fewer are built when fewer suffice
  int switch_radix = 64;             // ports per switch
  double oversubscription = 1.0;     // leaf down-ports : up-ports, at most
  // Down:up ratios of the tiers above the leaves that have up-ports (tiers 2 .. tiers-1,
  // aggregation first); missing entries are 1 (non-blocking).
  std::vector<double> upper_oversubscription;
  // NIC j of every node goes to a rail-j leaf (fat_tree); on a dragonfly, NIC j of the q-th
  // node of a group goes to router (q * nics + j) mod a of the group (j's own router when
  // nics = a).
  bool rail_optimized = false;
  // fat_tree: cables per switch-to-switch connection, one entry per tier boundary (leaf to
  // tier 2 first): a switch's up-ports go to up / P switches above, P cables each. 0 or a
  // missing entry: the builder's choice, the fewest switches above (topology/fat_tree_shape.hpp).
  std::vector<int> parallel_links;
  // dragonfly (Kim et al. 2008): g groups of a all-to-all routers, p nodes per router, h global
  // links per router. Local cables: link_bandwidth / link_latency; NIC cables (as in fat_tree):
  // node.nic_bandwidth / link_latency.
  int routers_per_group = 8;         // a
  int nodes_per_router = 4;          // p
  int global_links_per_router = 4;   // h
  int groups = 1;                    // g, 1 .. a*h+1
  std::optional<double> global_bandwidth_Bps;  // global links, per direction; unset: link_bandwidth
  std::optional<double> global_latency_s;      // global links, one way; unset: link_latency
  GlobalArrangement global_arrangement = GlobalArrangement::absolute;
  int local_parallel_links = 1;      // dragonfly: cables between each pair of a group's routers
  // dragonfly and torus: ports bought per router (the report prices whole switches); 0: the
  // ports the design cables (dragonfly p x NICs + a - 1 local x bundle + h; torus: NICs +
  // its torus cables). Must be at least that.
  int router_radix = 0;
  // torus: size of each of the 2 or 3 dimensions; nodes = product of dims
  std::vector<int> dims;
  // torus: cables between neighbouring positions along each dimension (a bundle): empty: 1;
  // one entry: every dimension; else one per dimension.
  std::vector<int> dim_parallel_links;
  // torus: copies of the torus joined by a data-center network (a TPU multislice); each
  // position's switch has one cable of dcn_bandwidth (per direction) and dcn_latency (one way)
  // to one non-blocking DCN switch. 1: one torus, no DCN.
  int slices = 1;
  double dcn_bandwidth_Bps = 6.25e9;
  double dcn_latency_s = 5e-6;
  // custom
  std::vector<std::string> switches;
  std::vector<CustomLink> links;
  // Down for the whole run, applied after building (any kind with a fabric).
  FailureParams failed;
};

enum class RoutingKind : uint8_t { dmodk, ecmp, shortest, minimal, valiant, ugal, dor,
                                   adaptive, spray, valiant_packet, ugal_packet };

// network.routing (besides "default", the family's own: default_routing), in the order the
// scenario schema lists them.
inline constexpr auto kRoutingKindNames = std::to_array<EnumName<RoutingKind>>({
    {"dmodk", RoutingKind::dmodk, "fat_tree: the up-port by destination mod k"},
    {"ecmp", RoutingKind::ecmp, "fat_tree: an equal-cost up-port hashed per flow"},
    {"adaptive", RoutingKind::adaptive, "fat_tree: per flow, the least-loaded equal-cost path"},
    {"spray", RoutingKind::spray, "fat_tree: per packet, a flow spread over all its equal-cost paths"},
    {"minimal", RoutingKind::minimal, "dragonfly: local-global-local"},
    {"valiant", RoutingKind::valiant, "dragonfly: via a random intermediate group"},
    {"ugal", RoutingKind::ugal, "dragonfly: per flow, minimal or valiant by the queues it sees"},
    {"valiant_packet", RoutingKind::valiant_packet, "dragonfly: per packet, a flow spread over every intermediate group"},
    {"ugal_packet", RoutingKind::ugal_packet, "dragonfly: per packet, a flow split between minimal and valiant_packet by the queues"},
    {"dor", RoutingKind::dor, "torus: dimension order"},
    {"shortest", RoutingKind::shortest, "any topology: a shortest path"},
});
static_assert(names_every_value<kRoutingKindNames>());

std::string_view to_string(TopologyKind kind);
std::string_view to_string(RoutingKind kind);
// The topology family a routing works on (dmodk, ecmp, adaptive and spray: fat_tree; minimal,
// valiant, ugal, valiant_packet and ugal_packet: dragonfly; dor: torus); nullopt: any (shortest). make_router and the
// scenario's checks both ask this.
std::optional<TopologyKind> routing_family(RoutingKind kind);
// A family's natural routing: dmodk on fat-trees, minimal on dragonflies, dor on tori,
// shortest elsewhere.
RoutingKind default_routing(TopologyKind kind);

}  // namespace cs::topo
