#pragma once
// Restarting a training job after an interruption, and launching it the first time.
//
// restore = [detection] + retrieval (cold tier) + read at the tier's bandwidth + restart + warm-up
// where the read is skipped when there is no checkpoint yet (a fresh start) and
//   restart(n) = fixed_s + per_node_s * n + per_log2_node_s * log2(n)
// models process launch and communicator set-up on n nodes:
// - fixed_s: scheduler, container and process launch, CUDA context, framework imports
//   (estimate: 60 s).
// - per_node_s: a rendezvous through one central store costs a round trip per rank and grows
//   linearly. MegaScale (ByteDance, NSDI'24) measured 1,047 s to initialise 2,048 GPUs with a
//   blocking TCPStore, cut to 5 s on 2,048 GPUs and 30 s on 10K+ GPUs with a non-blocking
//   store and fewer global barriers: ~0.02 s per 8-GPU node fits both optimised figures.
// - per_log2_node_s: tree-shaped bootstraps (NCCL's) grow with log2(n); 0 by default, the
//   MegaScale figures are linear.
// - warmup_s: data loader workers, first iterations, compilation caches (estimate: 60 s).
// - detection_s: from a failure until the job gives up and restarts (a watchdog or health
//   check). Spot reclaims come with a notice and need none. Estimate: 120 s; NCCL's default
//   watchdog timeout in PyTorch (10 min) is the worst case.
// `time_s`, when given, replaces the whole derivation (SCENARIOS: restore.time).
#include <cmath>
#include <optional>

#include "sim/fleet/checkpoint.hpp"

namespace cs::fleet {

struct RestartOverhead {
  double fixed_s = 60.0;
  double per_node_s = 0.02;
  double per_log2_node_s = 0.0;

  double seconds(int nodes) const {
    const double n = nodes < 1 ? 1.0 : static_cast<double>(nodes);
    return fixed_s + per_node_s * n + per_log2_node_s * std::log2(n);
  }
};

struct RestoreConfig {
  std::optional<double> time_s;  // the whole restore, given
  RestartOverhead restart;
  double warmup_s = 60.0;
  double detection_s = 120.0;
  bool launch_overhead_at_start = true;  // the first launch pays restart + warm-up too

  void validate(const char* what) const;
};

// Seconds one restore takes on `nodes` nodes: `time_s` when given, else restart + warm-up,
// plus the checkpoint's read (with its tier's retrieval delay) when there is one to read.
// Detection is not included: it runs before, while the failure is noticed.
double restore_seconds(const RestoreConfig& restore, const CheckpointConfig& checkpoint,
                       int nodes, bool from_checkpoint);

}  // namespace cs::fleet
