// Dragonfly builder and the global-link arrangements (see topology/direct_layouts.hpp).
// Parameters are checked first (no allocation on bad input), then nodes, routers, NIC cables,
// local cables (group by group) and global cables (group pair by group pair).
#include <memory>
#include <string>

#include "topology/build_detail.hpp"
#include "topology/direct_layouts.hpp"

namespace cs::topo {
namespace {

// Beyond this many fabric cables a request is a typo (and would exhaust memory).
constexpr int64_t kMaxDragonflyCables = int64_t{1} << 27;
// Route cache keys hold the intermediate group of a Valiant route in 16 bits.
constexpr int kMaxGroups = 1 << 16;

int positive_mod(int64_t x, int m) { return static_cast<int>(((x % m) + m) % m); }

std::string router_name(int group, int r) {
  std::string s(1, 'g');
  s += std::to_string(group);
  s += ".r";
  s += std::to_string(r);
  return s;
}

void check_count(int value, int max, const std::string& param, const std::string& what) {
  if (value < 1 || value > max)
    detail::fail(param, what + " must be from 1 to " + std::to_string(max) + ", got " +
                            std::to_string(value));
}

}  // namespace

int dragonfly_slot_target(GlobalArrangement arrangement, int groups, int from, int slot) {
  switch (arrangement) {
    case GlobalArrangement::absolute: return slot < from ? slot : slot + 1;
    case GlobalArrangement::relative: return positive_mod(int64_t{from} + 1 + slot, groups);
    case GlobalArrangement::circulant: {
      const int64_t offset = slot / 2 + 1;
      return positive_mod(slot % 2 == 0 ? from + offset : from - offset, groups);
    }
  }
  return -1;
}

int dragonfly_slot_of(GlobalArrangement arrangement, int groups, int from, int to) {
  switch (arrangement) {
    case GlobalArrangement::absolute: return to < from ? to : to - 1;
    case GlobalArrangement::relative: return positive_mod(int64_t{to} - from - 1, groups);
    case GlobalArrangement::circulant: {
      // Even slots hold the offsets +1 .. +floor(g/2), odd slots -1 .. -(ceil(g/2) - 1).
      const int offset = positive_mod(int64_t{to} - from, groups);
      return offset <= groups / 2 ? 2 * (offset - 1) : 2 * (groups - offset - 1) + 1;
    }
  }
  return -1;
}

std::string_view arrangement_name(GlobalArrangement arrangement) {
  return name_of(kGlobalArrangementNames, arrangement);
}

int dragonfly_router_ports(const TopologyParams& p) {
  return p.nodes_per_router * p.node.nics + (p.routers_per_group - 1) * p.local_parallel_links +
         p.global_links_per_router;
}

void check_dragonfly(const TopologyParams& p) {
  const int a = p.routers_per_group, h = p.global_links_per_router, g = p.groups;
  check_count(a, kMaxSwitchRadix, "routers_per_group", "routers_per_group (a)");
  check_count(p.nodes_per_router, kMaxSwitchRadix, "nodes_per_router", "nodes_per_router (p)");
  check_count(h, kMaxSwitchRadix, "global_links_per_router", "global_links_per_router (h)");
  check_count(g, kMaxGroups, "groups", "groups (g)");
  const int64_t max_groups = int64_t{a} * h + 1;
  if (g > max_groups)
    detail::fail("groups", "a dragonfly with " + std::to_string(a) + " routers per group and " +
                               std::to_string(h) +
                               " global links per router joins at most a*h+1 = " +
                               std::to_string(max_groups) + " groups, got " + std::to_string(g) +
                               "; raise routers_per_group or global_links_per_router");
  const int64_t capacity = int64_t{a} * p.nodes_per_router * g;
  if (p.nodes > capacity)
    detail::fail("nodes", std::to_string(g) + " groups x " + std::to_string(a) + " routers x " +
                              std::to_string(p.nodes_per_router) +
                              " nodes per router hold at most " +
                              std::to_string(capacity) + " nodes, got " + std::to_string(p.nodes) +
                              "; raise groups (up to a*h+1) or nodes_per_router");
  check_count(p.local_parallel_links, kMaxSwitchRadix, "parallel_links", "parallel_links");
  if (int64_t{g} * a * (a - 1) / 2 * p.local_parallel_links > kMaxDragonflyCables)
    detail::fail("routers_per_group", "too many local cables (g * a * (a-1) / 2 * parallel_links > " +
                                          std::to_string(kMaxDragonflyCables) + ")");
  if (int64_t{g} * a * h / 2 > kMaxDragonflyCables)
    detail::fail("global_links_per_router", "too many global cables (g * a * h / 2 > " +
                                                std::to_string(kMaxDragonflyCables) + ")");
  if (p.global_arrangement != GlobalArrangement::absolute &&
      p.global_arrangement != GlobalArrangement::relative &&
      p.global_arrangement != GlobalArrangement::circulant)
    detail::fail("global_arrangement", "unknown arrangement (absolute, relative or circulant)");
  const int64_t ports = int64_t{p.nodes_per_router} * p.node.nics +
                        int64_t{a - 1} * p.local_parallel_links + h;
  if (p.router_radix != 0 && (p.router_radix < ports || p.router_radix > kMaxSwitchRadix))
    detail::fail("switch_radix", "a router cables p x NICs + (a - 1) x parallel_links + h = " +
                                     std::to_string(ports) + " ports; switch_radix must be " +
                                     "that or more (at most " + std::to_string(kMaxSwitchRadix) +
                                     "), got " + std::to_string(p.router_radix));
  detail::check_bandwidth(p.link_bandwidth_Bps, "link_bandwidth");
  detail::check_latency(p.link_latency_s, "link_latency");
  if (p.global_bandwidth_Bps) detail::check_bandwidth(*p.global_bandwidth_Bps, "global_bandwidth");
  if (p.global_latency_s) detail::check_latency(*p.global_latency_s, "global_latency");
}

namespace detail {

FabricSize dragonfly_fabric_size(const TopologyParams& p) {
  check_dragonfly(p);
  const int64_t a = p.routers_per_group, h = p.global_links_per_router, g = p.groups;
  const int64_t per_pair = g > 1 ? a * h / (g - 1) : 0;  // DragonflyLayout::links_per_group_pair
  const int64_t routers = g * a;
  return {routers, int64_t{p.nodes} * p.node.nics + routers * (a - 1) / 2 * p.local_parallel_links +
                       g * (g - 1) / 2 * per_pair};
}

void build_dragonfly(Topology& t, const TopologyParams& p) {
  check_dragonfly(p);
  auto layout = std::make_shared<DragonflyLayout>();
  DragonflyLayout& d = *layout;
  const int a = p.routers_per_group, h = p.global_links_per_router, g = p.groups;
  d.groups = g;
  d.routers_per_group = a;
  d.nodes_per_router = p.nodes_per_router;
  d.global_links_per_router = h;
  d.arrangement = p.global_arrangement;
  d.local_parallel = p.local_parallel_links;
  d.rail_optimized = p.rail_optimized;
  d.nics_per_node = p.node.nics;
  d.links_per_group_pair = g > 1 ? a * h / (g - 1) : 0;
  d.unused_global_ports_per_group = a * h - d.links_per_group_pair * (g - 1);
  const int m = d.links_per_group_pair;

  const int64_t routers = int64_t{g} * a;
  const FabricSize fabric = dragonfly_fabric_size(p);
  t.reserve(static_cast<std::size_t>(p.nodes * node_vertex_count(p.node) + fabric.vertices),
            static_cast<std::size_t>(p.nodes * node_cable_count(p.node) + fabric.cables));
  const NodeVertices nodes = add_nodes(t, TopologyKind::dragonfly, p.node, p.nodes);

  d.router.reserve(static_cast<std::size_t>(routers));
  for (int G = 0; G < g; ++G)
    for (int r = 0; r < a; ++r)
      d.router.push_back(
          t.add_vertex(VertexKind::fabric_switch, -1, G * a + r, 1, router_name(G, r)));

  // NICs: to router_of_nic (every NIC of node i on router floor(i / p), or rail by rail).
  d.nic_up.resize(static_cast<std::size_t>(p.nodes) * static_cast<std::size_t>(p.node.nics));
  for (std::size_t i = 0; i < d.nic_up.size(); ++i) {
    const VertexId router =
        d.router[static_cast<std::size_t>(d.router_of_nic(static_cast<int64_t>(i)))];
    d.nic_up[i] = t.add_cable(nodes.nics[i], router, p.node.nic_bandwidth_Bps, p.link_latency_s,
                              LinkKind::fabric);
  }

  // Local cables: all-to-all inside each group, a bundle per pair, its copies one after the
  // other (copy c of the bundle whose first link is l is l + 2c).
  const auto A = static_cast<std::size_t>(a);
  d.local.resize(static_cast<std::size_t>(routers) * (A - 1));
  for (int G = 0; G < g; ++G)
    for (int r = 0; r < a; ++r)
      for (int r2 = r + 1; r2 < a; ++r2) {
        const auto R = static_cast<std::size_t>(G * a + r);
        const auto R2 = static_cast<std::size_t>(G * a + r2);
        const LinkId l = t.add_cable(d.router[R], d.router[R2], p.link_bandwidth_Bps,
                                     p.link_latency_s, LinkKind::fabric);
        for (int c = 1; c < d.local_parallel; ++c)
          t.add_cable(d.router[R], d.router[R2], p.link_bandwidth_Bps, p.link_latency_s,
                      LinkKind::fabric);
        d.local[R * (A - 1) + static_cast<std::size_t>(r2 - 1)] = l;
        d.local[R2 * (A - 1) + static_cast<std::size_t>(r)] = reverse(l);
      }

  // Global cables: copy c of slot G -> T joins copy c of slot T -> G; each pair once.
  const double gbw = p.global_bandwidth_Bps.value_or(p.link_bandwidth_Bps);
  const double glat = p.global_latency_s.value_or(p.link_latency_s);
  d.global.resize(static_cast<std::size_t>(g) * static_cast<std::size_t>(g > 1 ? g - 1 : 0) *
                  static_cast<std::size_t>(m));
  for (int G = 0; G < g; ++G)
    for (int s = 0; s < g - 1; ++s) {
      const int T = dragonfly_slot_target(d.arrangement, g, G, s);
      if (T < G) continue;  // cabled from T's side
      const int back = dragonfly_slot_of(d.arrangement, g, T, G);
      for (int c = 0; c < m; ++c) {
        const int port = c * (g - 1) + s, back_port = c * (g - 1) + back;
        const VertexId u = d.router[static_cast<std::size_t>(G * a + port / h)];
        const VertexId v = d.router[static_cast<std::size_t>(T * a + back_port / h)];
        const LinkId l = t.add_cable(u, v, gbw, glat, LinkKind::fabric);
        d.global[d.global_index(G, T, c)] = l;
        d.global[d.global_index(T, G, c)] = reverse(l);
      }
    }
  t.set_dragonfly(std::move(layout));
}

}  // namespace detail
}  // namespace cs::topo
