// Narrow links of direct fabrics (rules: topology/narrow_links.hpp). Sums are taken over the
// actual links, so mixed bandwidths and uneven NIC placement (rail dragonflies) are counted
// as built; the worst switch speaks for the fabric.
#include "topology/narrow_links.hpp"

#include <algorithm>
#include <cstdio>

#include "topology/direct_layouts.hpp"

namespace cs::topo {
namespace {

std::string gbps(double Bps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB/s", Bps / 1e9);
  return buf;
}

// What the NICs on each switch inject: switch index (Vertex::index) -> bytes/s.
std::vector<double> injection_by_switch(const Topology& t, const std::vector<LinkId>& nic_up, std::size_t switches) {
  std::vector<double> in(switches, 0.0);
  for (LinkId l : nic_up) in[static_cast<std::size_t>(t.vertex(t.link(l).to).index)] += t.link(l).bandwidth_Bps;
  return in;
}

void dragonfly_warnings(const Topology& t, const DragonflyLayout& d, std::vector<std::string>& out) {
  const int a = d.routers_per_group;
  if (a < 2) return;
  const std::vector<double> inject = injection_by_switch(t, d.nic_up, d.router.size());
  std::size_t worst = 0;
  double worst_gap = 0.0, worst_local = 0.0;
  for (std::size_t r = 0; r < d.router.size(); ++r) {
    double local = 0.0;
    for (int other = 0; other + 1 < a; ++other)
      local += t.link(d.local[r * static_cast<std::size_t>(a - 1) + static_cast<std::size_t>(other)]).bandwidth_Bps *
               d.local_parallel;
    if (inject[r] - local > worst_gap) {
      worst_gap = inject[r] - local;
      worst = r;
      worst_local = local;
    }
  }
  if (worst_gap <= 0.0) return;
  out.push_back("dragonfly: router " + std::to_string(worst) + "'s local links (" + std::to_string(a - 1) +
                " bundles of " + std::to_string(d.local_parallel) + " cable(s), " + gbps(worst_local) +
                ") are narrower than its NICs inject (" + gbps(inject[worst]) +
                "): traffic leaving a router cannot fill its NICs; raise parallel_links or routers_per_group, "
                "or place fewer NICs per router");
}

void torus_warnings(const Topology& t, const TorusLayout& tor, std::vector<std::string>& out) {
  const std::vector<double> inject = injection_by_switch(t, tor.nic_up, tor.sw.size());
  const std::size_t D = tor.dims.size();
  double narrowest = 0.0;
  std::size_t dim = 0;
  for (std::size_t d = 0; d < D; ++d) {
    if (tor.dims[d] < 2) continue;
    const double bundle = t.link(tor.plus[d]).bandwidth_Bps * tor.parallel[d];  // position 0's
    if (narrowest == 0.0 || bundle < narrowest) {
      narrowest = bundle;
      dim = d;
    }
  }
  double most = 0.0;
  for (double x : inject) most = std::max(most, x);
  if (narrowest <= 0.0 || most <= narrowest) return;
  out.push_back("torus: a bundle along dimension " + std::to_string(dim) + " (" +
                std::to_string(tor.parallel[dim]) + " cable(s), " + gbps(narrowest) +
                ") is narrower than the NICs of a position inject (" + gbps(most) +
                "): traffic to one neighbour cannot fill them; raise parallel_links or link_bandwidth");
}

}  // namespace

std::vector<std::string> narrow_link_warnings(const Topology& topology) {
  std::vector<std::string> out;
  if (const DragonflyLayout* d = topology.dragonfly()) dragonfly_warnings(topology, *d, out);
  if (const TorusLayout* tor = topology.torus()) torus_warnings(topology, *tor, out);
  return out;
}

}  // namespace cs::topo
