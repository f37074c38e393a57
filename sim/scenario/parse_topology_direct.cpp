// topology.* for the direct networks: dragonfly and torus. Their sizes default from each
// other (nodes from groups or dims), and the builders' own checks (topo::check_dragonfly,
// topo::check_torus) decide what is valid, reported at topology.<key>.
#include "sim/scenario/parse_sections.hpp"
#include "sim/scenario/parse_util.hpp"
#include "sim/scenario/quantity_range.hpp"
#include "topology/direct_layouts.hpp"

namespace cs::scenario::detail {
namespace {

constexpr int64_t kMaxPorts = 4096;  // a, p, h: as the schema
constexpr int64_t kMaxGroups = 65536;

struct DragonflySize {
  int64_t a, p, h;
};

DragonflySize dragonfly_size(const json& t) {
  return {get_int(t, "routers_per_group", kTopology, 8, 1, kMaxPorts),
          get_int(t, "nodes_per_router", kTopology, 4, 1, kMaxPorts),
          get_int(t, "global_links_per_router", kTopology, 4, 1, kMaxPorts)};
}

std::vector<int> torus_dims(const json& t) {
  const json* list = member(t, "dims");
  if (!list)
    throw InputError("topology.dims", "a torus needs its size: a list of 2 or 3 dimensions",
                     "e.g. \"dims\": [4, 4, 4]");
  if (!list->is_array() || list->size() < 2 || list->size() > 3)
    throw InputError("topology.dims", "expected a list of 2 or 3 sizes; got " + describe_value(*list));
  std::vector<int> dims;
  for (std::size_t i = 0; i < list->size(); ++i)
    dims.push_back(static_cast<int>(int_value((*list)[i], join_path("topology.dims", i), 1, 65536)));
  return dims;
}

// Runs a builder check, reporting its BuildError at topology.<param>.
void check_with_builder(void (*check)(const topo::TopologyParams&), const topo::TopologyParams& p) {
  try {
    check(p);
  } catch (const topo::BuildError& e) {
    throw InputError(join_path(kTopology, e.param()), e.what());
  }
}

}  // namespace

int64_t direct_default_nodes(const json& t, topo::TopologyKind kind) {
  if (kind == topo::TopologyKind::torus) {
    int64_t n = 1;
    for (int d : torus_dims(t)) n *= d;
    return n;
  }
  if (kind == topo::TopologyKind::dragonfly) {
    const DragonflySize s = dragonfly_size(t);
    return s.a * s.p * get_int(t, "groups", kTopology, s.a * s.h + 1, 1, kMaxGroups);
  }
  return 1;
}

void parse_dragonfly(const json& t, topo::TopologyParams& p) {
  const DragonflySize s = dragonfly_size(t);
  p.routers_per_group = static_cast<int>(s.a);
  p.nodes_per_router = static_cast<int>(s.p);
  p.global_links_per_router = static_cast<int>(s.h);
  if (!member(t, "groups")) {
    // The fewest groups that hold the nodes.
    const int64_t per_group = s.a * s.p, needed = (p.nodes + per_group - 1) / per_group;
    if (needed > s.a * s.h + 1)
      throw InputError("topology.nodes",
                       "a dragonfly of " + std::to_string(s.a) + " routers x " + std::to_string(s.p) +
                           " nodes per group holds at most a*p*(a*h+1) = " +
                           std::to_string(per_group * (s.a * s.h + 1)) + " nodes; got " +
                           std::to_string(p.nodes),
                       "raise routers_per_group, nodes_per_router or global_links_per_router");
    p.groups = static_cast<int>(needed);
  } else {
    p.groups = static_cast<int>(get_int(t, "groups", kTopology, 1, 1, kMaxGroups));
  }
  if (member(t, "global_bandwidth"))
    p.global_bandwidth_Bps = get_ranged(t, "global_bandwidth", kTopology, "link_bandwidth", p.link_bandwidth_Bps);
  if (member(t, "global_latency"))
    p.global_latency_s = get_ranged(t, "global_latency", kTopology, "latency", p.link_latency_s);
  using topo::GlobalArrangement;
  p.global_arrangement =
      get_choice(t, "global_arrangement", kTopology, topo::kGlobalArrangementNames, GlobalArrangement::absolute);
  check_with_builder(topo::check_dragonfly, p);
}

void parse_torus(const json& t, topo::TopologyParams& p) {
  p.dims = torus_dims(t);
  check_torus_params(p);
}

void check_torus_params(const topo::TopologyParams& p) { check_with_builder(topo::check_torus, p); }

}  // namespace cs::scenario::detail
