#pragma once
// Where a direct fabric's switch-to-switch links are narrower than the NICs that feed them:
// warnings for reports and `compare`, beside the all-to-all bound (uniform_traffic.hpp), which
// says how much that costs uniform traffic.
//   - Dragonfly: a router's local links to the other routers of its group, taken together
//     ((a - 1) bundles of local_parallel cables), against what the NICs on that router inject.
//     Traffic that leaves a router for its group, or for another group through another
//     router's global cables, crosses them; below the injection the NICs cannot be filled.
//   - Torus: one bundle toward a neighbour (cables per bundle x link bandwidth, the narrowest
//     dimension of more than one position) against what the NICs at a position inject: under
//     dimension order, traffic to a neighbour's side of the ring takes that one bundle.
// Fat-trees (their ratios are in the report), custom fabrics and single nodes: none.
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace cs::topo {

// One sentence per finding, each naming the numbers (GB/s, one direction) and the keys to
// change; empty when none.
std::vector<std::string> narrow_link_warnings(const Topology& topology);

}  // namespace cs::topo
