// Bisection bandwidth: candidate splits, the fat-tree's tree cut, max-flow, closed forms
// (see topology/bisection.hpp).
#include "topology/bisection.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <numeric>
#include <random>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>

#include "topology/direct_layouts.hpp"

namespace cs::topo {
namespace {

constexpr int kRandomSplits = 16;  // seeded random balanced splits beyond kAllHalvesNodes

double nic_cable_bandwidth(const Topology& t) {
  double sum = 0;
  for (VertexId v : fabric_nics(t))
    for (LinkId l : t.out_links(v))
      if (t.link(l).kind == LinkKind::fabric) sum += t.live_bandwidth(l);
  return sum;
}

int64_t switch_cables(const Topology& t) {
  int64_t n = 0;
  for (LinkId l = 0; l < t.num_links(); l += 2)
    n += t.vertex(t.link(l).from).kind == VertexKind::fabric_switch &&
         t.vertex(t.link(l).to).kind == VertexKind::fabric_switch;
  return n;
}

// The first floor(n/2) nodes in `order` on one side.
Partition first_half(const std::vector<int>& order) {
  Partition side(order.size());
  for (std::size_t i = 0; i < order.size() / 2; ++i) side[static_cast<std::size_t>(order[i])] = true;
  return side;
}

// The NIC's single fabric cable when it leads to a switch (then the NIC can be merged into
// that switch for max-flow), else none.
std::optional<LinkId> sole_switch_cable(const Topology& t, VertexId nic) {
  std::optional<LinkId> found;
  for (LinkId l : t.out_links(nic)) {
    if (t.link(l).kind != LinkKind::fabric || t.failed(l)) continue;
    if (found || t.vertex(t.link(l).to).kind != VertexKind::fabric_switch) return std::nullopt;
    found = l;
  }
  return found;
}

}  // namespace

std::vector<Partition> balanced_partitions(int nodes) {
  std::vector<Partition> out;
  if (nodes < 2) return out;
  const int half = nodes / 2;
  if (nodes <= kAllHalvesNodes) {
    for (uint32_t mask = 0; mask < (1u << nodes); ++mask) {
      if (std::popcount(mask) != half || (nodes % 2 == 0 && !(mask & 1u))) continue;
      Partition side(static_cast<std::size_t>(nodes));
      for (int i = 0; i < nodes; ++i) side[static_cast<std::size_t>(i)] = (mask >> i) & 1u;
      out.push_back(std::move(side));
    }
    return out;
  }
  std::vector<int> order(static_cast<std::size_t>(nodes));
  std::iota(order.begin(), order.end(), 0);
  out.push_back(first_half(order));
  Partition even(static_cast<std::size_t>(nodes));
  for (int i = 0; i < nodes; ++i) even[static_cast<std::size_t>(i)] = i % 2 == 0 && i / 2 < half;
  out.push_back(std::move(even));
  std::mt19937_64 rng(1);
  for (int k = 0; k < kRandomSplits; ++k) {
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    out.push_back(first_half(order));
  }
  return out;
}

// A dragonfly cut along group boundaries: the groups before the one holding the middle
// node on one side, then that group's nodes whose routers have the most global cables to
// those groups (less those to the groups after it): with an odd number of groups the
// cheapest balanced cut splits the middle group this way, not by node index.
Partition dragonfly_group_cut(const Topology& t, const DragonflyLayout& d) {
  const int n = t.nodes(), per_group = d.routers_per_group * d.nodes_per_router;
  const int middle = n / 2 / per_group, last = (n - 1) / per_group;
  std::vector<int> score(static_cast<std::size_t>(d.routers_per_group), 0);
  for (int other = 0; other <= last && d.groups > 1; ++other) {
    if (other == middle) continue;
    for (int c = 0; c < d.links_per_group_pair; ++c) {
      const int router = t.vertex(t.link(d.global_link(middle, other, c)).from).index;
      score[static_cast<std::size_t>(router % d.routers_per_group)] += other < middle ? 1 : -1;
    }
  }
  const int first = middle * per_group, end = std::min(n, first + per_group);
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  auto node_score = [&](int node) {
    int sum = 0;
    for (int j = 0; j < t.nics_per_node(); ++j)
      sum += score[static_cast<std::size_t>(
          d.router_of_nic(int64_t{node} * t.nics_per_node() + j) % d.routers_per_group)];
    return sum;
  };
  std::stable_sort(order.begin() + first, order.begin() + end,
                   [&](int a, int b) { return node_score(a) > node_score(b); });
  return first_half(order);
}

std::vector<Partition> candidate_partitions(const Topology& t) {
  std::vector<Partition> out = balanced_partitions(t.nodes());
  if (t.nodes() <= kAllHalvesNodes) return out;
  if (const DragonflyLayout* d = t.dragonfly()) out.push_back(dragonfly_group_cut(t, *d));
  const TorusLayout* torus = t.torus();
  if (!torus) return out;
  // Across each dimension: nodes ordered by their coordinate along it (node i at position i).
  for (std::size_t d = 0; d < torus->dims.size(); ++d) {
    if (torus->dims[d] < 2) continue;
    std::vector<int> order(static_cast<std::size_t>(t.nodes()));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return torus->coord(a, d) < torus->coord(b, d); });
    out.push_back(first_half(order));
  }
  return out;
}

