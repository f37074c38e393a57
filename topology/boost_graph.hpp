#pragma once
// Internal to topology/ (and its tests): a Topology as a Boost.Graph, for the searches that
// Boost does well (shortest routing's BFS). Public headers do not expose Boost.Graph; the
// graph is built on demand from the topology's out-links.
#include <memory>

#include <boost/graph/adjacency_list.hpp>

#include "topology/topology.hpp"

namespace cs::topo::detail {

// Directed graph whose edge property is the LinkId. Vertex ids equal the topology's.
using Graph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
                          boost::property<boost::edge_index_t, LinkId>>;

// The topology's vertices and links, each vertex's out-edges in out_links(v) order, so a Boost
// search breaks ties like a scan of out_links. (Held by pointer: Boost's adjacency_list has
// no move, and its copy walks every edge.)
std::unique_ptr<Graph> boost_graph(const Topology& topology);

}  // namespace cs::topo::detail
