#pragma once
// Structure of the direct networks (a router or switch next to every node), kept by their
// builders so that routers compute routes arithmetically and reports can describe them.
//
// Dragonfly (Kim, Dally, Scott, Abts, "Technology-driven, highly-scalable dragonfly topology",
// ISCA 2008). g groups of a routers; the routers of a group are joined all-to-all by local
// cables (`local_parallel` cables per pair, a bundle); each router has h global ports; a*p
// nodes per group, filling groups in order (node i in group floor(i / (a*p))). NIC
// placement (one cable per NIC; global router index = group * a + router in group):
//   - by default every NIC of node i goes to router floor(i / p);
//   - rail-optimized, NIC j of the q-th node of a group goes to router (q * nics + j) mod a of
//     the group: NIC j on router j when nics = a, and always p * nics NICs per router of a
//     full group, a node's NICs on distinct routers while nics <= a.
// A partial dragonfly (fewer than a*p*g nodes) still has all g*a routers and all their cables.
// The cables of a bundle are added one after the other, so copy c of a bundle whose first
// link is l is the link l + 2c (and its reverse reverse(l) + 2c).
//
// Global ports: port q = r*h + k of a group is global port k of router r; q in [0, a*h).
// With g groups each group needs g-1 "slots" (one per other group); slot s of group G leads
// to group target(G, s). When a*h > g-1 the ports are used in blocks of g-1: port q is copy
// c = q / (g-1) of slot s = q % (g-1), and copy c of the slot G -> T is cabled to copy c of
// the slot T -> G, so every pair of groups has m = floor(a*h / (g-1)) parallel global cables
// and a*h - m*(g-1) ports per group stay unused. The arrangements (Hastings et al.,
// "Comparing global link arrangements for Dragonfly networks", IEEE Cluster 2015; Camarero,
// Vallejo, Beivide, ACM TACO 11(4), 2014, whose "palm tree" is the relative one with offsets
// counted downwards):
//   absolute:  slot s leads to group s, skipping G itself (s < G ? s : s + 1);
//   relative:  slot s leads to group (G + 1 + s) mod g;
//   circulant: slots alternate +/- offsets: slot 2k -> (G + k + 1) mod g,
//              slot 2k+1 -> (G - k - 1) mod g.
//
// Torus: one switch per position of a dims[0] x dims[1] (x dims[2]) grid, node i at position
// i (dimension 0 varies fastest: i = x0 + d0 * (x1 + d1 * x2)); every NIC of node i has a
// cable to the switch at position i. Switches are joined to their +1 neighbour in every
// dimension with wrap-around by a bundle of parallel[d] cables (added one after the other,
// as the dragonfly's): a dimension of size >= 3 is a ring of d bundles, size 2 has a single
// bundle between its two positions, size 1 none.
#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "topology/params.hpp"
#include "topology/topology.hpp"

namespace cs::topo {

struct DragonflyLayout {
  int groups = 0;                   // g
  int routers_per_group = 0;        // a
  int nodes_per_router = 0;         // p
  int global_links_per_router = 0;  // h
  GlobalArrangement arrangement = GlobalArrangement::absolute;
  int links_per_group_pair = 0;     // m parallel global cables per pair (0 when g = 1)
  int unused_global_ports_per_group = 0;
  int local_parallel = 1;           // cables per local bundle (router pair of a group)
  bool rail_optimized = false;      // NIC placement, see above
  int nics_per_node = 1;
  std::vector<VertexId> router;     // global router index -> vertex (vertex index = that index)
  // First directed local link (copy 0 of the bundle) of router R = G*a + r to router
  // r2 != r of its group: local[R * (a - 1) + (r2 < r ? r2 : r2 - 1)].
  std::vector<LinkId> local;
  // Directed global link copy c from group G to group T != G:
  // global[(G * (g - 1) + (T < G ? T : T - 1)) * m + c]; both directions are listed.
  std::vector<LinkId> global;
  std::vector<LinkId> nic_up;       // global NIC index -> link NIC -> router

