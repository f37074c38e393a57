#pragma once
// A collective benchmark as data, nccl-tests style: one op, one algorithm, a list of sizes.
#include <cstdint>
#include <string_view>
#include <vector>

namespace cs::work {

enum class CollectiveOp : uint8_t { all_reduce, reduce_scatter, all_gather, all_to_all, broadcast };
enum class CollectiveAlgorithm : uint8_t { ring, tree, halving_doubling, direct, hierarchical, automatic };

struct CollectiveSpec {
  CollectiveOp op = CollectiveOp::all_reduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  std::vector<double> sizes_bytes{1 << 20};  // each > 0; run one after another
  int ranks = 0;                             // 0 = all ranks of the topology
};

std::string_view to_string(CollectiveOp op);
std::string_view to_string(CollectiveAlgorithm algorithm);

// nccl-tests: busbw = algbw * factor(op, n). all_reduce 2(n-1)/n; reduce_scatter, all_gather
// and all_to_all (n-1)/n; broadcast 1.
double busbw_factor(CollectiveOp op, int ranks);

}  // namespace cs::work
