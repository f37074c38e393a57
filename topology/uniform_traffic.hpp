#pragma once
// The uniform-traffic (all-to-all) throughput bound of a fabric: the largest rate r (bytes/s)
// at which every GPU can send to all GPUs at once, r / N to each (as a direct all-to-all of S
// per GPU does, S / r seconds: r is the all-to-all's algbw), before some set of fabric links
// is full. Beside the bisection (topology/bisection.hpp), which asks what crosses one cut,
// this asks what uniform traffic needs of every cut the family's structure has: an
// oversubscribed tier above rail leaves, which a bisection between node halves never
// separates, shows here.
//
// Assumed: traffic inside a node stays on the node fabric (NVLink or PCIe, not counted);
// each GPU uses its affine NIC (no PXN); routing spreads load ideally over the links a cut
// offers (the bound is what no routing can beat on these cuts; a real routing may reach less).
//   - NICs: each carries the cross-node traffic of its GPUs.
//   - Fat-tree: each group of switches (a leaf, a pod, ...) below the top sends what its GPUs
//     send to GPUs outside it through its up-links.
//   - Dragonfly, minimal routing: each pair of groups exchanges R_a R_b r / N over its m
//     global cables; a group's local links, taken together, carry one hop per pair of its
//     routers' GPUs (GPUs of one node aside) and 1 - 1/a hop per flow leaving or entering it.
//   - Torus: dimension-order routing over shortest ways; a dimension of L positions carries
//     N r_node E[distance_L] over its directed channels (N x 2 bundles, N x 1 when L = 2),
//     r_node = GPUs per node x r, E[distance_L] = mean ring distance to a uniform position.
//   - Custom and single node: the NICs only.
// A degraded fabric (topology/failures.hpp) counts live cables only: a fat-tree group's live
// up-links; a dragonfly group pair's live global cables, where a pair has none left its
// traffic crossing two global hops spread over the g - 2 other groups, and the least live
// local capacity of any group; a torus dimension's live cables.
#include <string>

#include "topology/topology.hpp"

namespace cs::topo {

// One line each on what the two figures assume, for reports.
inline constexpr const char* kBisectionAssumes =
    "bisection: the least bandwidth (one direction) between two halves of the nodes, over the candidate splits; "
    "traffic between halves only, routed ideally";
inline constexpr const char* kUniformTrafficAssumes =
    "all-to-all bound: every GPU sends to every GPU at once at the same rate (its algbw); intra-node traffic "
    "on the node fabric, each GPU through its own NIC (no PXN), ideal spreading over each cut's links "
    "(dragonfly: minimal routing, each group pair's global cables and a group's local links together; torus: "
    "dimension order)";

struct UniformTrafficBound {
  double per_gpu_Bps = 0;  // r: each GPU's send rate (all-to-all algbw), 0 with < 2 nodes
  std::string limit = "none";  // what binds: "nic", "leaf up-links", "tier 2 up-links",
                           // "global cables", "torus dimension 0", ... ("none": one node)
};

UniformTrafficBound uniform_traffic_bound(const Topology& topology);

}  // namespace cs::topo
