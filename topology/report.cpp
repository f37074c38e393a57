// The topology report: counts, cables, diameter, bisection, bill (see topology/report.hpp).
#include "topology/report.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <deque>
#include <limits>
#include <numeric>
#include <random>

#include <boost/graph/push_relabel_max_flow.hpp>

#include "topology/direct_layouts.hpp"

namespace cs::topo {
namespace {

std::string tier_name(const Topology& t, const Vertex& v) {
  switch (t.kind()) {
    case TopologyKind::fat_tree:
      if (v.tier == 1) return "leaf";
      if (v.tier == 2) return "spine";
      if (v.tier == 3) return "core";
      return "tier" + std::to_string(v.tier);
    case TopologyKind::dragonfly: return "router";
    default: return "switch";
  }
}

std::string gbps_name(double gbps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%gGbps", gbps);
  return buf;
}

double class_key(const PriceClasses& c, double bandwidth_Bps) {
  const double gbps = bandwidth_Bps * 8 / 1e9;
  auto it = c.by_gbps.lower_bound(gbps * (1 - 1e-9));
  if (it == c.by_gbps.end()) it = std::prev(c.by_gbps.end());
  return it->first;
}

void add_count(Counts& counts, const std::string& name, int64_t n) {
  for (auto& [k, v] : counts)
    if (k == name) {
      v += n;
      return;
    }
  counts.emplace_back(name, n);
}

bool is_switch(const Vertex& v) { return v.kind == VertexKind::fabric_switch; }

void bill_item(TopologyReport& r, const std::string& item, const PriceItem& p, int64_t count) {
  const auto n = static_cast<double>(count);
  if (count > 0) r.bill.push_back({item, count, p.usd, p.watts, p.usd * n, p.watts * n, p.source});
}

// One bill line per speed class (keys of `classes`) with its count.
void bill_classes(TopologyReport& r, const std::string& item, const PriceClasses& classes,
                  const std::map<double, int64_t>& by_key) {
  for (const auto& [key, count] : by_key)
    bill_item(r, item + "_" + gbps_name(key), classes.by_gbps.at(key), count);
}

// Cables, links by kind, switch ports and the bill.
void count_and_price(const Topology& t, const TopologyParams& params, const PriceTable& prices,
                     TopologyReport& r) {
  std::map<double, int64_t> transceivers, ports;
  std::vector<int64_t> degree(t.num_vertices(), 0);
  std::vector<double> fastest(t.num_vertices(), 0);
  const DragonflyLayout* df = t.dragonfly();
  for (LinkId l = 0; l < t.num_links(); l += 2) {
    const Link& link = t.link(l);
    const Vertex &a = t.vertex(link.from), &b = t.vertex(link.to);
    ++r.links;
    if (link.kind == LinkKind::node_fabric) { add_count(r.links_by_kind, "node_fabric", 1); continue; }
    if (link.kind == LinkKind::pcie) { add_count(r.links_by_kind, "pcie", 1); continue; }
    for (VertexId v : {link.from, link.to}) {
      ++degree[v];
      fastest[v] = std::max(fastest[v], link.bandwidth_Bps);
    }
    if (is_switch(a) && is_switch(b)) {
      add_count(r.links_by_kind, "switch_switch", 1);
      ++r.optical_cables;
      r.transceivers += 2;
      if (!prices.transceiver.by_gbps.empty())
        transceivers[class_key(prices.transceiver, link.bandwidth_Bps)] += 2;
      if (df) {
        const bool local = a.index / df->routers_per_group == b.index / df->routers_per_group;
        add_count(r.links_by_kind, local ? "local" : "global", 1);
      } else if (t.kind() == TopologyKind::fat_tree) {
        const Vertex& low = a.tier < b.tier ? a : b;
        const Vertex& high = a.tier < b.tier ? b : a;
        add_count(r.links_by_kind, tier_name(t, low) + "_" + tier_name(t, high), 1);
      }
    } else {
      add_count(r.links_by_kind, is_switch(a) || is_switch(b) ? "nic_switch" : "nic_nic", 1);
      ++r.copper_cables;
    }
  }
  for (VertexId v = 0; v < t.num_vertices(); ++v) {
    if (!is_switch(t.vertex(v))) continue;
    const int64_t n = t.kind() == TopologyKind::fat_tree ? params.switch_radix : degree[v];
    r.switch_ports += n;
    if (!prices.switch_port.by_gbps.empty() && n > 0)
      ports[class_key(prices.switch_port, fastest[v])] += n;
  }
  r.cable_rule =
      "NIC-to-switch (and NIC-to-NIC) cables are copper (DAC, same rack); switch-to-switch "
      "cables are optical with one transceiver per end; node-internal links are not cables "
      "(priced with the node); switch ports: " +
      std::string(t.kind() == TopologyKind::fat_tree ? "switch_radix per switch"
                                                     : "one per attached cable");

  bill_item(r, "gpu_node", prices.gpu_node, r.nodes);
  if (r.nics > 0 && !prices.nic.by_gbps.empty())
    bill_classes(r, "nic", prices.nic, {{class_key(prices.nic, params.node.nic_bandwidth_Bps),
                                         r.nics}});
  bill_classes(r, "switch_port", prices.switch_port, ports);
  bill_classes(r, "transceiver", prices.transceiver, transceivers);
  bill_item(r, "copper_cable", prices.copper_cable, r.copper_cables);
  bill_item(r, "optical_cable", prices.optical_cable, r.optical_cables);
  for (const CostLine& line : r.bill) {
    r.cost_usd += line.usd;
    r.power_w += line.watts;
  }
}

// NICs on the fabric, in global order.
std::vector<VertexId> all_nics(const Topology& t) {
  std::vector<VertexId> nics;
  nics.reserve(static_cast<std::size_t>(t.nodes()) * static_cast<std::size_t>(t.nics_per_node()));
  for (int n = 0; n < t.nodes(); ++n)
    for (int j = 0; j < t.nics_per_node(); ++j) nics.push_back(t.nic(n, j));
  return nics;
}

double nic_cable_bandwidth(const Topology& t) {
  double sum = 0;
  for (VertexId v : all_nics(t))
    for (LinkId l : t.out_links(v))
      if (t.link(l).kind == LinkKind::fabric) sum += t.link(l).bandwidth_Bps;
  return sum;
}

}  // namespace

const PriceItem& PriceClasses::lookup(double bandwidth_Bps) const {
  return by_gbps.at(class_key(*this, bandwidth_Bps));
}

std::optional<int> closed_form_diameter(const Topology& t) {
  const int64_t nics = int64_t{t.nodes()} * t.nics_per_node();
  if (nics <= 1) return 0;
  if (const FatTreeLayout* f = t.fat_tree()) return 2 * f->tiers;
  if (const DragonflyLayout* d = t.dragonfly()) {
    // Kim et al.: local, global, local between routers, plus the two NIC cables.
    const int64_t routers = (t.nodes() + d->nodes_per_router - 1) / d->nodes_per_router;
    const int64_t groups = (routers + d->routers_per_group - 1) / d->routers_per_group;
    if (groups > 1) return d->routers_per_group > 1 ? 5 : 3;
    return routers > 1 ? 3 : 2;
  }
  if (const TorusLayout* tl = t.torus()) return 2 + tl->diameter_hops();
  return std::nullopt;
}

int bfs_diameter(const Topology& t, const std::vector<VertexId>& sources_in) {
  const std::vector<VertexId> sources = sources_in.empty() ? all_nics(t) : sources_in;
  if (sources.empty()) return 0;
  std::vector<int> dist(t.num_vertices());
  std::deque<VertexId> queue;
  int diameter = 0;
  for (VertexId s : sources) {
    std::fill(dist.begin(), dist.end(), -1);
    dist[s] = 0;
    queue.assign(1, s);
    while (!queue.empty()) {
      const VertexId v = queue.front();
      queue.pop_front();
      if (t.vertex(v).kind == VertexKind::nic) diameter = std::max(diameter, dist[v]);
      for (LinkId l : t.out_links(v)) {
        const Link& link = t.link(l);
        if (link.kind != LinkKind::fabric || dist[link.to] >= 0) continue;
        dist[link.to] = dist[v] + 1;
        queue.push_back(link.to);
      }
    }
  }
  return diameter;
}

std::optional<double> closed_form_bisection(const Topology& t, const TopologyParams& p) {
  const double nic_half = nic_cable_bandwidth(t) / 2;
  if (const FatTreeLayout* f = t.fat_tree()) {
    // Half the capacity into each tier's up-links: N/2 NIC links when non-blocking, 1/o of it
    // with o:1 oversubscription (the product of the ratios over several tiers).
    double best = nic_half;
    for (const FatTreeTier& tier : f->tier) {
      if (tier.up_link.empty()) continue;
      double sum = 0;
      for (LinkId l : tier.up_link) sum += t.link(l).bandwidth_Bps;
      best = std::min(best, sum / 2);
    }
    return best;
  }
  if (const DragonflyLayout* d = t.dragonfly()) {
    // Groups split in halves: every group pair has m global cables.
    if (d->groups > 1) {
      const double bw = t.link(d->global.front()).bandwidth_Bps;
      const double g1 = d->groups / 2, g2 = d->groups - g1;
      return std::min(nic_half, g1 * g2 * d->links_per_group_pair * bw);
    }
    const double a1 = d->routers_per_group / 2, a2 = d->routers_per_group - a1;
    return std::min(nic_half, a1 * a2 * p.link_bandwidth_Bps);
  }
  if (const TorusLayout* tl = t.torus()) {
    // Cut across the longest dimension L: N / L rings, each cut twice (once for L = 2).
    const int L = *std::max_element(tl->dims.begin(), tl->dims.end());
    const double rings = static_cast<double>(tl->positions()) / L;
    const double per_ring = L >= 3 ? 2 : (L == 2 ? 1 : 0);
    return std::min(nic_half, rings * per_ring * p.link_bandwidth_Bps);
  }
  return std::nullopt;
}

std::vector<std::vector<bool>> balanced_partitions(int nodes) {
  std::vector<std::vector<bool>> out;
  if (nodes < 2) return out;
  const int half = nodes / 2;
  if (nodes <= kAllHalvesNodes) {
    for (uint32_t mask = 0; mask < (1u << nodes); ++mask) {
      if (std::popcount(mask) != half || (nodes % 2 == 0 && !(mask & 1u))) continue;
      std::vector<bool> side(static_cast<std::size_t>(nodes));
      for (int i = 0; i < nodes; ++i) side[static_cast<std::size_t>(i)] = (mask >> i) & 1u;
      out.push_back(std::move(side));
    }
    return out;
  }
  std::vector<bool> first(static_cast<std::size_t>(nodes)), even(first.size());
  for (int i = 0; i < nodes; ++i) {
    first[static_cast<std::size_t>(i)] = i < half;
    even[static_cast<std::size_t>(i)] = i % 2 == 0 && i / 2 < half;
  }
  out.push_back(first);
  out.push_back(even);
  std::mt19937_64 rng(1);
  std::vector<int> order(static_cast<std::size_t>(nodes));
  for (int k = 0; k < 16; ++k) {
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<bool> side(first.size());
    for (int i = 0; i < half; ++i) side[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = true;
    out.push_back(std::move(side));
  }
  return out;
}

double max_flow_bisection(const Topology& t, const std::vector<std::vector<bool>>& halves) {
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using FlowGraph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, double,
                      boost::property<boost::edge_residual_capacity_t, double,
                                      boost::property<boost::edge_reverse_t,
                                                      Traits::edge_descriptor>>>>;
  using Edge = Traits::edge_descriptor;
  const std::size_t n = t.num_vertices();
  FlowGraph g(n + 2);
  const auto source = n, sink = n + 1;
  auto cap = boost::get(boost::edge_capacity, g);
  auto rev = boost::get(boost::edge_reverse, g);
  auto add = [&](std::size_t a, std::size_t b, double c) {
    const Edge e = boost::add_edge(a, b, g).first, r = boost::add_edge(b, a, g).first;
    cap[e] = c;
    cap[r] = 0;
    rev[e] = r;
    rev[r] = e;
    return e;
  };
  double total = 1;
  for (LinkId l = 0; l < t.num_links(); ++l) {
    const Link& link = t.link(l);
    if (link.kind != LinkKind::fabric) continue;
    add(link.from, link.to, link.bandwidth_Bps);
    total += link.bandwidth_Bps;
  }
  // Terminal edges per NIC, capacities set per partition.
  const std::vector<VertexId> nics = all_nics(t);
  std::vector<Edge> from_source, to_sink;
  for (VertexId v : nics) {
    from_source.push_back(add(source, v, 0));
    to_sink.push_back(add(v, sink, 0));
  }
  double best = std::numeric_limits<double>::infinity();
  const auto per_node = static_cast<std::size_t>(t.nics_per_node());
  for (const std::vector<bool>& side : halves) {
    for (std::size_t i = 0; i < nics.size(); ++i) {
      const bool a = side[i / per_node];
      cap[from_source[i]] = a ? total : 0;
      cap[to_sink[i]] = a ? 0 : total;
    }
    best = std::min(best, boost::push_relabel_max_flow(g, source, sink));
  }
  return halves.empty() ? 0 : best;
}

TopologyReport make_report(const Topology& t, const TopologyParams& params,
                           const PriceTable& prices) {
  TopologyReport r;
  r.kind = std::string(to_string(t.kind()));
  r.nodes = t.nodes();
  r.gpus = t.ranks();
  for (VertexId v = 0; v < t.num_vertices(); ++v) {
    const Vertex& x = t.vertex(v);
    if (x.kind == VertexKind::nic) ++r.nics;
    if (x.kind == VertexKind::node_switch) ++r.node_switches;
    if (x.kind != VertexKind::fabric_switch) continue;
    ++r.switches;
    add_count(r.switches_by_tier, tier_name(t, x), 1);
  }
  if (const DragonflyLayout* d = t.dragonfly()) r.global_arrangement = arrangement_name(d->arrangement);
  count_and_price(t, params, prices, r);

  // Diameter: exact BFS from every NIC while cheap, else the family's formula, else a sample.
  const int64_t fabric_cables = r.copper_cables + r.optical_cables;
  r.diameter_closed_form = closed_form_diameter(t);
  if (r.nics * std::max<int64_t>(fabric_cables, 1) <= kBfsWork) {
    r.diameter_hops = bfs_diameter(t);
    r.diameter_method = "bfs";
  } else if (r.diameter_closed_form) {
    r.diameter_hops = *r.diameter_closed_form;
    r.diameter_method = "closed_form";
  } else {
    const std::vector<VertexId> nics = all_nics(t);
    std::vector<VertexId> sample;
    for (std::size_t i = 0; i < 16 && !nics.empty(); ++i) sample.push_back(nics[i * nics.size() / 16]);
    r.diameter_hops = bfs_diameter(t, sample);
    r.diameter_method = "bfs_sampled";
  }

  // Bisection: max-flow over balanced halves on small graphs, else the family's formula.
  const auto closed = closed_form_bisection(t, params);
  if (t.nodes() < 2) {
    r.bisection_method = "none";
  } else if (t.nodes() <= kMaxFlowNodes || !closed) {
    auto halves = balanced_partitions(t.nodes());
    if (t.nodes() > kMaxFlowNodes) halves.resize(2);  // large custom fabrics: index halves only
    r.bisection_Bps = max_flow_bisection(t, halves);
    r.bisection_partitions = static_cast<int>(halves.size());
    r.bisection_method = "max_flow";
  } else {
    r.bisection_Bps = *closed;
    r.bisection_method = "closed_form";
  }
  return r;
}

}  // namespace cs::topo
