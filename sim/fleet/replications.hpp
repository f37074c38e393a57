#pragma once
// Independent replications of a stochastic run, in parallel with TBB, and their statistics.
//
// Replication i runs with seed first_seed + i and writes only its own slot of the result, so
// the results (and everything computed from them, in index order) are identical for any thread
// count. threads: 0 = TBB's default, 1 = serial in the calling thread, n = at most n threads.
// An exception thrown by a replication propagates to the caller (TBB rethrows it).
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "sim/engine/statistics.hpp"
#include "sim/fleet/training_run.hpp"

namespace cs::fleet {

template <class RunOne>
auto run_replications(std::size_t replications, uint64_t first_seed, int threads, RunOne run_one)
    -> std::vector<decltype(run_one(uint64_t{}))> {
  std::vector<decltype(run_one(uint64_t{}))> results(replications);
  const auto body = [&](std::size_t i) { results[i] = run_one(first_seed + i); };
  if (threads == 1) {
    for (std::size_t i = 0; i < replications; ++i) body(i);
    return results;
  }
  tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
  arena.execute([&] { tbb::parallel_for(std::size_t{0}, replications, body); });
  return results;
}

// Named numbers of several replications -> mean and 95% CI per name (the names and their order
// are the first replication's; every replication must have the same names).
using NamedNumbers = std::vector<std::pair<std::string, double>>;
struct NamedStat {
  std::string name;
  engine::MeanCi stat;
};
std::vector<NamedStat> summarize(const std::vector<NamedNumbers>& replications);

// R replications of a training run (seeds seed .. seed + R - 1), and their summary.
std::vector<TrainingRunResult> run_training_replications(const TrainingRunConfig& config,
                                                         std::size_t replications, uint64_t seed,
                                                         int threads = 0);
std::vector<NamedStat> summarize(const std::vector<TrainingRunResult>& results);

}  // namespace cs::fleet
