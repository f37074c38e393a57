#pragma once
// A collective benchmark as data, nccl-tests style: one op, one algorithm, a list of sizes.
#include <cstdint>
#include <string_view>
#include <vector>

namespace cs::work {

enum class CollectiveOp : uint8_t {
  all_reduce, reduce_scatter, all_gather, all_to_all, broadcast, reduce,
  send_recv,  // point to point: ranks[0] sends S to ranks[1]
};
enum class CollectiveAlgorithm : uint8_t {
  ring, tree, halving_doubling, direct, hierarchical,
  automatic,  // chosen per size by the analytical model, as NCCL's tuner does
  in_network, // the switch reduces: NVLS in an NVSwitch node, SHARP in fabric switches
};

struct CollectiveSpec {
  CollectiveOp op = CollectiveOp::all_reduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  std::vector<double> sizes_bytes{1 << 20};  // each > 0; run one after another
  int ranks = 0;                             // 0 = all ranks of the topology
};

std::string_view to_string(CollectiveOp op);
std::string_view to_string(CollectiveAlgorithm algorithm);

// nccl-tests: busbw = algbw * factor(op, n). all_reduce 2(n-1)/n; reduce_scatter, all_gather
// and all_to_all (n-1)/n; broadcast, reduce and send_recv 1.
double busbw_factor(CollectiveOp op, int ranks);

}  // namespace cs::work
