#include "sim/jobs/topology_domains.hpp"

#include <unordered_map>

#include "topology/direct_layouts.hpp"

namespace cs::jobs {
namespace {

// Any labelling of the nodes -> 0, 1, ... in the order each label first appears.
std::vector<int> dense(const std::vector<long long>& labels) {
  std::unordered_map<long long, int> seen;
  std::vector<int> out;
  out.reserve(labels.size());
  for (const long long l : labels) out.push_back(seen.emplace(l, static_cast<int>(seen.size())).first->second);
  return out;
}

long long first_switch(const topo::Topology& t, int node) {
  const topo::VertexId nic = t.nic(node, 0);
  for (const topo::LinkId l : t.out_links(nic)) {
    const topo::VertexId v = t.link(l).to;
    if (t.vertex(v).kind == topo::VertexKind::fabric_switch) return v;
  }
  return -1;
}

}  // namespace

std::vector<int> node_domains(const topo::Topology& t) {
  const int nodes = t.nodes();
  std::vector<long long> label(static_cast<std::size_t>(nodes), 0);
  if (t.nics_per_node() == 0) return dense(label);
  for (int n = 0; n < nodes; ++n) {
    long long& l = label[static_cast<std::size_t>(n)];
    switch (t.kind()) {
      case topo::TopologyKind::fat_tree:
        l = t.fat_tree()->nic_leaf[static_cast<std::size_t>(n) * static_cast<std::size_t>(t.nics_per_node())];
        break;
      case topo::TopologyKind::dragonfly: l = t.dragonfly()->group_of_node(n); break;
      case topo::TopologyKind::torus: l = n / t.torus()->dims.front(); break;
      case topo::TopologyKind::custom: l = first_switch(t, n); break;
      case topo::TopologyKind::single_node: l = 0; break;
    }
  }
  return dense(label);
}

}  // namespace cs::jobs