std::vector<Partition> structural_partitions(const Topology& t) {
  std::vector<Partition> all = candidate_partitions(t);
  if (t.nodes() <= kAllHalvesNodes) return all;
  // candidate_partitions: index and interleaved halves, 16 random splits, then the family's cuts.
  std::vector<Partition> out(all.begin(), all.begin() + 2);
  out.insert(out.end(), all.begin() + 2 + kRandomSplits, all.end());
  return out;
}

double max_flow_bisection(const Topology& t, const std::vector<Partition>& halves) {
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using FlowGraph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, double,
                      boost::property<boost::edge_residual_capacity_t, double,
                                      boost::property<boost::edge_reverse_t,
                                                      Traits::edge_descriptor>>>>;
  using Edge = Traits::edge_descriptor;
  if (halves.empty()) return 0;
  // Flow vertices: fabric switches and the NICs that cannot be merged into their switch.
  const std::vector<VertexId> nics = fabric_nics(t);
  std::vector<std::optional<LinkId>> merged(nics.size());
  std::vector<std::size_t> index(t.num_vertices(), SIZE_MAX);
  std::size_t n = 0;
  for (VertexId v = 0; v < t.num_vertices(); ++v)
    if (t.vertex(v).kind == VertexKind::fabric_switch) index[v] = n++;
  for (std::size_t i = 0; i < nics.size(); ++i)
    if (!(merged[i] = sole_switch_cable(t, nics[i]))) index[nics[i]] = n++;
  FlowGraph g(n + 2);
  const std::size_t source = n, sink = n + 1;
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
    if (link.kind != LinkKind::fabric || t.failed(l) || index[link.from] == SIZE_MAX || index[link.to] == SIZE_MAX)
      continue;
    add(index[link.from], index[link.to], link.bandwidth_Bps);
    total += link.bandwidth_Bps;
  }
  // Terminal edges per NIC (a merged NIC's on its switch, limited by its cable), capacities
  // set per partition.
  std::vector<Edge> from_source, to_sink;
  for (std::size_t i = 0; i < nics.size(); ++i) {
    const std::size_t at = merged[i] ? index[t.link(*merged[i]).to] : index[nics[i]];
    from_source.push_back(add(source, at, 0));
    to_sink.push_back(add(at, sink, 0));
  }
  double best = std::numeric_limits<double>::infinity();
  const auto per_node = static_cast<std::size_t>(t.nics_per_node());
  for (const Partition& side : halves) {
    for (std::size_t i = 0; i < nics.size(); ++i) {
      const bool a = side[i / per_node];
      const double c = merged[i] ? t.link(*merged[i]).bandwidth_Bps : total;
      cap[from_source[i]] = a ? c : 0;
      cap[to_sink[i]] = a ? 0 : c;
    }
    best = std::min(best, boost::push_relabel_max_flow(g, source, sink));
  }
  return best;
}

