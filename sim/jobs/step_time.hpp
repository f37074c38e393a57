#pragma once
// How much slower a job runs on the GPUs it was given than on a compact placement: the seam
// between the scheduler and the training model.
//
// A job's duration is its run time on a compact placement (the fewest domains it could span);
// on an allocation it progresses at 1 / slowdown of that speed. The slowdown is a function of
// the placement, asked once per distinct shape (PlacementShape: GPUs, nodes, domains spanned)
// and class, and cached (StepTimeCache): allocations of the same shape are taken to run
// alike, which holds for a fabric whose leaves (groups) are alike.
//
// Where a job class is a `training` workload, its step time on the allocation comes from
// simulating the step (sim/compute/training_step.hpp: simulate_training_step runs one step
// through the communication layer with a net::Placement of the job's ranks on those GPUs), and
// slowdown = step time on the allocation / step time on a compact one. That model implements
// StepTimeModel with the allocation's node list. Until it is wired, SpreadPenaltyModel stands
// in:
//   slowdown = 1 + spread_penalty x (domains spanned - the fewest the job could span)
// with a per-class spread_penalty. Its basis: a data-parallel step that crosses leaves sends
// its gradient all-reduce through the spine (or a dragonfly's global links), which is
// oversubscribed or shared where a leaf is not; the exposed part of that communication grows
// with the leaves spanned. How much is model-specific: Tiresias (Gu et al., NSDI 2019, section
// 2.2) measured models with large tensors (VGG) training markedly slower when their GPUs were
// not consolidated, while ResNet-like models barely noticed. So the penalty is the scenario's
// to give (0 by default: insensitive), from a measurement or from the simulated step.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "sim/jobs/cluster_state.hpp"

namespace cs::jobs {

struct PlacementShape {
  int gpus = 0;
  int nodes = 0;        // nodes the allocation spans
  int domains = 0;      // domains (leaves, groups) it spans
  int min_domains = 1;  // the fewest domains the job could span (ClusterState::min_spread)

  bool operator==(const PlacementShape&) const = default;
};

PlacementShape shape_of(const ClusterState& cluster, const Allocation& allocation);

class StepTimeModel {
 public:
  virtual ~StepTimeModel() = default;
  // The slowdown (> 0; >= 1 when a compact placement is the fastest) of a job of class
  // `job_class` (-1: a trace job without a class) on `allocation`, whose shape is `shape`,
  // relative to a compact placement.
  virtual double slowdown(int job_class, const PlacementShape& shape,
                          const Allocation& allocation) = 0;
};

// 1 + penalty[class] x (domains - min_domains); classless jobs are never slowed.
class SpreadPenaltyModel final : public StepTimeModel {
 public:
  explicit SpreadPenaltyModel(std::vector<double> penalty_per_class);
  double slowdown(int job_class, const PlacementShape& shape, const Allocation& allocation) override;

 private:
  std::vector<double> penalty_;
};

// Asks the model once per (class, shape) and remembers the answer.
class StepTimeCache {
 public:
  explicit StepTimeCache(std::unique_ptr<StepTimeModel> model) : model_(std::move(model)) {}
  double slowdown(int job_class, const PlacementShape& shape, const Allocation& allocation);
  std::size_t distinct_shapes() const { return cache_.size(); }
  uint64_t queries() const { return queries_; }

 private:
  struct Key {
    int job_class;
    PlacementShape shape;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };
  // The answers asked for lately, direct-mapped by the key's hash, in front of the map: a run
  // asks about a few shapes again and again (a shared cluster's year: 2 M questions, 3,000
  // shapes), and the map's lookup (a modulo by a prime, a pointer chase) cost 3% of it.
  // 4,096 of them (128 KB, the hot ones a few lines): with 256, conflicts sent 7% of the
  // questions of bench_jobs' month at 85% to the map, two thirds of this function's time in
  // the year's profile; with 4,096, fewer than 5,000 of each month's questions go there
  // (1,033 and 2,572 distinct shapes).
  struct Recent {
    Key key{-2, {}};  // class -2: empty (classes are >= -1)
    double slowdown = 0.0;
  };
  static constexpr std::size_t kRecent = 4096;
  std::unique_ptr<StepTimeModel> model_;
  std::vector<Recent> recent_ = std::vector<Recent>(kRecent);  // on the heap: a cluster may live on a stack
  std::unordered_map<Key, double, KeyHash> cache_;
  uint64_t queries_ = 0;
};

}  // namespace cs::jobs
