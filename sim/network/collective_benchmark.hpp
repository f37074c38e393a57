#pragma once
// nccl-tests on the communication layer: a collective spec's sizes, for each of its
// algorithms, one after another. A size starts on every communicator group at once and ends
// when the last group's collective does; its time is that span. A size that `until_s` cuts
// is not reported, nor are the ones after it.
#include <cstddef>
#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/network/comm.hpp"
#include "workloads/collective.hpp"

namespace cs::net {

struct BenchmarkRow {
  double bytes = 0;
  double time_s = 0;           // start to the last group's finish
  double fastest_group_s = 0;  // start to the first group's finish
  work::CollectiveAlgorithm requested = work::CollectiveAlgorithm::ring;
  CollectiveChoice choice;     // group 0's (each group chooses for itself)
};

struct BenchmarkResult {
  std::vector<BenchmarkRow> rows;
  std::size_t sizes_not_run = 0;  // cut by until_s
  std::size_t groups = 0;
  int group_size = 0;
};

// The spec's groups (work::collective_groups over comm.ranks()), registered with the spec's
// channels. Throws CommError (a group or an algorithm the layer cannot serve).
std::vector<GroupId> register_groups(Comm& comm, const work::CollectiveSpec& spec);

// Checks that every algorithm of the spec (auto aside) has a plan on every group, without
// running anything. Throws CommError("algorithm").
void check_collective(Comm& comm, const work::CollectiveSpec& spec);

// Runs the benchmark on `sim` (run() per size; until_s <= 0: no limit). Each size is traced on
// the recorder ("<op> <algorithm> <bytes> B"). Throws CommError.
BenchmarkResult run_collective_benchmark(Comm& comm, engine::Simulator& sim, const work::CollectiveSpec& spec,
                                         double until_s);

}  // namespace cs::net
