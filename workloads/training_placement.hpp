#pragma once
// Ranks of a training plan: their coordinates in the five parallel dimensions, the
// communicator groups they form, and their placement on GPUs by parallel.order.
//
// A rank's coordinates are (tp, cp, ep, edp, pp), where edp is the expert-data-parallel
// replica (dp = ep x edp). Ranks are numbered canonically, tp fastest, then cp, ep, edp, pp:
// rank = tp + TP (cp + CP (ep + EP (edp + EDP pp))). parallel.order decides which GPU each rank
// runs on: GPU index = the same mixed-radix number with the dimensions in the order's sequence
// (the first varying fastest), so with the default "tp-cp-ep-dp-pp" rank r runs on GPU r and
// tensor-parallel peers are neighbours (one node when tp divides the node's GPU count). GPUs
// are numbered node by node (GPU g is on node g / gpus_per_node). No topology here.
#include <array>
#include <initializer_list>
#include <vector>

#include "workloads/training_plan.hpp"

namespace cs::work {

enum class Dim : uint8_t { tp, cp, ep, edp, pp };

struct RankCoords {
  int tp = 0, cp = 0, ep = 0, edp = 0, pp = 0;
  int operator[](Dim d) const;
  int& operator[](Dim d);
};

class RankLayout {
 public:
  // `plan` must have passed validate() (sizes >= 1, ep divides dp, a valid order).
  explicit RankLayout(const ParallelPlan& plan);

  int ranks() const { return ranks_; }
  int size(Dim d) const { return sizes_[static_cast<int>(d)]; }
  RankCoords coords(int rank) const;
  int rank(const RankCoords& c) const;
  // The GPU index rank `rank` runs on.
  int gpu(int rank) const;
  // gpu(r) for every rank r: the placement the communication layer maps ranks with.
  std::vector<int> gpu_of_rank() const;

  // The ranks sharing every coordinate of `rank` except `varying`, in canonical order
  // (ascending rank). group(r, {Dim::tp}) is r's tensor-parallel group.
  std::vector<int> group(int rank, std::initializer_list<Dim> varying) const;

 private:
  int ranks_ = 1;
  std::array<int, 5> sizes_{};      // by Dim
  std::array<int, 5> gpu_stride_{}; // by Dim: the GPU index's stride of each dimension
};

}  // namespace cs::work
