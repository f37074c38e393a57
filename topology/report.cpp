// The topology report: counts, tiers, diameter, bisection, bill (see topology/report.hpp).
#include "topology/report.hpp"

#include "topology/failures.hpp"

#include <algorithm>
#include <cstdio>
#include <deque>

#include "topology/direct_layouts.hpp"
#include "topology/narrow_links.hpp"

namespace cs::topo {
namespace {

std::string fat_tree_tier_name(int tier) {
  if (tier == 1) return "leaf";
  if (tier == 2) return "spine";
  if (tier == 3) return "core";
  return "tier" + std::to_string(tier);
}

std::string tier_name(const Topology& t, const Vertex& v) {
  switch (t.kind()) {
    case TopologyKind::fat_tree: return fat_tree_tier_name(v.tier);
    case TopologyKind::dragonfly: return "router";
    default: return "switch";
  }
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

// Links by kind: node_fabric, pcie, nic_switch (nic_nic), switch_switch, and the
// switch-to-switch cables again by role (leaf_spine, spine_core / local, global).
Counts links_by_kind(const Topology& t) {
  Counts counts;
  const DragonflyLayout* df = t.dragonfly();
  for (LinkId l = 0; l < t.num_links(); l += 2) {
    const Link& link = t.link(l);
    const Vertex &a = t.vertex(link.from), &b = t.vertex(link.to);
    if (link.kind != LinkKind::fabric) {
      add_count(counts, std::string(link_kind_name(link.kind)), 1);
      continue;
    }
    if (!is_switch(a) || !is_switch(b)) {
      add_count(counts, is_switch(a) || is_switch(b) ? "nic_switch" : "nic_nic", 1);
      continue;
    }
    add_count(counts, "switch_switch", 1);
    if (df) {
      const bool local = a.index / df->routers_per_group == b.index / df->routers_per_group;
      add_count(counts, local ? "local" : "global", 1);
    } else if (t.kind() == TopologyKind::fat_tree) {
      const Vertex& low = a.tier < b.tier ? a : b;
      const Vertex& high = a.tier < b.tier ? b : a;
      add_count(counts, tier_name(t, low) + "_" + tier_name(t, high), 1);
    }
  }
  return counts;
}

std::string fmt_ratio(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", r);
  return buf;
}

// What the fat-tree builder decided that the parameters did not say.
void fat_tree_notes(const FatTreeLayout& f, const TopologyParams& p, const std::vector<TierRatio>& ratios,
                    std::vector<std::string>& notes) {
  if (f.tiers < f.tiers_requested) {
    const FatTreeTier& below_top = f.tier[static_cast<std::size_t>(std::max(f.tiers - 2, 0))];
    const std::string why =
        f.tiers == 1 ? "every NIC fits on one leaf"
                     : "the " + std::to_string(below_top.switches / below_top.per_group) + " " +
                           (f.tiers == 2 ? std::string("leaves")
                                         : f.tiers == 3 ? std::string("pods")
                                                        : "groups of tier " + std::to_string(f.tiers - 1)) +
                           " fit under one top switch's " + std::to_string(p.switch_radix) +
                           " ports";
    notes.push_back("tiers: " + std::to_string(f.tiers_requested) + " asked, " +
                      std::to_string(f.tiers) + " built: " + why +
                      "; another tier would add switches and hops, not bandwidth");
  }
  for (std::size_t i = 0; i < ratios.size(); ++i) {
    const TierRatio& tr = ratios[i];
    const std::size_t upper = i - 1;  // index into upper_oversubscription for i >= 1
    const double want = i == 0 ? p.oversubscription
                        : upper < p.upper_oversubscription.size() ? p.upper_oversubscription[upper]
                                                                  : 1.0;
    // Ratios are asked in ports; bundles round the up-ports up.
    const double ports = static_cast<double>(tr.down_ports) / tr.up_ports;
    if (ports < want * (1 - 1e-9))
      notes.push_back(tr.tier + ": " + std::to_string(tr.down_ports) + " down / " +
                        std::to_string(tr.up_ports) + " up ports, " + fmt_ratio(ports) +
                        ":1 (asked " + fmt_ratio(want) + ":1): up-ports rounded up to whole " +
                        "bundles of " + std::to_string(tr.parallel_links));
  }
}

}  // namespace

std::string link_class(const Topology& t, LinkId l) {
  const Link& link = t.link(l);
  const Vertex& a = t.vertex(link.from);
  const Vertex& b = t.vertex(link.to);
  const auto role = [&](const Vertex& v) -> std::string {
    switch (v.kind) {
      case VertexKind::gpu: return "gpu";
      case VertexKind::nic: return "nic";
      case VertexKind::node_switch: return "node_switch";
      case VertexKind::fabric_switch: return tier_name(t, v);
    }
    return "?";
  };
  std::string c = role(a) + ">" + role(b);
  if (const DragonflyLayout* df = t.dragonfly(); df && is_switch(a) && is_switch(b))
    c += a.index / df->routers_per_group == b.index / df->routers_per_group ? ":local" : ":global";
  return c;
}

std::vector<std::string> build_notes(const Topology& topology, const TopologyParams& params) {
  std::vector<std::string> notes;
  if (const FatTreeLayout* f = topology.fat_tree()) fat_tree_notes(*f, params, tier_ratios(topology), notes);
  return notes;
}

std::vector<TierRatio> tier_ratios(const Topology& t) {
  std::vector<TierRatio> out;
  const FatTreeLayout* f = t.fat_tree();
  if (!f) return out;
  // Per switch of each tier: bandwidth in from below and out upwards.
  std::vector<std::vector<double>> down(f->tier.size()), up(f->tier.size());
  for (std::size_t i = 0; i < f->tier.size(); ++i) {
    down[i].assign(static_cast<std::size_t>(f->tier[i].switches), 0.0);
    up[i].assign(down[i].size(), 0.0);
  }
  for (std::size_t g = 0; g < f->nic_leaf.size(); ++g)
    down[0][static_cast<std::size_t>(f->nic_leaf[g])] += t.link(f->nic_up[g]).bandwidth_Bps;
  for (std::size_t i = 0; i + 1 < f->tier.size(); ++i)
    for (LinkId l : f->tier[i].up_link) {
      const Link& link = t.link(l);
      up[i][static_cast<std::size_t>(t.vertex(link.from).index)] += link.bandwidth_Bps;
      down[i + 1][static_cast<std::size_t>(t.vertex(link.to).index)] += link.bandwidth_Bps;
    }
  for (std::size_t i = 0; i + 1 < f->tier.size(); ++i) {
    const FatTreeTier& tier = f->tier[i];
    TierRatio r;
    r.tier = fat_tree_tier_name(static_cast<int>(i) + 1);
    r.switches = tier.switches;
    r.down_ports = tier.down;
    r.up_ports = tier.up;
    r.parallel_links = tier.parallel;
    for (std::size_t s = 0; s < down[i].size(); ++s) {
      r.down_Bps += down[i][s];
      r.up_Bps += up[i][s];
      if (up[i][s] > 0) r.worst_switch_ratio = std::max(r.worst_switch_ratio, down[i][s] / up[i][s]);
    }
    r.ratio = r.up_Bps > 0 ? r.down_Bps / r.up_Bps : 0;
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<int> closed_form_diameter(const Topology& t) {
  const int64_t nics = int64_t{t.nodes()} * t.nics_per_node();
  if (nics <= 1) return 0;
  if (const FatTreeLayout* f = t.fat_tree()) return 2 * f->tiers;
  if (const DragonflyLayout* d = t.dragonfly()) {
    // Kim et al.: local, global, local between routers, plus the two NIC cables.
    const int64_t per_group = int64_t{d->routers_per_group} * d->nodes_per_router;
    const int64_t groups = (t.nodes() + per_group - 1) / per_group;
    if (groups > 1) return d->routers_per_group > 1 ? 5 : 3;
    const int64_t routers = d->rail_optimized
                                ? std::min<int64_t>(d->routers_per_group, nics)
                                : (t.nodes() + d->nodes_per_router - 1) / d->nodes_per_router;
    return routers > 1 ? 3 : 2;
  }
  if (const TorusLayout* tl = t.torus()) return 2 + tl->diameter_hops();
  return std::nullopt;
}

int bfs_diameter(const Topology& t, const std::vector<VertexId>& sources_in) {
  const std::vector<VertexId> sources = sources_in.empty() ? fabric_nics(t) : sources_in;
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
        if (link.kind != LinkKind::fabric || t.failed(l) || dist[link.to] >= 0) continue;
        dist[link.to] = dist[v] + 1;
        queue.push_back(link.to);
      }
    }
  }
  return diameter;
}

double network_usd_per_busbw_GBps(const TopologyReport& r, double busbw_Bps) {
  if (!(busbw_Bps > 0) || r.gpus <= 0) return 0;
  return r.network_cost_usd / (static_cast<double>(r.gpus) * busbw_Bps / 1e9);
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
  r.links = static_cast<int64_t>(t.num_cables());
  r.links_by_kind = links_by_kind(t);
  if (const DragonflyLayout* d = t.dragonfly()) r.global_arrangement = arrangement_name(d->arrangement);
  r.failed_cables = static_cast<int64_t>(t.num_failed_cables());
  r.failed_switches = static_cast<int64_t>(dead_switches(t));
  if (const FatTreeLayout* f = t.fat_tree()) {
    r.tiers = f->tiers;
    r.tiers_requested = f->tiers_requested;
    r.oversubscription_by_tier = tier_ratios(t);
    r.notes = build_notes(t, params);
  }

  r.warnings = narrow_link_warnings(t);
  Bill bill = make_bill(t, params, prices);
  r.copper_cables = bill.copper_cables;
  r.optical_cables = bill.optical_cables;
  r.transceivers = bill.transceivers;
  r.aoc_cables = bill.aoc_cables;
  r.fiber_cables = bill.fiber_cables;
  r.twin_port_transceivers = bill.twin_port_transceivers;
  r.rows = bill.rows;
  r.switch_ports = bill.switch_ports;
  r.switch_ports_used = bill.switch_ports_used;
  r.racks = bill.racks;
  r.cable_rule = std::move(bill.cable_rule);
  r.pricing_basis = std::move(bill.pricing_basis);
  r.cost_usd = bill.cost_usd;
  r.power_w = bill.power_w;
  r.network_cost_usd = bill.network_cost_usd;
  r.network_power_w = bill.network_power_w;
  r.bill = std::move(bill.lines);
  if (r.gpus > 0) r.network_cost_per_gpu_usd = r.network_cost_usd / static_cast<double>(r.gpus);

  // Diameter: exact BFS from every NIC while cheap, else the family's formula, else a sample.
  const int64_t fabric_cables = r.copper_cables + r.optical_cables;
  r.diameter_closed_form = closed_form_diameter(t);
  if (r.nics * std::max<int64_t>(fabric_cables, 1) <= kBfsWork) {
    r.diameter_hops = bfs_diameter(t);
    r.diameter_method = "bfs";
  } else if (r.diameter_closed_form && !t.has_failures()) {
    r.diameter_hops = *r.diameter_closed_form;
    r.diameter_method = "closed_form";
  } else {
    const std::vector<VertexId> nics = fabric_nics(t);
    std::vector<VertexId> sample;
    for (std::size_t i = 0; i < 16 && !nics.empty(); ++i) sample.push_back(nics[i * nics.size() / 16]);
    r.diameter_hops = bfs_diameter(t, sample);
    r.diameter_method = "bfs_sampled";
  }

  const Bisection b = bisection(t, params);
  r.bisection_Bps = b.Bps;
  r.bisection_method = b.method;
  r.bisection_partitions = b.partitions;
  const UniformTrafficBound u = uniform_traffic_bound(t);
  r.all_to_all_bound_per_gpu_Bps = u.per_gpu_Bps;
  r.all_to_all_bound_limit = u.limit;
  if (b.Bps > 0) r.network_usd_per_bisection_GBps = r.network_cost_usd / (b.Bps / 1e9);
  if (t.has_failures())
    r.notes.push_back("degraded: " + std::to_string(r.failed_cables) + " cables down (" +
                      std::to_string(r.failed_switches) + " switches with all their cables), topology.failed; the "
                      "bill counts them as bought, the bisection, all-to-all bound and diameter only live cables");
  return r;
}

}  // namespace cs::topo