  int group_of_router(int router_index) const { return router_index / routers_per_group; }
  int group_of_node(int node) const { return node / (routers_per_group * nodes_per_router); }
  // The router of global NIC g = node * nics_per_node + j.
  int router_of_nic(int64_t g) const {
    const auto node = static_cast<int>(g / nics_per_node), j = static_cast<int>(g % nics_per_node);
    if (!rail_optimized) return node / nodes_per_router;
    const int q = node % (routers_per_group * nodes_per_router);
    return group_of_node(node) * routers_per_group +
           static_cast<int>((int64_t{q} * nics_per_node + j) % routers_per_group);
  }
  // Copy `copy` (< local_parallel) of the local bundle from router_index to router
  // to_router_in_group of its group.
  // (Inline: routers read it for every hop of every pair they weigh.)
  LinkId local_link(int router_index, int to_router_in_group, int copy = 0) const {
    const int r = router_index % routers_per_group;
    const int slot = to_router_in_group < r ? to_router_in_group : to_router_in_group - 1;
    return local[static_cast<std::size_t>(router_index) * static_cast<std::size_t>(routers_per_group - 1) +
                 static_cast<std::size_t>(slot)] +
           2 * static_cast<LinkId>(copy);
  }
  LinkId global_link(int from_group, int to_group, int copy) const {
    return global[global_index(from_group, to_group, copy)];
  }
  std::size_t global_index(int from_group, int to_group, int copy) const {
    const int other = to_group < from_group ? to_group : to_group - 1;
    const std::size_t pair = static_cast<std::size_t>(from_group) * static_cast<std::size_t>(groups - 1) +
                             static_cast<std::size_t>(other);
    return pair * static_cast<std::size_t>(links_per_group_pair) + static_cast<std::size_t>(copy);
  }
  // Number of global cables (each joins two groups).
  int64_t global_cables() const {
    return int64_t{groups} * (groups - 1) / 2 * links_per_group_pair;
  }
};

// Group reached from group `from` through slot `slot` (0 <= slot < g-1) under an arrangement.
int dragonfly_slot_target(GlobalArrangement arrangement, int groups, int from, int slot);
// The slot of group `from` that leads to group `to` (the inverse of dragonfly_slot_target).
int dragonfly_slot_of(GlobalArrangement arrangement, int groups, int from, int to);
std::string_view arrangement_name(GlobalArrangement arrangement);  // "absolute", ...

struct TorusLayout {
  static constexpr LinkId kNone = ~LinkId{0};
  std::vector<int> dims;            // 2 or 3 sizes, each >= 1
  std::vector<int> parallel;        // cables per bundle along each dimension, each >= 1
  std::vector<VertexId> sw;         // position -> switch vertex
  // First link (copy 0 of the bundle) from position x to its +1 neighbour along dimension d
  // (wrapping), at plus[x * dims.size() + d]; kNone when dims[d] == 1. For size 2 the +1
  // neighbour of position 1 is 0 over the same cables (the reverse links).
  std::vector<LinkId> plus;
  std::vector<LinkId> nic_up;       // global NIC index -> link NIC -> switch
  // Several tori joined by a data-center network (a TPU multislice): `slices` copies of the
  // torus, slice k holding positions k * slice_positions() onwards (node i at position i), and
  // one non-blocking DCN switch cabled to every position's switch (dcn_up[x]: switch -> DCN).
  // slices == 1: one torus, no DCN switch, dcn_up empty.
  int slices = 1;
  VertexId dcn = 0;
  std::vector<LinkId> dcn_up;

  // Positions of one slice (the product of dims).
  int slice_positions() const {
    int n = 1;
    for (int d : dims) n *= d;
    return n;
  }
  // Positions of every slice.
  int positions() const { return slice_positions() * slices; }
  int slice_of(int position) const { return position / slice_positions(); }
  // Coordinate of a position along dimension d (inside its slice).
  int coord(int position, std::size_t d) const;
  // Position one step from `position` along d (+1 or -1, wrapping inside its slice).
  int step(int position, std::size_t d, int direction) const;
  // Switch-to-switch hop diameter: sum over dimensions of floor(d / 2) inside a slice; 2
  // (switch, DCN, switch) between slices.
  int diameter_hops() const {
    int s = 0;
    for (int d : dims) s += d / 2;
    return slices > 1 ? std::max(s, 2) : s;
  }
};

// Ports a dragonfly router's design cables: p x NICs + (a - 1) x local bundle + h (global
// ports left unused by the arrangement included: the router has them).
int dragonfly_router_ports(const TopologyParams& params);
// Ports a torus switch's design cables: NICs + per dimension 2 bundles (size >= 3), 1 (size
// 2) or none.
int torus_switch_ports(const TopologyParams& params);

// Parameter checks of the builders, without building: throw BuildError naming the key
// ("groups", "dims.1", "nodes", ...). Also run by build_topology.
void check_dragonfly(const TopologyParams& params);
void check_torus(const TopologyParams& params);

}  // namespace cs::topo
