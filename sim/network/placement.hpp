#pragma once
// Where a workload's ranks run: rank r on GPU gpu(r) of the topology (a topology rank: node x
// GPUs per node + local index). Traffic and collective workloads use the identity; a training
// job orders its ranks by its parallel plan (tensor-parallel peers on one node). The
// communication layer (comm.hpp) takes workload ranks and routes between their GPUs.
//
// Invariants: every rank has a distinct GPU in [0, gpus).
#include <span>
#include <stdexcept>
#include <vector>

namespace cs::net {

class Placement {
 public:
  // Rank r on GPU r, for `ranks` ranks (>= 0).
  static Placement identity(int ranks);
  // Rank r on GPU gpu_of_rank[r]; throws std::invalid_argument when a GPU is outside
  // [0, gpus) or holds two ranks.
  Placement(std::vector<int> gpu_of_rank, int gpus);

  int ranks() const { return static_cast<int>(gpu_of_rank_.size()); }
  int gpu(int rank) const { return gpu_of_rank_[static_cast<std::size_t>(rank)]; }
  std::span<const int> gpus() const { return gpu_of_rank_; }
  bool is_identity() const { return identity_; }

 private:
  Placement() = default;
  std::vector<int> gpu_of_rank_;
  bool identity_ = true;
};

}  // namespace cs::net
