// Custom fabrics: the usual nodes, plus named switches and cables given by the user.
#include <string>

#include "topology/build_detail.hpp"

namespace cs::topo::detail {
namespace {

constexpr std::size_t kMaxCustomSwitches = std::size_t{1} << 24;
constexpr std::size_t kMaxCustomLinks = std::size_t{1} << 26;

VertexId resolve_endpoint(const Topology& t, const std::string& name, const std::string& param) {
  const auto v = t.find(name);
  const std::string hint = t.nics_per_node() == 1
                               ? " (expected a name from 'switches' or a NIC such as n0)"
                               : " (expected a name from 'switches' or a NIC such as n0.0)";
  if (!v) fail(param, "unknown vertex '" + name + "'" + hint);
  const VertexKind kind = t.vertex(*v).kind;
  if (kind != VertexKind::fabric_switch && kind != VertexKind::nic)
    fail(param, "'" + name + "' is inside a node; links join switches and NICs" + hint);
  return *v;
}

}  // namespace

void build_custom(Topology& t, const TopologyParams& p) {
  if (p.switches.size() > kMaxCustomSwitches)
    fail("switches", "at most " + std::to_string(kMaxCustomSwitches) + " switches");
  if (p.links.size() > kMaxCustomLinks)
    fail("links", "at most " + std::to_string(kMaxCustomLinks) + " links");
  // Check link parameters before building anything.
  for (std::size_t i = 0; i < p.links.size(); ++i) {
    const std::string key = "links." + std::to_string(i);
    check_bandwidth(p.links[i].bandwidth_Bps, key + ".bandwidth");
    check_latency(p.links[i].latency_s, key + ".latency");
    if (p.links[i].a == p.links[i].b)
      fail(key + ".b", "a link joins two different vertices, got '" + p.links[i].b + "' twice");
  }
  t.reserve(static_cast<std::size_t>(p.nodes * node_vertex_count(p.node)) + p.switches.size(),
            static_cast<std::size_t>(p.nodes * node_cable_count(p.node)) + p.links.size());
  add_nodes(t, TopologyKind::custom, p.node, p.nodes);

  for (std::size_t i = 0; i < p.switches.size(); ++i) {
    const std::string& name = p.switches[i];
    const std::string key = "switches." + std::to_string(i);
    if (name.empty()) fail(key, "a switch needs a non-empty name");
    if (const auto clash = t.find(name)) {
      if (t.vertex(*clash).kind == VertexKind::fabric_switch)
        fail(key, "duplicate switch name '" + name + "'");
      fail(key, "switch name '" + name + "' clashes with a node vertex of the same name");
    }
    t.add_vertex(VertexKind::fabric_switch, -1, static_cast<int>(i), 1, name);
  }

  for (std::size_t i = 0; i < p.links.size(); ++i) {
    const CustomLink& l = p.links[i];
    const std::string key = "links." + std::to_string(i);
    const VertexId a = resolve_endpoint(t, l.a, key + ".a");
    const VertexId b = resolve_endpoint(t, l.b, key + ".b");
    t.add_cable(a, b, l.bandwidth_Bps, l.latency_s, LinkKind::fabric);
  }
}

}  // namespace cs::topo::detail
