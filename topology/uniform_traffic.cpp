// The uniform-traffic bound (see topology/uniform_traffic.hpp): per family, the demand each
// structural cut carries per unit of r, against the cut's capacity.
#include "topology/uniform_traffic.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "topology/direct_layouts.hpp"

namespace cs::topo {
namespace {

// Keeps the smallest rate and what set it.
struct Tightest {
  double rate = std::numeric_limits<double>::infinity();
  std::string limit = "none";
  void offer(double capacity_Bps, double demand_per_r, const std::string& what) {
    if (demand_per_r <= 0) return;
    const double r = capacity_Bps / demand_per_r;
    if (r < rate) rate = r, limit = what;
  }
};

std::string tier_name(std::size_t i) {
  return i == 0 ? "leaf up-links" : "tier " + std::to_string(i + 1) + " up-links";
}

// Each group of each tier below the top: demand per unit r = (1 / N) x sum over its GPUs of
// the GPUs outside it not on the same node.
void fat_tree_cuts(const Topology& t, Tightest& best) {
  const FatTreeLayout& f = *t.fat_tree();
  const int n = t.ranks(), per_node = t.gpus_per_node();
  for (std::size_t i = 0; i + 1 < f.tier.size(); ++i) {
    const FatTreeTier& tier = f.tier[i];
    const auto groups = static_cast<std::size_t>(tier.switches / tier.per_group);
    std::vector<double> capacity(groups, 0.0);
    for (std::size_t s = 0; s < tier.up_link.size(); ++s)
      capacity[s / static_cast<std::size_t>(tier.up) / static_cast<std::size_t>(tier.per_group)] +=
          t.live_bandwidth(tier.up_link[s]);
    const auto group_of = [&](int rank) {
      const int leaf = f.nic_leaf[static_cast<std::size_t>(t.nic_index_of_rank(rank))];
      return static_cast<std::size_t>(leaf / tier.leaves_per_group);
    };
    std::vector<double> members(groups, 0.0), demand(groups, 0.0);
    for (int rank = 0; rank < n; ++rank) members[group_of(rank)] += 1;
    // Per node: a of its GPUs in group q send to N - |q| - (G - a) GPUs outside q and off the node.
    std::vector<int> here(groups, 0);
    for (int node = 0; node < t.nodes(); ++node) {
      for (int k = 0; k < per_node; ++k) ++here[group_of(node * per_node + k)];
      for (int k = 0; k < per_node; ++k) {
        const std::size_t q = group_of(node * per_node + k);
        if (here[q] == 0) continue;
        demand[q] += here[q] * (n - members[q] - (per_node - here[q])) / static_cast<double>(n);
        here[q] = 0;
      }
    }
    for (std::size_t q = 0; q < groups; ++q) best.offer(capacity[q], demand[q], tier_name(i));
  }
}

// A degraded dragonfly's global cables: each group pair's live cables carry its pair's
// traffic; a pair with none left sends over two global hops, spread evenly over the g - 2
// other groups (the Valiant detour every routing takes then), adding to those pairs' load.
void degraded_global_cuts(const Topology& t, double n, double per_group, Tightest& best) {
  const DragonflyLayout& d = *t.dragonfly();
  const auto g = static_cast<std::size_t>(d.groups);
  std::vector<double> live(g * g, 0.0), load(g * g, 0.0), ranks(g, 0.0);
  for (std::size_t a = 0; a < g; ++a) ranks[a] = std::clamp(n - static_cast<double>(a) * per_group, 0.0, per_group);
  for (std::size_t a = 0; a < g; ++a)
    for (std::size_t b = 0; b < g; ++b)
      for (int c = 0; a != b && c < d.links_per_group_pair; ++c)
        live[a * g + b] += t.live_bandwidth(d.global_link(static_cast<int>(a), static_cast<int>(b), c));
  for (std::size_t a = 0; a < g; ++a)
    for (std::size_t b = 0; b < g; ++b) {
      if (a == b) continue;
      const double demand = ranks[a] * ranks[b] / n;  // a -> b, per unit r
      if (live[a * g + b] > 0) {
        load[a * g + b] += demand;
        continue;
      }
      for (std::size_t k = 0; k < g && g > 2; ++k)
        if (k != a && k != b) {
          load[a * g + k] += demand / static_cast<double>(g - 2);
          load[k * g + b] += demand / static_cast<double>(g - 2);
        }
    }
  for (std::size_t q = 0; q < g * g; ++q)
    if (live[q] > 0) best.offer(live[q], load[q], "global cables");
}

// A degraded dragonfly's local links: the live capacity of the group that kept least.
double least_live_local(const Topology& t) {
  const DragonflyLayout& d = *t.dragonfly();
  const int a = d.routers_per_group;
  double least = std::numeric_limits<double>::infinity();
  for (int group = 0; group < d.groups; ++group) {
    double sum = 0;
    for (int r = 0; r < a; ++r)
      for (int r2 = 0; r2 < a; ++r2)
        for (int c = 0; r2 != r && c < d.local_parallel; ++c)
          sum += t.live_bandwidth(d.local_link(group * a + r, r2, c));
    least = std::min(least, sum);
  }
  return least;
}

void dragonfly_cuts(const Topology& t, Tightest& best) {
  const DragonflyLayout& d = *t.dragonfly();
  if (d.groups < 2 || d.links_per_group_pair < 1) return;
  const double n = t.ranks(), per_group = double{1.0} * d.routers_per_group * d.nodes_per_router * t.gpus_per_node();
  // The two fullest groups: every group full but perhaps the last.
  std::vector<double> ranks(static_cast<std::size_t>(d.groups), 0.0);
  for (int g = 0; g < d.groups; ++g) ranks[static_cast<std::size_t>(g)] = std::clamp(n - g * per_group, 0.0, per_group);
  std::sort(ranks.rbegin(), ranks.rend());
  if (t.has_failures()) {
    degraded_global_cuts(t, n, per_group, best);
  } else {
    const double capacity = d.links_per_group_pair * t.link(d.global.front()).bandwidth_Bps;
    best.offer(capacity, ranks[0] * ranks[1] / n, "global cables");
  }
  // Group 0's local links, all a (a - 1) bundles together: a pair of its routers exchanges
  // its GPUs' traffic over one local hop (GPUs of one node excepted), and a flow to or from
  // another group takes one local hop in group 0 unless its global cable sits on its own
  // router: 1 - 1/a of the time with the cables spread evenly over the routers.
  const int a = d.routers_per_group, per_node = t.gpus_per_node();
  std::vector<double> on_router(static_cast<std::size_t>(a), 0.0);
  const auto members = static_cast<int>(ranks[0]);
  for (int rank = 0; rank < members; ++rank)
    on_router[static_cast<std::size_t>(d.router_of_nic(t.nic_index_of_rank(rank)) % a)] += 1;
  double intra = 0;  // ordered pairs of group 0 on different routers
  for (double x : on_router) intra += x * (members - x);
  // Less the pairs within one node on different routers (rails): they stay on NVLink.
  for (int node = 0; node < members / per_node; ++node) {
    std::vector<int> here(static_cast<std::size_t>(a), 0);
    for (int k = 0; k < per_node; ++k)
      ++here[static_cast<std::size_t>(d.router_of_nic(t.nic_index_of_rank(node * per_node + k)) % a)];
    for (int x : here) intra -= static_cast<double>(x) * (per_node - x);
  }
  const double across = 2.0 * (1.0 - 1.0 / a) * members * (n - members);
  double local_Bps = static_cast<double>(a) * (a - 1) * d.local_parallel * t.link(d.local.front()).bandwidth_Bps;
  if (t.has_failures()) local_Bps = least_live_local(t);
  best.offer(local_Bps, (intra + across) / n, "local links");
}

// Mean shortest distance on a ring of L positions to a uniformly chosen position (itself
// included).
double mean_ring_distance(int L) {
  double sum = 0;
  for (int k = 0; k < L; ++k) sum += std::min(k, L - k);
  return sum / L;
}

// A degraded torus: the live directed capacity along dimension d (a dimension of 2 lists each
// bundle from both positions: counted once).
double live_dimension(const Topology& t, std::size_t d) {
  const TorusLayout& tl = *t.torus();
  double sum = 0;
  for (int x = 0; x < tl.positions(); ++x) {
    const LinkId first = tl.plus[static_cast<std::size_t>(x) * tl.dims.size() + d];
    for (int c = 0; c < tl.parallel[d]; ++c)
      sum += t.live_bandwidth(first + 2 * static_cast<LinkId>(c)) + t.live_bandwidth(reverse(first) + 2 * static_cast<LinkId>(c));
  }
  return tl.dims[d] == 2 ? sum / 2 : sum;
}

void torus_cuts(const Topology& t, Tightest& best) {
  const TorusLayout& tl = *t.torus();
  const double nodes = tl.positions();
  for (std::size_t d = 0; d < tl.dims.size(); ++d) {
    const int L = tl.dims[d];
    if (L < 2) continue;
    const double channels = nodes * (L >= 3 ? 2 : 1) * tl.parallel[d];
    const double bw = t.link(tl.plus[d]).bandwidth_Bps;  // position 0's bundle along d
    const double capacity = t.has_failures() ? live_dimension(t, d) : channels * bw;
    best.offer(capacity, nodes * t.gpus_per_node() * mean_ring_distance(L), "torus dimension " + std::to_string(d));
  }
  if (tl.slices > 1) {  // each chip's DCN cable carries its traffic to the other slices
    const double outside = (nodes - tl.slice_positions()) / nodes;
    best.offer(t.link(tl.dcn_up.front()).bandwidth_Bps, t.gpus_per_node() * outside, "dcn");
  }
}

}  // namespace

UniformTrafficBound uniform_traffic_bound(const Topology& t) {
  UniformTrafficBound out;
  const int n = t.ranks(), per_node = t.gpus_per_node();
  if (t.nodes() < 2 || t.nics_per_node() < 1) return out;
  Tightest best;
  // NICs: GPUs per NIC x (N - G) / N per unit r, on the slowest NIC uplink.
  double nic_Bps = std::numeric_limits<double>::infinity();
  for (int node = 0; node < t.nodes(); ++node)
    for (int j = 0; j < t.nics_per_node(); ++j)
      for (LinkId l : t.out_links(t.nic(node, j)))
        if (t.vertex(t.link(l).to).kind == VertexKind::fabric_switch) nic_Bps = std::min(nic_Bps, t.link(l).bandwidth_Bps);
  const double gpus_per_nic = std::max(1.0, static_cast<double>(per_node) / t.nics_per_node());
  if (std::isfinite(nic_Bps)) best.offer(nic_Bps, gpus_per_nic * (n - per_node) / static_cast<double>(n), "nic");
  if (t.fat_tree()) fat_tree_cuts(t, best);
  if (t.dragonfly()) dragonfly_cuts(t, best);
  if (t.torus()) torus_cuts(t, best);
  if (std::isfinite(best.rate)) out.per_gpu_Bps = best.rate, out.limit = best.limit;
  return out;
}

}  // namespace cs::topo
