#include "topology/boost_graph.hpp"

namespace cs::topo::detail {

std::unique_ptr<Graph> boost_graph(const Topology& t) {
  auto g = std::make_unique<Graph>(t.num_vertices());
  // vecS out-edge lists keep insertion order: adding each vertex's out-links in out_links
  // order gives Boost's searches the ties a scan of out_links would break.
  for (VertexId v = 0; v < t.num_vertices(); ++v)
    for (const LinkId l : t.out_links(v)) boost::add_edge(v, t.link(l).to, l, *g);
  return g;
}

}  // namespace cs::topo::detail
