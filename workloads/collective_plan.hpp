#pragma once
// A collective algorithm as data: who sends how much to whom, in stages.
//
// A plan is a list of stages run one after another: a stage starts when the previous one has
// finished. The transfers of a stage run at once. Bytes are a share of the collective's size
// S, the nccl-tests "size" (the buffer per rank for all_reduce, broadcast, reduce and
// all_to_all; the output of all_gather; the input of reduce_scatter), so one plan serves every
// size.
//
// Transfers with the same `chain` (>= 0) form one pipeline: each rank forwards what it
// receives as it arrives, so they all move at one common rate, the pace of their slowest
// edge (a pipelined ring or tree: the fluid limit of NCCL's chunks flowing with no barrier
// between steps); so every transfer of one chain has the same share. Chain ids of a stage
// number its pipelines 0, 1, ... Transfers with chain -1 are independent (a halving step, a
// direct all-to-all). A stage also costs `steps` per-step latencies on its critical path (a
// ring all-reduce's 2(n-1), one per halving step).
//
// Ranks are global rank numbers: workloads know ranks, not GPUs or links.
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "workloads/collective.hpp"

namespace cs::work {

struct Transfer {
  int src = 0, dst = 0;  // ranks, src != dst
  double share = 0;      // bytes / S, > 0
  int32_t chain = -1;    // pipeline id within the stage, or -1
};

// A stage's transfers are listed, or, for a direct exchange among n ranks, implicit: every
// ordered pair (a, b), a != b, of `pair_members`, a's sends before the next member's, each
// independent with share `pair_share` (n(n-1) transfers: 268 M over 16,384 ranks, which a list
// cannot hold). Read them through size() and transfer(i), or for_each, whichever form holds them.
struct Stage {
  std::string name;  // e.g. "ring all_reduce", "inter-node ring (rail)", "halving 2/3"
  std::vector<Transfer> transfers;  // listed (empty for an all-pairs stage)
  int steps = 1;     // per-step latencies on the stage's critical path (>= 1)
  // Of `steps`, those that cross nodes, where the plan knows its critical path's mix (the tree
  // across nodes: its chains in the nodes, then its levels between them); the others stay in
  // a node. -1: not stated, every step costs the mean over the pipeline's edges (a ring's
  // edges are its steps).
  int inter_node_steps = -1;
  std::vector<int> pair_members;  // an all-pairs stage's ranks (at least 2), else empty
  double pair_share = 0;          // each pair's share (> 0) of an all-pairs stage

  bool all_pairs() const { return !pair_members.empty(); }
  std::size_t size() const {
    const std::size_t n = pair_members.size();
    return all_pairs() ? n * (n - 1) : transfers.size();
  }
  // Transfer i < size(), in order.
  Transfer transfer(std::size_t i) const {
    if (!all_pairs()) return transfers[i];
    const auto [a, b] = pair_indices(i);
    return {pair_members[a], pair_members[b], pair_share, -1};
  }
  // An all-pairs stage's transfer i < size(): the indices in pair_members of its source and
  // destination (sources in order, each one's destinations in order, itself skipped).
  std::pair<std::size_t, std::size_t> pair_indices(std::size_t i) const {
    const std::size_t others = pair_members.size() - 1, a = i / others, k = i % others;
    return {a, k < a ? k : k + 1};
  }
  // pair_indices inverted: the transfer from pair_members[a] to pair_members[b], a != b.
  std::size_t pair_index(std::size_t a, std::size_t b) const { return a * (pair_members.size() - 1) + (b < a ? b : b - 1); }
  // f(transfer) for every transfer, in order.
  template <class F>
  void for_each(F&& f) const {
    if (!all_pairs()) {
      for (const Transfer& t : transfers) f(t);
      return;
    }
    for (int a : pair_members)
      for (int b : pair_members)
        if (a != b) f(Transfer{a, b, pair_share, -1});
  }
};

struct CollectivePlan {
  CollectiveOp op = CollectiveOp::all_reduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  std::vector<int> ranks;  // the group, in the algorithm's order; ranks[0] is the root
  std::vector<Stage> stages;
};

// Where the group's ranks sit: node_of[i] is the node of ranks[i]. hierarchical needs it;
// rings, trees and in_network use it for NCCL's channels and per-node chains; it may be left
// empty (then every rank counts as on one node; if given, one per rank).
struct GroupLayout {
  std::vector<int> ranks;
  std::vector<int> node_of;
  // NCCL channels: ring plans over >= 2 nodes run min(channels, the most members on one
  // node) rings, one per NIC rail, each carrying an equal part of the data
  // (collective_plan_rings.cpp: channel_rings); the multi-node tree runs both of its trees
  // on every channel's rail. 1: one ring.
  int channels = 1;
  // The torus the group runs on, its sizes per dimension (node i at position i, dimension 0
  // varying fastest), or empty off a torus. The torus algorithm needs it and one rank on every
  // node.
  std::vector<int> torus_dims;
  // Copies of that torus joined by a data-center network (a TPU multislice: node i in slice
  // i / prod(torus_dims)); 1: one torus.
  int torus_slices = 1;
};

// The plan of `algorithm` for `op` over the group. Throws PlanError when the pair is not
// supported, the group is too small, or the layout does not fit the algorithm (hierarchical
// needs the same number of ranks on every node; halving_doubling all_gather and
// reduce_scatter need a power-of-two group). `automatic` is not an algorithm here: callers
// choose (see the analytical model).
class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
CollectivePlan make_plan(CollectiveOp op, CollectiveAlgorithm algorithm, const GroupLayout& group);

// Algorithms that have a plan for `op` (not checking the layout), in a fixed order.
std::vector<CollectiveAlgorithm> algorithms_for(CollectiveOp op);

// The algorithms `automatic` weighs for `op`, as NCCL 2.20's tuner does (and XLA on a torus),
// in tie order: all_reduce ring, tree, in_network (NVLS, SHARP), torus; reduce_scatter and
// all_gather ring, torus; broadcast and reduce ring; all_to_all and send_recv direct.
// halving_doubling, hierarchical and direct for the other ops are no NCCL algorithm: they run
// only when asked for. Whether one fits a group (the fabric reduces, it is a torus) is the
// caller's check.
std::vector<CollectiveAlgorithm> tuned_algorithms_for(CollectiveOp op);

// Sum of shares a rank sends over the plan (for tests and the report).
double bytes_sent_share(const CollectivePlan& plan, int rank);

}  // namespace cs::work