double tree_cut_bisection(const Topology& t, const std::vector<Partition>& halves) {
  const FatTreeLayout& f = *t.fat_tree();
  if (halves.empty()) return 0;
  // Up-link capacity of each group of each tier (the leaves are tier 1's groups).
  std::vector<std::vector<double>> up_capacity(f.tier.size());
  for (std::size_t i = 0; i < f.tier.size(); ++i) {
    const FatTreeTier& tier = f.tier[i];
    up_capacity[i].assign(static_cast<std::size_t>(tier.switches / tier.per_group), 0.0);
    for (std::size_t s = 0; s < tier.up_link.size(); ++s)
      up_capacity[i][s / static_cast<std::size_t>(tier.up) /
                     static_cast<std::size_t>(tier.per_group)] +=
          t.live_bandwidth(tier.up_link[s]);
  }
  const auto per_node = static_cast<std::size_t>(t.nics_per_node());
  double best = std::numeric_limits<double>::infinity();
  std::vector<double> supply, demand, next_supply, next_demand;  // per group: A out, B in
  for (const Partition& side : halves) {
    supply.assign(static_cast<std::size_t>(f.leaves), 0.0);
    demand.assign(supply.size(), 0.0);
    for (std::size_t g = 0; g < f.nic_leaf.size(); ++g) {
      const double c = t.live_bandwidth(f.nic_up[g]);
      (side[g / per_node] ? supply : demand)[static_cast<std::size_t>(f.nic_leaf[g])] += c;
    }
    // Tier by tier: a group's halves exchange min(supply, demand) below it; the excess
    // crosses its up-links, at most their capacity, into its group of the tier above.
    double flow = 0;
    for (std::size_t i = 0; i < f.tier.size(); ++i) {
      const bool top = i + 1 == f.tier.size();
      const std::size_t groups_above =
          top ? 0 : static_cast<std::size_t>(f.tier[i + 1].switches / f.tier[i + 1].per_group);
      next_supply.assign(groups_above, 0.0);
      next_demand.assign(groups_above, 0.0);
      for (std::size_t q = 0; q < supply.size(); ++q) {
        flow += std::min(supply[q], demand[q]);
        if (top) continue;
        const double excess = supply[q] - demand[q], cap = up_capacity[i][q];
        const std::size_t parent = q / static_cast<std::size_t>(f.tier[i + 1].fan);
        if (excess > 0) next_supply[parent] += std::min(excess, cap);
        else next_demand[parent] += std::min(-excess, cap);
      }
      supply.swap(next_supply);
      demand.swap(next_demand);
    }
    best = std::min(best, flow);
  }
  return best;
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
      for (LinkId l : tier.up_link) sum += t.live_bandwidth(l);
      best = std::min(best, sum / 2);
    }
    return best;
  }
  if (const DragonflyLayout* d = t.dragonfly()) {
    // Groups split in halves: every group pair has m global cables; one group: router halves,
    // every router pair joined by a local bundle.
    if (d->groups > 1) {
      const double bw = t.link(d->global.front()).bandwidth_Bps;
      const double g1 = d->groups / 2, g2 = d->groups - g1;
      return std::min(nic_half, g1 * g2 * d->links_per_group_pair * bw);
    }
    const double a1 = d->routers_per_group / 2, a2 = d->routers_per_group - a1;
    return std::min(nic_half, a1 * a2 * d->local_parallel * p.link_bandwidth_Bps);
  }
  if (const TorusLayout* tl = t.torus()) {
    // Across dimension d of size L: N / L rings of bundles, each cut twice (once for L = 2).
    // Across an even number of slices: half the chips' DCN cables.
    double best = nic_half;
    if (tl->slices > 1) {
      if (tl->slices % 2 != 0) return std::nullopt;
      best = std::min(best, tl->positions() / 2.0 * t.link(tl->dcn_up.front()).bandwidth_Bps);
    }
    for (std::size_t d = 0; d < tl->dims.size(); ++d) {
      const int L = tl->dims[d];
      if (L < 2) continue;
      const double rings = static_cast<double>(tl->positions()) / L;
      best = std::min(best, rings * (L >= 3 ? 2 : 1) * tl->parallel[d] * p.link_bandwidth_Bps);
    }
    return best;
  }
  return std::nullopt;
}

Bisection bisection(const Topology& t, const TopologyParams& p) {
  Bisection b;
  if (t.nodes() < 2) {
    b.method = "none";
    return b;
  }
  std::vector<Partition> halves = candidate_partitions(t);
  const bool small = switch_cables(t) <= kMaxFlowCables;
  if (t.has_failures() && (small || !t.fat_tree())) {
    // A failed cable breaks the structure the tree cut and the closed forms rely on:
    // max-flow over the live cables (a large fabric: on its structural splits only).
    if (!small) halves = structural_partitions(t);
    b.Bps = max_flow_bisection(t, halves);
    b.method = "max_flow";
    b.partitions = static_cast<int>(halves.size());
    return b;
  }
  if (t.fat_tree()) {
    b.Bps = tree_cut_bisection(t, halves);
    b.method = "tree_cut";
    b.partitions = static_cast<int>(halves.size());
    return b;
  }
  const auto closed = small ? std::nullopt : closed_form_bisection(t, p);
  if (closed) {
    b.Bps = *closed;
    b.method = "closed_form";
    return b;
  }
  if (!small) halves.resize(2);  // a large custom fabric: index and interleaved halves only
  b.Bps = max_flow_bisection(t, halves);
  b.method = "max_flow";
  b.partitions = static_cast<int>(halves.size());
  return b;
}

}  // namespace cs::topo
