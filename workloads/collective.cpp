#include "workloads/collective.hpp"

#include <numeric>

namespace cs::work {

std::string_view to_string(CollectiveOp op) { return name_of(kCollectiveOpNames, op); }

std::string_view to_string(CollectiveAlgorithm algorithm) { return name_of(kCollectiveAlgorithmNames, algorithm); }

double busbw_factor(CollectiveOp op, int ranks) {
  const double n = ranks;
  switch (op) {
    case CollectiveOp::all_reduce: return 2.0 * (n - 1) / n;
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_gather:
    case CollectiveOp::all_to_all: return (n - 1) / n;
    case CollectiveOp::broadcast:
    case CollectiveOp::reduce:
    case CollectiveOp::send_recv: return 1.0;
  }
  return 1.0;
}

std::vector<std::vector<int>> collective_groups(const CollectiveSpec& spec, int total_ranks) {
  std::vector<int> base = spec.rank_list;
  if (base.empty()) {
    base.resize(spec.ranks > 0 ? spec.ranks : total_ranks);
    std::iota(base.begin(), base.end(), 0);
  }
  if (spec.group_size <= 0) return {base};
  const std::size_t g = spec.group_size, s = spec.group_stride, block = g * s;
  if (base.size() % block != 0)
    throw std::invalid_argument("groups of " + std::to_string(g) + " with stride " + std::to_string(s) +
                                " need a multiple of " + std::to_string(block) + " ranks; got " +
                                std::to_string(base.size()));
  std::vector<std::vector<int>> groups;
  for (std::size_t b = 0; b < base.size(); b += block)
    for (std::size_t j = 0; j < s; ++j) {
      auto& group = groups.emplace_back();
      for (std::size_t i = 0; i < g; ++i) group.push_back(base[b + j + i * s]);
    }
  return groups;
}

}  // namespace cs::work
