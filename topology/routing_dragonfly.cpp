// Dragonfly routings (minimal, Valiant, UGAL), computed from DragonflyLayout without a graph
// search. A route is fixed by (src rank, dst rank, intermediate group), the intermediate
// group being the source's own group for a minimal route, so routes cache per that triple.
#include <algorithm>

#include "topology/direct_layouts.hpp"
#include "topology/routing_detail.hpp"

namespace cs::topo::detail {
namespace {

class DragonflyRouter final : public CachedRouter {
 public:
  DragonflyRouter(const Topology& t, RoutingKind kind, uint64_t seed)
      : CachedRouter(t), d_(*t.dragonfly()), kind_(kind), seed_mix_(mix64(seed)) {}

  const Route& route(int src, int dst, uint64_t flow_key) override {
    check_ranks(src, dst);
    if (src == dst) return empty_;
    const int sg = group_of_rank(src);
    if (kind_ == RoutingKind::minimal) return cached(src, dst, sg);
    const int via = intermediate(src, dst, flow_key);
    if (kind_ == RoutingKind::valiant || via == sg) return cached(src, dst, via);
    // UGAL: the flow's Valiant route only when clearly less loaded, hops counted.
    const Route& minimal = cached(src, dst, sg);
    if (!oracle_) return minimal;
    const Route& valiant = cached(src, dst, via);
    return cost(valiant) < cost(minimal) ? valiant : minimal;
  }

  void set_load_oracle(LoadOracle oracle) override { oracle_ = std::move(oracle); }

 private:
  int router_of_rank(int rank) const { return d_.router_of_node(t_.node_of_rank(rank)); }
  int group_of_rank(int rank) const { return d_.group_of_router(router_of_rank(rank)); }

  // (most active flows on a link of the route + 1) * links.
  uint64_t cost(const Route& r) const {
    uint32_t q = 0;
    for (LinkId l : r.links) q = std::max(q, oracle_(l));
    return (uint64_t{q} + 1) * r.links.size();
  }

  // The Valiant intermediate group of a flow: uniform over the groups other than the source's
  // and the destination's; the source's group (minimal) inside a group or with 2 groups.
  int intermediate(int src, int dst, uint64_t flow_key) const {
    const int sg = group_of_rank(src), dg = group_of_rank(dst);
    if (sg == dg || d_.groups <= 2) return sg;
    const uint64_t pair = (static_cast<uint64_t>(src) << 32) | static_cast<uint64_t>(dst);
    int via = static_cast<int>(mix64(mix64(seed_mix_ ^ pair) ^ flow_key) %
                               static_cast<uint64_t>(d_.groups - 2));
    // Skip the two excluded groups, lower first.
    for (int skip : {std::min(sg, dg), std::max(sg, dg)})
      if (via >= skip) ++via;
    return via;
  }

  const Route& cached(int src, int dst, int via) {
    return CachedRouter::cached(route_key(src, dst, via), [&] {
      return nic_route(t_, src, dst, d_.nic_up,
                       [&](std::vector<LinkId>& out) { fabric(src, dst, via, out); });
    });
  }

  // The global cable copy from group `from` to group `to` that needs the fewest local hops
  // from router `at` (and, when `dest` >= 0, to router `dest`); ties: first from
  // (at + dest) mod m.
  LinkId pick_global(int at, int from, int to, int dest) const {
    const int m = d_.links_per_group_pair;
    const int start = (at + std::max(dest, 0)) % m;
    LinkId best = 0;
    int best_cost = 3;
    for (int i = 0; i < m && best_cost > 0; ++i) {
      const LinkId l = d_.global_link(from, to, (start + i) % m);
      const int u = t_.vertex(t_.link(l).from).index, v = t_.vertex(t_.link(l).to).index;
      const int c = (u != at) + (dest >= 0 && v != dest);
      if (c < best_cost) best_cost = c, best = l;
    }
    return best;
  }

  // Appends a local hop from router `at` to router `to` of the same group, if they differ.
  void local_hop(int at, int to, std::vector<LinkId>& out) const {
    if (at != to) out.push_back(d_.local_link(at, to % d_.routers_per_group));
  }

  // Router `at` to group `to_group` (landing router `dest` when it lies there, else any);
  // returns the router reached.
  int minimal(int at, int to_group, int dest, std::vector<LinkId>& out) const {
    const int from_group = d_.group_of_router(at);
    if (from_group == to_group) {
      local_hop(at, dest, out);
      return dest;
    }
    const LinkId l = pick_global(at, from_group, to_group,
                                 d_.group_of_router(dest) == to_group ? dest : -1);
    local_hop(at, t_.vertex(t_.link(l).from).index, out);
    out.push_back(l);
    return t_.vertex(t_.link(l).to).index;
  }

  // Router to router: through group `via` (the source's own for a minimal route).
  void fabric(int src, int dst, int via, std::vector<LinkId>& out) const {
    const int rs = router_of_rank(src), rd = router_of_rank(dst);
    int at = rs;
    if (via != d_.group_of_router(rs)) at = minimal(at, via, rs, out);  // Valiant leg
    at = minimal(at, d_.group_of_router(rd), rd, out);
    local_hop(at, rd, out);
  }

  const DragonflyLayout& d_;
  RoutingKind kind_;
  uint64_t seed_mix_;
  LoadOracle oracle_;
};

}  // namespace

std::unique_ptr<Router> make_dragonfly_router(const Topology& t, RoutingKind kind, uint64_t seed) {
  return std::make_unique<DragonflyRouter>(t, kind, seed);
}

}  // namespace cs::topo::detail
