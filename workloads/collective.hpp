#pragma once
// A collective benchmark as data, nccl-tests style: one op, one algorithm, a list of sizes.
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/enum_table.hpp"

namespace cs::work {

enum class CollectiveOp : uint8_t {
  all_reduce, reduce_scatter, all_gather, all_to_all, broadcast, reduce,
  send_recv,  // point to point: ranks[0] sends S to ranks[1]
};
enum class CollectiveAlgorithm : uint8_t {
  ring, tree, halving_doubling, direct, hierarchical,
  automatic,  // chosen per size by the analytical model, as NCCL's tuner does
  in_network, // the switch reduces: NVLS in an NVSwitch node, SHARP in fabric switches
  torus,      // XLA on a TPU torus: bidirectional rings along one dimension after another
};
// workload.op (nccl-tests' semantics; "first rank": the group's first).
inline constexpr auto kCollectiveOpNames = std::to_array<EnumName<CollectiveOp>>({
    {"all_reduce", CollectiveOp::all_reduce, "every rank ends with the sum of every rank's buffer"},
    {"reduce_scatter", CollectiveOp::reduce_scatter, "every rank ends with its 1/n share of the sum"},
    {"all_gather", CollectiveOp::all_gather, "every rank ends with every rank's share"},
    {"all_to_all", CollectiveOp::all_to_all, "every rank sends a distinct share to every other"},
    {"broadcast", CollectiveOp::broadcast, "the first rank's buffer goes to every rank"},
    {"reduce", CollectiveOp::reduce, "the sum of every rank's buffer lands on the first rank"},
    {"send_recv", CollectiveOp::send_recv, "point to point: the first rank of a pair sends to the second"},
});
static_assert(names_every_value<kCollectiveOpNames>());
// workload.algorithm.
inline constexpr auto kCollectiveAlgorithmNames = std::to_array<EnumName<CollectiveAlgorithm>>({
    {"ring", CollectiveAlgorithm::ring, "pipelined ring"},
    {"tree", CollectiveAlgorithm::tree, "double binary tree"},
    {"halving_doubling", CollectiveAlgorithm::halving_doubling, "recursive halving and doubling (Rabenseifner)"},
    {"direct", CollectiveAlgorithm::direct, "point to point between the ranks"},
    {"hierarchical", CollectiveAlgorithm::hierarchical, "inside nodes, then per rail across nodes, then inside"},
    {"in_network", CollectiveAlgorithm::in_network, "the switches reduce: NVLS in NVSwitch nodes, SHARP in the fabric"},
    {"torus", CollectiveAlgorithm::torus, "XLA on a torus: bidirectional rings along each dimension in turn"},
    {"auto", CollectiveAlgorithm::automatic, "chosen per size by the analytical model, as NCCL's tuner does"},
});
static_assert(names_every_value<kCollectiveAlgorithmNames>());

// The most NCCL channels a group runs (workload.channels' maximum, and the cap of the default,
// which follows the node's NIC count: 1,024 NICs per node still give 64 rings, not 1,024).
inline constexpr int kMaxChannels = 64;

struct CollectiveSpec {
  CollectiveOp op = CollectiveOp::all_reduce;
  // Run one after another for every size; more than one: an nccl-tests table per algorithm.
  std::vector<CollectiveAlgorithm> algorithms{CollectiveAlgorithm::ring};
  std::vector<double> sizes_bytes{1 << 20};  // each > 0; run one after another
  int ranks = 0;                             // 0 = all ranks of the topology; else the first N
  std::vector<int> rank_list;                // explicit ranks (overrides `ranks` when not empty)
  // Communicator groups: 0 = one group of all the ranks above. Otherwise groups of
  // group_size members, taking every group_stride-th rank (see collective_groups).
  int group_size = 0;
  int group_stride = 1;
  int channels = 0;  // NCCL channels (rings one per NIC rail); 0 = the node's NIC count, at most kMaxChannels
};

// The communicator groups of a spec over `total_ranks` ranks. The base list is rank_list, or
// the first `ranks`, or all. With group_size g and stride s the base is cut into blocks of g*s
// ranks; block b holds s groups, group j of it being base[b*g*s + j + i*s] for i < g (stride 1:
// consecutive ranks, the tensor-parallel layout; stride = TP size: the data-parallel layout).
// Throws std::invalid_argument when the base's length is not a multiple of g*s.
std::vector<std::vector<int>> collective_groups(const CollectiveSpec& spec, int total_ranks);

std::string_view to_string(CollectiveOp op);
std::string_view to_string(CollectiveAlgorithm algorithm);

// nccl-tests: busbw = algbw * factor(op, n). all_reduce 2(n-1)/n; reduce_scatter, all_gather
// and all_to_all (n-1)/n; broadcast, reduce and send_recv 1.
double busbw_factor(CollectiveOp op, int ranks);

}  // namespace cs::work
