#include "topology/topology.hpp"

#include <stdexcept>
#include <utility>

namespace cs::topo {

std::string_view link_kind_name(LinkKind kind) { return name_of(kLinkKindNames, kind); }

VertexId Topology::add_vertex(VertexKind kind, int node, int index, int tier, std::string name) {
  const auto id = static_cast<VertexId>(vertices_.size());
  // Insert the name first: a duplicate must leave the topology unchanged.
  auto [it, inserted] = by_name_.try_emplace(name, id);
  if (!inserted) throw std::invalid_argument("duplicate vertex name '" + name + "'");
  (void)it;
  vertices_.push_back(Vertex{kind, node, index, tier, std::move(name)});
  out_.emplace_back();
  if (kind == VertexKind::fabric_switch) ++fabric_switches_;
  return id;
}

LinkId Topology::add_cable(VertexId a, VertexId b, double bandwidth_Bps, double latency_s,
                           LinkKind kind) {
  if (a >= vertices_.size() || b >= vertices_.size())
    throw std::out_of_range("add_cable: no such vertex");
  if (a == b) throw std::invalid_argument("add_cable: a cable needs two distinct vertices");
  const auto ab = static_cast<LinkId>(links_.size());
  links_.push_back(Link{a, b, bandwidth_Bps, latency_s, kind});
  links_.push_back(Link{b, a, bandwidth_Bps, latency_s, kind});
  if (!failed_.empty()) failed_.resize(links_.size(), false);
  out_[a].push_back(ab);
  out_[b].push_back(ab + 1);
  return ab;
}

void Topology::fail_cable(LinkId l) {
  if (l >= links_.size()) throw std::out_of_range("fail_cable: no such link");
  if (failed_.empty()) failed_.assign(links_.size(), false);
  if (failed_[l]) return;
  failed_[l] = failed_[reverse(l)] = true;
  ++failed_cables_;
}

void Topology::reserve(std::size_t vertices, std::size_t cables) {
  vertices_.reserve(vertices);
  out_.reserve(vertices);
  links_.reserve(2 * cables);
  by_name_.reserve(vertices);
  // adjacency_list has no reserve of its own; its per-vertex edge lists stay small.
}

std::optional<VertexId> Topology::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

std::optional<LinkId> Topology::find_link(VertexId from, VertexId to) const {
  if (from >= vertices_.size()) return std::nullopt;
  for (LinkId l : out_[from])
    if (links_[l].to == to) return l;
  return std::nullopt;
}

void Topology::set_placement(TopologyKind kind, int nodes, int gpus_per_node, int nics_per_node,
                             std::vector<VertexId> gpus, std::vector<VertexId> nics,
                             std::vector<VertexId> node_switches) {
  if (gpus.size() != static_cast<std::size_t>(nodes) * static_cast<std::size_t>(gpus_per_node) ||
      nics.size() != static_cast<std::size_t>(nodes) * static_cast<std::size_t>(nics_per_node) ||
      (node_switches.size() != static_cast<std::size_t>(nodes) && !node_switches.empty()))
    throw std::invalid_argument("set_placement: vertex lists do not match the counts");
  kind_ = kind;
  nodes_ = nodes;
  gpus_per_node_ = gpus_per_node;
  nics_per_node_ = nics_per_node;
  gpu_ = std::move(gpus);
  nic_ = std::move(nics);
  node_switch_ = std::move(node_switches);
}

std::vector<VertexId> fabric_nics(const Topology& t) {
  std::vector<VertexId> nics;
  nics.reserve(static_cast<std::size_t>(t.nodes()) * static_cast<std::size_t>(t.nics_per_node()));
  for (int n = 0; n < t.nodes(); ++n)
    for (int j = 0; j < t.nics_per_node(); ++j) nics.push_back(t.nic(n, j));
  return nics;
}

}  // namespace cs::topo
