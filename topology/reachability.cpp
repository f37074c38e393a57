#include "topology/reachability.hpp"

#include <algorithm>
#include <numeric>

namespace cs::topo {

NodeReachability::NodeReachability(const Topology& t) {
  // Union-find over fabric switches joined by a cable.
  std::vector<uint32_t> parent(t.num_vertices());
  std::iota(parent.begin(), parent.end(), 0u);
  auto find = [&](uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const Link& l : t.links())
    if (t.vertex(l.from).kind == VertexKind::fabric_switch && t.vertex(l.to).kind == VertexKind::fabric_switch)
      parent[find(l.from)] = find(l.to);
  components_.resize(static_cast<std::size_t>(t.nodes()));
  direct_.resize(static_cast<std::size_t>(t.nodes()));
  for (const Link& l : t.links()) {
    const Vertex& from = t.vertex(l.from);
    const Vertex& to = t.vertex(l.to);
    if (from.kind != VertexKind::nic) continue;
    const auto node = static_cast<std::size_t>(from.node);
    if (to.kind == VertexKind::fabric_switch) components_[node].push_back(find(l.to));
    else if (to.kind == VertexKind::nic && to.node != from.node) direct_[node].push_back(to.node);
  }
  for (auto& v : components_) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  for (auto& v : direct_) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
}

bool NodeReachability::connected(int a, int b) const {
  if (a == b) return true;
  const auto& ca = components_[static_cast<std::size_t>(a)];
  const auto& cb = components_[static_cast<std::size_t>(b)];
  for (std::size_t i = 0, j = 0; i < ca.size() && j < cb.size();) {
    if (ca[i] == cb[j]) return true;
    ca[i] < cb[j] ? ++i : ++j;
  }
  const auto& d = direct_[static_cast<std::size_t>(a)];
  return std::binary_search(d.begin(), d.end(), b);
}

bool NodeReachability::all_connected(const std::vector<int>& nodes, int* a, int* b) const {
  if (nodes.size() < 2) return true;
  // Common case: one switch component every node reaches (then every pair meets in it).
  std::vector<uint32_t> common = components_[static_cast<std::size_t>(nodes.front())];
  for (std::size_t i = 1; i < nodes.size() && !common.empty(); ++i) {
    const auto& c = components_[static_cast<std::size_t>(nodes[i])];
    std::vector<uint32_t> both;
    std::set_intersection(common.begin(), common.end(), c.begin(), c.end(), std::back_inserter(both));
    common.swap(both);
  }
  if (!common.empty()) return true;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (std::size_t j = i + 1; j < nodes.size(); ++j)
      if (!connected(nodes[i], nodes[j])) {
        if (a) *a = nodes[i];
        if (b) *b = nodes[j];
        return false;
      }
  return true;
}

}  // namespace cs::topo
