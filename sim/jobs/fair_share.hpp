#pragma once
// Slurm's classic fair-share factor (priority/multifactor with PriorityFlags=NO_FAIR_TREE,
// slurm.schedmd.com/classic_fair_share.html), for queues that are the accounts directly under
// the root (a flat tree, where the classic and depth-oblivious factors agree):
//   F = 2^(-U / S)
// where S is the queue's normalized shares (its quota over the sum of the quotas) and U its
// normalized usage: its decayed usage over the sum of all queues' decayed usage (0 when no
// queue has used anything yet: F = 1 for all). F = 1 for a queue that used nothing, 0.5 for
// one that used exactly its share, less for one that used more; a queue with no shares has
// F = 0 (priority_p_calc_fs_factor's rule).
//
// Usage is GPU-seconds allocated, decayed with a half-life h (PriorityDecayHalfLife): usage
// from time s counts 2^(-(t - s) / h) at time t. Slurm applies the decay every
// PriorityCalcPeriod (5 min); here it is exact and continuous: with g GPUs held since t0,
//   U(t) = U(t0) d + g (h / ln 2) (1 - d),   d = 2^(-(t - t0) / h)
// and h = 0 means no decay (U grows by g (t - t0)). Units: GPU-seconds, seconds.
#include <cstddef>
#include <vector>

namespace cs::jobs {

class FairShare {
 public:
  // quotas: one per queue (>= 0); half_life_s >= 0.
  FairShare(std::vector<double> quotas, double half_life_s, double now_s = 0.0);

  // The queue holds `gpus` GPUs from now on (usage accrues at that rate).
  void set_held(int queue, double gpus, double now_s);
  // Decayed usage of a queue at now_s (GPU-seconds).
  double usage(int queue, double now_s) const;
  // F of every queue at now_s, in queue order; the second into `out` (a scheduling pass's
  // buffer, reused).
  std::vector<double> factors(double now_s) const;
  void factors(double now_s, std::vector<double>& out) const;
  // The exponent x of every queue's F = 2^x at now_s, into `out`: -U / S, or -infinity for a
  // queue with no shares (2^-inf = 0). std::exp2 of each is exactly factors()'s F.
  void factor_exponents(double now_s, std::vector<double>& out) const;
  double normalized_shares(int queue) const { return shares_[static_cast<std::size_t>(queue)]; }

 private:
  double decay(double dt) const;  // d over dt seconds
  double accrued(double gpus, double dt) const;  // usage added over dt by `gpus` held
  double usage_of(std::size_t queue, double now_s) const;  // usage(), inline in the file's callers

  std::vector<double> shares_;
  double half_life_s_;
  std::vector<double> usage_;   // at since_
  std::vector<double> held_;    // GPUs held since since_
  std::vector<double> since_;
};

}  // namespace cs::jobs
