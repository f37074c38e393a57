// Shortest-path routing on any topology: Boost.Graph BFS over a filtered view of the graph.
#include <algorithm>
#include <memory>
#include <string>

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/pending/queue.hpp>

#include "topology/boost_graph.hpp"
#include "topology/routing_detail.hpp"

namespace cs::topo::detail {
namespace {

// Which vertices a route from src to dst may enter: fabric switches, the destination GPU, and
// the NICs and node switch of the two end nodes. Never another GPU (GPUs do not forward) and
// never another node's internals (they are not a fabric).
struct TransitFilter {
  const Topology* t = nullptr;
  VertexId dst_gpu = 0;
  int src_node = -1, dst_node = -1;

  bool operator()(Graph::vertex_descriptor v) const {
    const Vertex& x = t->vertex(static_cast<VertexId>(v));
    switch (x.kind) {
      case VertexKind::fabric_switch: return true;
      case VertexKind::gpu: return v == dst_gpu;
      default: return x.node == src_node || x.node == dst_node;
    }
  }
};

// Which links a route may cross: every link but those of failed cables (topology/failures.hpp),
// so a degraded fabric's shortest paths are recomputed over the live ones.
struct LiveLinks {
  const Topology* t = nullptr;
  const Graph* g = nullptr;
  bool operator()(Graph::edge_descriptor e) const { return !t->failed(boost::get(boost::edge_index, *g, e)); }
};

using Transit = boost::filtered_graph<Graph, LiveLinks, TransitFilter>;

struct Found {};  // thrown by the visitor to stop the search at the destination

// Records the link each vertex was discovered by (BFS tree = shortest paths; the first
// discovery wins, i.e. out-link order breaks ties) and every vertex it colours, so only
// those are reset afterwards.
class Recorder : public boost::default_bfs_visitor {
 public:
  Recorder(const Graph& g, LinkId* pred, std::vector<VertexId>* touched, VertexId target)
      : g_(&g), pred_(pred), touched_(touched), target_(target) {}

  void discover_vertex(Graph::vertex_descriptor v, const Transit&) const {
    touched_->push_back(static_cast<VertexId>(v));
  }
  void tree_edge(Graph::edge_descriptor e, const Transit& g) const {
    const auto v = boost::target(e, g);
    pred_[v] = boost::get(boost::edge_index, *g_, e);
    if (v == target_) throw Found{};
  }

 private:
  const Graph* g_;
  LinkId* pred_;
  std::vector<VertexId>* touched_;
  VertexId target_;
};

class ShortestRouter final : public CachedRouter {
 public:
  explicit ShortestRouter(const Topology& t) : CachedRouter(t) {}

  const Route& route(int src, int dst, uint64_t /*flow_key*/) override {
    check_ranks(src, dst);
    if (src == dst) return empty_;
    const uint64_t key = route_key(src, dst, 0);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    return cache_.emplace(key, compute(src, dst)).first->second;
  }

 private:
  Route compute(int src, int dst) {
    Route r;
    const int sn = t_.node_of_rank(src), dn = t_.node_of_rank(dst);
    if (sn == dn) {
      // Two hops through the node switch, or the mesh path: always a shortest path.
      append_same_node(t_, src, dst, r.links);
      finish(t_, r);
      return r;
    }
    const VertexId from = t_.gpu(src), to = t_.gpu(dst);
    if (color_.empty()) {
      // The graph and per-vertex scratch, made on the first search and reused (the scratch
      // reset sparsely).
      graph_ = boost_graph(t_);
      color_.assign(t_.num_vertices(), boost::white_color);
      pred_.assign(t_.num_vertices(), 0);
    }
    const Transit view(*graph_, LiveLinks{&t_, graph_.get()}, TransitFilter{&t_, to, sn, dn});
    boost::queue<Graph::vertex_descriptor> queue;
    touched_.clear();
    bool found = false;
    try {
      boost::breadth_first_visit(view, from, queue,
                                 Recorder(*graph_, pred_.data(), &touched_, to), color_.data());
    } catch (const Found&) {
      found = true;
    }
    for (VertexId v : touched_) color_[v] = boost::white_color;
    if (!found)
      throw RouteError("no route from " + t_.vertex(from).name + " to " + t_.vertex(to).name +
                       " (the fabric does not connect their nodes' NICs)");
    for (VertexId v = to; v != from; v = t_.link(pred_[v]).from) r.links.push_back(pred_[v]);
    std::reverse(r.links.begin(), r.links.end());
    finish(t_, r);
    return r;
  }

  std::unique_ptr<Graph> graph_;  // built with the scratch, on the first search
  std::vector<boost::default_color_type> color_;
  std::vector<LinkId> pred_;
  std::vector<VertexId> touched_;
};

}  // namespace

std::unique_ptr<Router> make_shortest_router(const Topology& t) {
  return std::make_unique<ShortestRouter>(t);
}

}  // namespace cs::topo::detail
