// make_router(), the node-side legs shared by all routings, and the fat-tree routers
// (D-mod-K and ECMP), which compute routes from FatTreeLayout without a graph search.
#include "topology/routing.hpp"

#include <stdexcept>
#include <string>

#include "topology/routing_detail.hpp"

namespace cs::topo {
namespace detail {
namespace {

LinkId need_link(const Topology& t, VertexId a, VertexId b) {
  if (const auto l = t.find_link(a, b)) return *l;
  throw std::logic_error("topology has no link " + t.vertex(a).name + " -> " + t.vertex(b).name);
}

}  // namespace

void append_gpu_to_nic(const Topology& t, int rank, std::vector<LinkId>& out) {
  const int node = t.node_of_rank(rank);
  const VertexId gpu = t.gpu(rank);
  const VertexId nic = t.nic(node, t.nic_of_local_gpu(t.local_of_rank(rank)));
  if (const auto direct = t.find_link(gpu, nic)) {
    out.push_back(*direct);
    return;
  }
  const VertexId sw = t.node_switch(node);
  out.push_back(need_link(t, gpu, sw));
  out.push_back(need_link(t, sw, nic));
}

void append_nic_to_gpu(const Topology& t, int rank, std::vector<LinkId>& out) {
  const std::size_t first = out.size();
  append_gpu_to_nic(t, rank, out);
  // Reverse both the order and each link's direction.
  for (std::size_t i = first, j = out.size() - 1; i < j; ++i, --j) std::swap(out[i], out[j]);
  for (std::size_t i = first; i < out.size(); ++i) out[i] = reverse(out[i]);
}

void append_same_node(const Topology& t, int src, int dst, std::vector<LinkId>& out) {
  const VertexId sw = t.node_switch(t.node_of_rank(src));
  out.push_back(need_link(t, t.gpu(src), sw));
  out.push_back(need_link(t, sw, t.gpu(dst)));
}

void finish(const Topology& t, Route& r) {
  r.latency_s = 0.0;
  for (LinkId l : r.links) r.latency_s += t.link(l).latency_s;
}

namespace {

// SplitMix64 finalizer: a full-avalanche 64-bit mix, so neighbouring NICs and flow keys land
// on unrelated spines.
constexpr uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Both fat-tree routings: a route is fixed by (src rank, dst rank, spine); they differ only
// in how the spine is chosen.
class FatTreeRouter : public CachedRouter {
 public:
  FatTreeRouter(const Topology& t, bool hashed, uint64_t seed)
      : CachedRouter(t), f_(*t.fat_tree()), hashed_(hashed), seed_mix_(mix64(seed)) {}

  const Route& route(int src, int dst, uint64_t flow_key) override {
    check_ranks(src, dst);
    if (src == dst) return empty_;
    int spine = -1;  // -1: same node or same leaf, no spine
    if (t_.node_of_rank(src) != t_.node_of_rank(dst)) {
      const int gs = t_.nic_index_of_rank(src), gd = t_.nic_index_of_rank(dst);
      if (f_.nic_leaf[static_cast<std::size_t>(gs)] != f_.nic_leaf[static_cast<std::size_t>(gd)])
        spine = choose_spine(gs, gd, flow_key);
    }
    const uint64_t key = route_key(src, dst, spine < 0 ? 0 : spine);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    return cache_.emplace(key, compute(src, dst, spine)).first->second;
  }

 private:
  int choose_spine(int gs, int gd, uint64_t flow_key) const {
    const auto spines = static_cast<uint64_t>(f_.spines);
    if (!hashed_) {  // D-mod-K: the destination's port decides, whoever sends.
      const auto port = static_cast<uint64_t>(f_.nic_port[static_cast<std::size_t>(gd)]);
      return static_cast<int>(port % spines);
    }
    const uint64_t pair = (static_cast<uint64_t>(gs) << 32) | static_cast<uint64_t>(gd);
    return static_cast<int>(mix64(mix64(seed_mix_ ^ pair) ^ flow_key) % spines);
  }

  Route compute(int src, int dst, int spine) const {
    Route r;
    if (t_.node_of_rank(src) == t_.node_of_rank(dst)) {
      append_same_node(t_, src, dst, r.links);
    } else {
      const auto gs = static_cast<std::size_t>(t_.nic_index_of_rank(src));
      const auto gd = static_cast<std::size_t>(t_.nic_index_of_rank(dst));
      append_gpu_to_nic(t_, src, r.links);
      r.links.push_back(f_.nic_up[gs]);
      if (spine >= 0) {
        const auto S = static_cast<std::size_t>(f_.spines), s = static_cast<std::size_t>(spine);
        r.links.push_back(f_.leaf_up[static_cast<std::size_t>(f_.nic_leaf[gs]) * S + s]);
        r.links.push_back(reverse(f_.leaf_up[static_cast<std::size_t>(f_.nic_leaf[gd]) * S + s]));
      }
      r.links.push_back(reverse(f_.nic_up[gd]));
      append_nic_to_gpu(t_, dst, r.links);
    }
    finish(t_, r);
    return r;
  }

  const FatTreeLayout& f_;
  bool hashed_;
  uint64_t seed_mix_;
};

const char* routing_name(RoutingKind kind) {
  switch (kind) {
    case RoutingKind::dmodk: return "dmodk";
    case RoutingKind::ecmp: return "ecmp";
    case RoutingKind::shortest: return "shortest";
  }
  return "?";
}

const char* topology_name(TopologyKind kind) {
  switch (kind) {
    case TopologyKind::single_node: return "single_node";
    case TopologyKind::fat_tree: return "fat_tree";
    case TopologyKind::custom: return "custom";
  }
  return "?";
}

}  // namespace
}  // namespace detail

std::unique_ptr<Router> make_router(const Topology& topology, RoutingKind kind, uint64_t seed) {
  switch (kind) {
    case RoutingKind::dmodk:
    case RoutingKind::ecmp:
      if (!topology.fat_tree())
        throw std::invalid_argument(std::string("routing '") + detail::routing_name(kind) +
                                    "' needs a fat_tree topology, not " +
                                    detail::topology_name(topology.kind()) +
                                    "; use 'shortest'");
      return std::make_unique<detail::FatTreeRouter>(topology, kind == RoutingKind::ecmp, seed);
    case RoutingKind::shortest:
      return detail::make_shortest_router(topology);
  }
  throw std::invalid_argument("unknown routing kind");
}

}  // namespace cs::topo
