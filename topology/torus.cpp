// Torus builder (2 or 3 dimensions, wrap-around; see topology/direct_layouts.hpp): one switch
// per position, each node's NICs cabled to the switch at its position; with slices > 1, that
// many tori and a DCN switch cabled to every position's switch.
#include <memory>
#include <string>

#include "topology/build_detail.hpp"
#include "topology/direct_layouts.hpp"

namespace cs::topo {
namespace {

// Largest dimension accepted: a ring longer than this is a typo.
constexpr int kMaxTorusDim = 1 << 16;
// Most cables per bundle between two neighbours.
constexpr int kMaxTorusParallel = 1 << 10;
// Most slices of a multislice: one DCN switch port per chip bounds it well before this.
constexpr int kMaxSlices = 1 << 12;

std::string switch_name(int slice, int slices, const std::vector<int>& coords) {
  std::string s;
  if (slices > 1) {
    s += 's';
    s += std::to_string(slice);
    s += '.';
  }
  s += 't';
  for (std::size_t d = 0; d < coords.size(); ++d) {
    if (d > 0) s += '.';
    s += std::to_string(coords[d]);
  }
  return s;
}

// Bundles along one dimension: a ring of `size` bundles, 1 for size 2, none for size 1, in
// each of the positions / size lines along it.
int64_t bundles_along(int64_t positions, int size) {
  if (size <= 1) return 0;
  return size == 2 ? positions / 2 : positions;
}

// Empty: 1; one entry: every dimension; else entry d.
int dim_parallel(const TopologyParams& p, std::size_t d) {
  const std::vector<int>& v = p.dim_parallel_links;
  return v.empty() ? 1 : v.size() == 1 ? v[0] : v[d];
}

}  // namespace

int torus_switch_ports(const TopologyParams& p) {
  int ports = p.node.nics;
  for (std::size_t d = 0; d < p.dims.size(); ++d)
    ports += (p.dims[d] >= 3 ? 2 : p.dims[d] == 2 ? 1 : 0) * dim_parallel(p, d);
  return ports + (p.slices > 1 ? 1 : 0);  // the DCN port
}

int TorusLayout::coord(int position, std::size_t d) const {
  for (std::size_t i = 0; i < d; ++i) position /= dims[i];
  return position % dims[d];
}

int TorusLayout::step(int position, std::size_t d, int direction) const {
  int stride = 1;
  for (std::size_t i = 0; i < d; ++i) stride *= dims[i];
  const int size = dims[d];
  const int x = coord(position, d);
  const int next = ((x + direction) % size + size) % size;
  return position + (next - x) * stride;
}

void check_torus(const TopologyParams& p) {
  if (p.dims.size() != 2 && p.dims.size() != 3)
    detail::fail("dims", "a torus has 2 or 3 dimensions, got " + std::to_string(p.dims.size()));
  int64_t positions = 1;
  std::string shape;
  for (std::size_t d = 0; d < p.dims.size(); ++d) {
    const int size = p.dims[d];
    if (size < 1 || size > kMaxTorusDim)
      detail::fail("dims." + std::to_string(d), "a dimension has from 1 to " +
                                                    std::to_string(kMaxTorusDim) +
                                                    " positions, got " + std::to_string(size));
    positions *= size;
    if (d > 0) shape += 'x';
    shape += std::to_string(size);
  }
  if (p.slices < 1 || p.slices > kMaxSlices)
    detail::fail("slices", "from 1 to " + std::to_string(kMaxSlices) + " slices, got " + std::to_string(p.slices));
  positions *= p.slices;
  if (p.slices > 1) shape = std::to_string(p.slices) + " x " + shape;
  if (positions > kMaxGpus)
    detail::fail("dims", "a " + shape + " torus has " + std::to_string(positions) +
                             " positions; at most " + std::to_string(kMaxGpus));
  if (positions != p.nodes)
    detail::fail("nodes", "a " + shape + " torus holds one node per position, " +
                              std::to_string(positions) + " nodes; got " + std::to_string(p.nodes));
  if (p.dim_parallel_links.size() > 1 && p.dim_parallel_links.size() != p.dims.size())
    detail::fail("parallel_links", "a torus of " + std::to_string(p.dims.size()) +
                                       " dimensions takes one parallel_links number or one "
                                       "per dimension, got " +
                                       std::to_string(p.dim_parallel_links.size()) + " entries");
  int64_t bundles = 0;
  for (std::size_t d = 0; d < p.dims.size(); ++d) {
    const int P = dim_parallel(p, d);
    if (P < 1 || P > kMaxTorusParallel)
      detail::fail(p.dim_parallel_links.size() > 1 ? "parallel_links." + std::to_string(d)
                                                   : "parallel_links",
                   "cables per bundle must be from 1 to " + std::to_string(kMaxTorusParallel) +
                       ", got " + std::to_string(P));
    bundles += bundles_along(positions, p.dims[d]) * P;
  }
  if (bundles > kMaxGpus) detail::fail("parallel_links", "too many torus cables");
  if (p.router_radix != 0 &&
      (p.router_radix < torus_switch_ports(p) || p.router_radix > kMaxSwitchRadix))
    detail::fail("switch_radix", "a torus switch cables NICs + its torus bundles = " +
                                     std::to_string(torus_switch_ports(p)) +
                                     " ports; switch_radix must be that or more (at most " +
                                     std::to_string(kMaxSwitchRadix) + "), got " +
                                     std::to_string(p.router_radix));
  detail::check_bandwidth(p.link_bandwidth_Bps, "link_bandwidth");
  detail::check_latency(p.link_latency_s, "link_latency");
  if (p.slices > 1) {
    detail::check_bandwidth(p.dcn_bandwidth_Bps, "dcn_bandwidth");
    detail::check_latency(p.dcn_latency_s, "dcn_latency");
  }
}

namespace detail {

FabricSize torus_fabric_size(const TopologyParams& p) {
  check_torus(p);
  int64_t n = 1;
  for (int d : p.dims) n *= d;
  n *= p.slices;
  FabricSize out{n, int64_t{p.nodes} * p.node.nics};
  for (std::size_t d = 0; d < p.dims.size(); ++d) out.cables += bundles_along(n, p.dims[d]) * dim_parallel(p, d);
  if (p.slices > 1) out.vertices += 1, out.cables += n;  // the DCN switch and its cables
  return out;
}

void build_torus(Topology& t, const TopologyParams& p) {
  check_torus(p);
  auto layout = std::make_shared<TorusLayout>();
  TorusLayout& tl = *layout;
  tl.dims = p.dims;
  tl.slices = p.slices;
  const int n = tl.positions();
  const std::size_t D = tl.dims.size();
  for (std::size_t d = 0; d < D; ++d) tl.parallel.push_back(dim_parallel(p, d));
  const FabricSize fabric = torus_fabric_size(p);
  t.reserve(static_cast<std::size_t>(p.nodes * node_vertex_count(p.node) + fabric.vertices),
            static_cast<std::size_t>(p.nodes * node_cable_count(p.node) + fabric.cables));
  const NodeVertices nodes = add_nodes(t, TopologyKind::torus, p.node, p.nodes);

  tl.sw.reserve(static_cast<std::size_t>(n));
  std::vector<int> coords(D);
  for (int x = 0; x < n; ++x) {
    for (std::size_t d = 0; d < D; ++d) coords[d] = tl.coord(x, d);
    tl.sw.push_back(t.add_vertex(VertexKind::fabric_switch, -1, x, 1, switch_name(tl.slice_of(x), tl.slices, coords)));
  }

  tl.nic_up.resize(static_cast<std::size_t>(p.nodes) * static_cast<std::size_t>(p.node.nics));
  for (std::size_t i = 0; i < tl.nic_up.size(); ++i)
    tl.nic_up[i] = t.add_cable(nodes.nics[i], tl.sw[i / static_cast<std::size_t>(p.node.nics)],
                               p.node.nic_bandwidth_Bps, p.link_latency_s, LinkKind::fabric);

  tl.plus.assign(static_cast<std::size_t>(n) * D, TorusLayout::kNone);
  for (int x = 0; x < n; ++x)
    for (std::size_t d = 0; d < D; ++d) {
      const int size = tl.dims[d];
      if (size == 1 || (size == 2 && tl.coord(x, d) == 1)) continue;  // none, or cabled from 0
      const int next = tl.step(x, d, +1);
      LinkId l = 0;
      for (int c = 0; c < tl.parallel[d]; ++c) {  // the bundle, copy 0 first
        const LinkId copy = t.add_cable(tl.sw[static_cast<std::size_t>(x)],
                                        tl.sw[static_cast<std::size_t>(next)],
                                        p.link_bandwidth_Bps, p.link_latency_s, LinkKind::fabric);
        if (c == 0) l = copy;
      }
      tl.plus[static_cast<std::size_t>(x) * D + d] = l;
      // Size 2: the +1 neighbour of position 1 is position 0, over the same cable.
      if (size == 2) tl.plus[static_cast<std::size_t>(next) * D + d] = reverse(l);
    }
  if (tl.slices > 1) {
    tl.dcn = t.add_vertex(VertexKind::fabric_switch, -1, n, 2, "dcn");
    tl.dcn_up.reserve(static_cast<std::size_t>(n));
    for (int x = 0; x < n; ++x)
      tl.dcn_up.push_back(t.add_cable(tl.sw[static_cast<std::size_t>(x)], tl.dcn, p.dcn_bandwidth_Bps,
                                      p.dcn_latency_s, LinkKind::fabric));
  }
  t.set_torus(std::move(layout));
}

}  // namespace detail
}  // namespace cs::topo
