// The torus: XLA's multi-dimensional all-reduce on a TPU slice, per-dimension bidirectional rings,
// and on a multislice the data-center network's ring between slices.
#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "workloads/collective_plan_detail.hpp"

namespace cs::work::detail {

namespace {

// The group's members line by line along dimension d: every line of positions that differ only
// in coordinate d, each walked in increasing coordinate (node i sits at position i, dimension 0
// varying fastest). by_position[p] is the rank at position p.
std::vector<Members> lines_along(const std::vector<int>& dims, const Members& by_position, std::size_t d) {
  std::size_t stride = 1;
  for (std::size_t i = 0; i < d; ++i) stride *= static_cast<std::size_t>(dims[i]);
  const auto size = static_cast<std::size_t>(dims[d]);
  std::vector<Members> lines;
  for (std::size_t p = 0; p < by_position.size(); ++p) {
    if (p / stride % size != 0) continue;  // not the line's first position
    Members line;
    for (std::size_t k = 0; k < size; ++k) line.push_back(by_position[p + k * stride]);
    lines.push_back(std::move(line));
  }
  return lines;
}

// The ranks at the same position of every slice, one line per position, slices in order.
std::vector<Members> across_slices(std::size_t slice_positions, const Members& by_position) {
  std::vector<Members> lines(slice_positions);
  for (std::size_t p = 0; p < by_position.size(); ++p) lines[p % slice_positions].push_back(by_position[p]);
  return lines;
}

// Each line as two rings, one each way round, every ring a pipeline of its own.
std::vector<Members> both_ways(const std::vector<Members>& lines) {
  std::vector<Members> rings;
  for (const Members& line : lines) {
    rings.push_back(line);
    rings.emplace_back(line.rbegin(), line.rend());
  }
  return rings;
}

// The rank at every torus position, from node_of, and the slices the group spans; throws
// unless the group holds one rank on every node of whole slices: every slice of a multislice,
// or some of them (hybrid sharding's groups of one slice or several). The slices the group
// holds take the positions in their order.
std::pair<Members, int> rank_by_position(const GroupLayout& group) {
  std::size_t slice_positions = 1;
  for (int d : group.torus_dims) slice_positions *= static_cast<std::size_t>(d);
  std::vector<std::size_t> held;  // the slices of the group's nodes, in order
  for (int node : group.node_of)
    if (node >= 0) held.push_back(std::size_t(node) / slice_positions);
  std::sort(held.begin(), held.end());
  held.erase(std::unique(held.begin(), held.end()), held.end());
  const int slices = held.empty() ? group.torus_slices : static_cast<int>(held.size());
  const std::size_t positions = slice_positions * static_cast<std::size_t>(slices);
  const auto refuse = [&](const std::string& why) {
    return PlanError("torus needs one rank on each node of whole slices of " + std::to_string(slice_positions) +
                     " nodes (" + std::to_string(positions) + " here); " + why);
  };
  if (group.ranks.size() != positions || group.node_of.size() != positions)
    throw refuse("the group has " + std::to_string(group.ranks.size()) + " ranks");
  Members by_position(positions, -1);
  for (std::size_t i = 0; i < positions; ++i) {
    const int node = group.node_of[i];
    if (node < 0 || std::size_t(node) / slice_positions >= std::size_t(group.torus_slices))
      throw refuse("node " + std::to_string(node) + " is not on the torus");
    const auto slice = std::lower_bound(held.begin(), held.end(), std::size_t(node) / slice_positions) - held.begin();
    const std::size_t at = std::size_t(slice) * slice_positions + std::size_t(node) % slice_positions;
    if (by_position[at] >= 0) throw refuse("node " + std::to_string(node) + " holds more than one");
    by_position[at] = group.ranks[i];
  }
  return {by_position, slices};
}

}  // namespace

// XLA's all-reduce on a torus: reduce-scatter along dimension 1 with the buffer split in two
// halves going opposite ways round each ring (so both directions of every link carry data),
// then along dimension 2 on the 1/d1 of the data each rank now holds, and so on; the
// all-gathers in reverse order. Dimension i's stage moves (d_i - 1)/d_i of what is left, half
// each way: an uncontended all-reduce takes sum_i 2 (d_i - 1) / (d_i prod_{j<i} d_j) S / (2 B)
// on links of B per direction. Dimensions of size 1 are skipped.
//
// A multislice (torus_slices = N > 1) adds, between the slice's reduce-scatters and its
// all-gathers, the data-parallel step over the data-center network that MaxText's multislice
// runs: each chip's 1/P of the data (P chips a slice) reduce-scattered and all-gathered on a
// one-way ring through the chips at its position in every slice, (N - 1) / N of it per phase
// through the chip's DCN port of B_dcn per direction: 2 (N - 1) / N S / (P B_dcn) added to an
// all-reduce. One way round suffices: the DCN is switched, a ring already fills a port's both
// directions (sending to the next slice, receiving from the previous).
std::vector<Stage> torus_plan(CollectiveOp op, const GroupLayout& group) {
  const std::vector<int>& dims = group.torus_dims;
  if (dims.empty()) throw PlanError("torus needs a torus fabric (topology kind torus or tpu_slice)");
  const auto [by_position, slices] = rank_by_position(group);
  std::vector<Stage> scatter, gather;
  double left = 1;  // share of S each rank still reduces (reduce-scatter) or will hold (all-gather)
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] < 2) continue;
    const double n = dims[d], half = (n - 1) / n * left / 2;
    const std::vector<Members> rings = both_ways(lines_along(dims, by_position, d));
    const Transfers edges = per_group(rings, [half](const Members& ring, int32_t chain) { return ring_edges(ring, half, chain); });
    const std::string along = " along dimension " + std::to_string(d + 1);
    scatter.push_back(stage("torus reduce_scatter" + along, edges, dims[d] - 1));
    gather.insert(gather.begin(), stage("torus all_gather" + along, edges, dims[d] - 1));
    left /= n;
  }
  if (slices > 1) {
    const double n = slices, share = (n - 1) / n * left;
    const Transfers edges = per_group(across_slices(by_position.size() / slices, by_position),
                                      [share](const Members& ring, int32_t chain) { return ring_edges(ring, share, chain); });
    scatter.push_back(stage("torus reduce_scatter across slices", edges, slices - 1));
    gather.insert(gather.begin(), stage("torus all_gather across slices", edges, slices - 1));
  }
  switch (op) {
    case CollectiveOp::reduce_scatter: return scatter;
    case CollectiveOp::all_gather: return gather;
    case CollectiveOp::all_reduce:
      scatter.insert(scatter.end(), gather.begin(), gather.end());
      return scatter;
    default: break;
  }
  throw PlanError(unsupported(CollectiveAlgorithm::torus, op));
}

}  // namespace cs::work::detail
