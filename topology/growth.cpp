// Growing a fabric: bill lines matched by item, switches by name, cables by their two ends'
// names (see topology/growth.hpp).
#include "topology/growth.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace cs::topo {
namespace {

// Fabric cables (NIC-switch and switch-switch) by the names of their two ends, sorted, with
// their multiplicity (parallel cables).
std::map<std::pair<std::string, std::string>, int64_t> fabric_cables(const Topology& t) {
  std::map<std::pair<std::string, std::string>, int64_t> out;
  for (LinkId l = 0; l < t.num_links(); l += 2) {
    const Link& link = t.link(l);
    if (link.kind != LinkKind::fabric) continue;
    std::string a = t.vertex(link.from).name, b = t.vertex(link.to).name;
    if (b < a) std::swap(a, b);
    ++out[{std::move(a), std::move(b)}];
  }
  return out;
}

std::set<std::string> switch_names(const Topology& t) {
  std::set<std::string> out;
  for (VertexId v = 0; v < t.num_vertices(); ++v)
    if (t.vertex(v).kind == VertexKind::fabric_switch) out.insert(t.vertex(v).name);
  return out;
}

}  // namespace

Growth grow(const Topology& from, const Bill& from_bill, const Topology& to, const Bill& to_bill) {
  Growth g;
  std::map<std::string, const CostLine*> installed;
  for (const CostLine& c : from_bill.lines) installed[c.item] = &c;
  for (const CostLine& c : to_bill.lines) {
    GrowthLine line;
    line.item = c.item;
    line.need = c.count;
    line.unit_usd = c.unit_usd;
    line.network = c.network;
    if (const auto it = installed.find(c.item); it != installed.end()) {
      line.have = it->second->count;
      installed.erase(it);
    }
    line.reused = std::min(line.have, line.need);
    line.bought = line.need - line.reused;
    line.surplus = line.have - line.reused;
    line.bought_usd = static_cast<double>(line.bought) * line.unit_usd;
    g.bought_usd += line.bought_usd;
    if (line.network) g.bought_network_usd += line.bought_usd;
    g.items.push_back(std::move(line));
  }
  for (const CostLine& c : from_bill.lines) {
    if (!installed.count(c.item)) continue;  // matched above
    GrowthLine line;
    line.item = c.item;
    line.have = line.surplus = c.count;
    line.unit_usd = c.unit_usd;
    line.network = c.network;
    g.items.push_back(std::move(line));
  }

  const std::set<std::string> before = switch_names(from), after = switch_names(to);
  for (const std::string& name : after) (before.count(name) ? g.switches_kept : g.switches_added) += 1;
  g.switches_surplus = static_cast<int64_t>(before.size()) - g.switches_kept;

  const auto old_cables = fabric_cables(from), new_cables = fabric_cables(to);
  int64_t installed_cables = 0, grown_cables = 0;
  for (const auto& [ends, n] : old_cables) {
    installed_cables += n;
    if (const auto it = new_cables.find(ends); it != new_cables.end()) g.cables_kept += std::min(n, it->second);
  }
  for (const auto& [ends, n] : new_cables) grown_cables += n;
  g.cables_unplugged = installed_cables - g.cables_kept;
  g.cables_laid = grown_cables - g.cables_kept;
  return g;
}

}  // namespace cs::topo
