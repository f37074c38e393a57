#pragma once
// The placement domains of a cluster's nodes, read from the topology library's structure: the
// groups of nodes inside which a job's traffic stays off the oversubscribed or shared links.
//   fat_tree    the leaf switch of the node's first NIC: a leaf, or on a rail-optimized tree
//               the rail group (the nodes whose NIC j all share rail j's leaf);
//   dragonfly   the node's group (all-to-all local links inside, global links between);
//   torus       a ring along dimension 0 (the nodes differing only in their first coordinate);
//   custom      the fabric switch the node's first NIC is cabled to;
//   single_node, or nodes without NICs: one domain.
// Domains are numbered 0.. in the order of their first node. A 3-tier fat-tree's pods are not
// a level of their own: a job that spans leaves spans them, in a pod or not.
#include <vector>

#include "topology/topology.hpp"

namespace cs::jobs {

std::vector<int> node_domains(const topo::Topology& topology);

}  // namespace cs::jobs
