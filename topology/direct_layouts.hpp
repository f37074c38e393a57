#pragma once
// Structure of the direct networks (a router or switch next to every node), kept by their
// builders so that routers compute routes arithmetically and reports can describe them.
//
// Dragonfly (Kim, Dally, Scott, Abts, "Technology-driven, highly-scalable dragonfly topology",
// ISCA 2008). g groups of a routers; the routers of a group are joined all-to-all by local
// cables; each router has h global ports; p nodes per router. Node i attaches to router
// floor(i / p) (global router index = group * a + router in group), and every NIC of a node
// goes to that same router (one cable per NIC: a node's NICs do not spread over routers).
// Nodes fill groups in order; a partial dragonfly (fewer than a*p*g nodes) still has all
// g*a routers and all their cables.
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
// dimension with wrap-around: a dimension of size >= 3 is a ring of d cables, size 2 has a
// single cable between its two positions, size 1 none.
#include <cstdint>
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
  std::vector<VertexId> router;     // global router index -> vertex (vertex index = that index)
  // Directed local link of router R = G*a + r to router r2 != r of its group:
  // local[R * (a - 1) + (r2 < r ? r2 : r2 - 1)].
  std::vector<LinkId> local;
  // Directed global link copy c from group G to group T != G:
  // global[(G * (g - 1) + (T < G ? T : T - 1)) * m + c]; both directions are listed.
  std::vector<LinkId> global;
  std::vector<LinkId> nic_up;       // global NIC index -> link NIC -> router

  int group_of_router(int router_index) const { return router_index / routers_per_group; }
  int router_of_node(int node) const { return node / nodes_per_router; }
  LinkId local_link(int router_index, int to_router_in_group) const;
  LinkId global_link(int from_group, int to_group, int copy) const {
    return global[global_index(from_group, to_group, copy)];
  }
  std::size_t global_index(int from_group, int to_group, int copy) const;
  // Number of global cables (each joins two groups).
  int64_t global_cables() const {
    return int64_t{groups} * (groups - 1) / 2 * links_per_group_pair;
  }
};

// Group reached from group `from` through slot `slot` (0 <= slot < g-1) under an arrangement.
int dragonfly_slot_target(GlobalArrangement arrangement, int groups, int from, int slot);
// The slot of group `from` that leads to group `to` (the inverse of dragonfly_slot_target).
int dragonfly_slot_of(GlobalArrangement arrangement, int groups, int from, int to);
const char* arrangement_name(GlobalArrangement arrangement);  // "absolute", ...

struct TorusLayout {
  static constexpr LinkId kNone = ~LinkId{0};
  std::vector<int> dims;            // 2 or 3 sizes, each >= 1
  std::vector<VertexId> sw;         // position -> switch vertex
  // Link from position x to its +1 neighbour along dimension d (wrapping), at
  // plus[x * dims.size() + d]; kNone when dims[d] == 1. For size 2 the +1 neighbour of
  // position 1 is 0 over the same cable (the reverse link).
  std::vector<LinkId> plus;
  std::vector<LinkId> nic_up;       // global NIC index -> link NIC -> switch

  int positions() const {
    int n = 1;
    for (int d : dims) n *= d;
    return n;
  }
  // Coordinate of a position along dimension d.
  int coord(int position, std::size_t d) const;
  // Position one step from `position` along d (+1 or -1, wrapping).
  int step(int position, std::size_t d, int direction) const;
  // Switch-to-switch hop diameter: sum over dimensions of floor(d / 2).
  int diameter_hops() const {
    int s = 0;
    for (int d : dims) s += d / 2;
    return s;
  }
};

// Parameter checks of the builders, without building: throw BuildError naming the key
// ("groups", "dims.1", "nodes", ...). Also run by build_topology.
void check_dragonfly(const TopologyParams& params);
void check_torus(const TopologyParams& params);

}  // namespace cs::topo
