#include "sim/network/placement.hpp"

#include <numeric>
#include <string>

namespace cs::net {

Placement Placement::identity(int ranks) {
  if (ranks < 0) throw std::invalid_argument("Placement: ranks must be >= 0");
  Placement p;
  p.gpu_of_rank_.resize(static_cast<std::size_t>(ranks));
  std::iota(p.gpu_of_rank_.begin(), p.gpu_of_rank_.end(), 0);
  return p;
}

Placement::Placement(std::vector<int> gpu_of_rank, int gpus) : gpu_of_rank_(std::move(gpu_of_rank)) {
  std::vector<char> used(static_cast<std::size_t>(std::max(gpus, 0)), 0);
  for (std::size_t r = 0; r < gpu_of_rank_.size(); ++r) {
    const int g = gpu_of_rank_[r];
    if (g < 0 || g >= gpus)
      throw std::invalid_argument("Placement: rank " + std::to_string(r) + " on GPU " + std::to_string(g) +
                                  ", outside 0.." + std::to_string(gpus - 1));
    if (used[static_cast<std::size_t>(g)])
      throw std::invalid_argument("Placement: GPU " + std::to_string(g) + " holds two ranks");
    used[static_cast<std::size_t>(g)] = 1;
    identity_ = identity_ && g == static_cast<int>(r);
  }
}

}  // namespace cs::net
