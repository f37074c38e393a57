// Routes between two GPUs of an nvlink_mesh node: over the NVLink cables only, breadth-first
// from the source GPU, so a direct cable wins and otherwise the fewest GPUs forward.
#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "topology/routing_detail.hpp"

namespace cs::topo::detail {

void append_mesh_path(const Topology& t, int src, int dst, std::vector<LinkId>& out) {
  const VertexId from = t.gpu(src), to = t.gpu(dst);
  if (const auto direct = t.find_link(from, to)) {
    out.push_back(*direct);
    return;
  }
  // Local GPU index -> the NVLink it was reached by (kNone: not reached yet).
  constexpr LinkId kNone = ~LinkId{0};
  std::vector<LinkId> pred(static_cast<std::size_t>(t.gpus_per_node()), kNone);
  std::deque<VertexId> queue{from};
  const auto local = [&](VertexId v) { return static_cast<std::size_t>(t.vertex(v).index); };
  bool found = false;
  while (!queue.empty() && !found) {
    const VertexId u = queue.front();
    queue.pop_front();
    for (LinkId l : t.out_links(u)) {
      const VertexId v = t.link(l).to;
      if (t.link(l).kind != LinkKind::node_fabric || v == from || pred[local(v)] != kNone) continue;
      pred[local(v)] = l;
      if (v == to) {
        found = true;
        break;
      }
      queue.push_back(v);
    }
  }
  if (!found)
    throw RouteError("no NVLink path from " + t.vertex(from).name + " to " + t.vertex(to).name);
  const std::size_t first = out.size();
  for (VertexId v = to; v != from; v = t.link(pred[local(v)]).from) out.push_back(pred[local(v)]);
  std::reverse(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
}

}  // namespace cs::topo::detail
