#pragma once
// Checkpoints of a training job: how often, how big, how they are written, and what they cost.
//
// - interval_s: useful work (seconds of training at full speed) between checkpoints, rounded
//   to whole steps; unset means Young/Daly's optimum for the run's interruption rate.
// - size_bytes: weights + optimizer states (the caller computes them from the model, or gives
//   them).
// - pattern: rank0 (one node moves everything) or sharded (every node moves size / nodes, as
//   PyTorch DCP and Megatron's distributed checkpoints do), limited per node and by the tier.
// - mode: sync (the job stops for the whole write) or async (it stops for a copy to host
//   memory, `snapshot`, then trains while the write runs in the background; the write is lost
//   if an interruption comes before it completes, and the next checkpoint waits for it). Meta's
//   Check-N-Run, CheckFreq and MegaScale's two-stage checkpoint (GPU -> host memory -> HDFS)
//   work this way.
// - A final checkpoint saves the trained model at the end (as Daly's model counts it).
// - An emergency checkpoint uses a spot reclaim notice when one fits in the warning.
#include <array>
#include <optional>

#include "common/enum_table.hpp"
#include "sim/fleet/storage.hpp"

namespace cs::fleet {

enum class CheckpointMode : unsigned char { sync, async };
enum class WritePattern : unsigned char { rank0, sharded };
// fleet.checkpoint.mode.
inline constexpr auto kCheckpointModeNames = std::to_array<EnumName<CheckpointMode>>({
    {"sync", CheckpointMode::sync, "the job stops for the whole write"},
    {"async", CheckpointMode::async, "the job stops for a copy to host memory, then trains while it is written"},
});
static_assert(names_every_value<kCheckpointModeNames>());
// fleet.checkpoint.pattern.
inline constexpr auto kWritePatternNames = std::to_array<EnumName<WritePattern>>({
    {"sharded", WritePattern::sharded, "every node writes its share (PyTorch DCP, Megatron)"},
    {"rank0", WritePattern::rank0, "one node writes it all"},
});
static_assert(names_every_value<kWritePatternNames>());

struct CheckpointConfig {
  std::optional<double> interval_s;    // unset: Young/Daly
  double size_bytes = 0.0;
  std::optional<double> write_time_s;  // given; else from size, pattern and storage
  CheckpointMode mode = CheckpointMode::sync;
  WritePattern pattern = WritePattern::sharded;
  StorageTier storage = *storage_tier("parallel_fs");
  // Device-to-host copy of a node's share (async snapshot). Estimate: 8 GPUs x PCIe Gen5 x16
  // (64 GB/s per direction) at ~20% effective for pinned copies that contend for host memory
  // bandwidth: 100 GB/s per node.
  double snapshot_Bps_per_node = 100e9;
  bool final_checkpoint = true;
  bool emergency_on_notice = true;

  // Seconds the write (read, without retrieval) takes with `nodes` nodes.
  double write_s(int nodes) const;
  double read_s(int nodes) const;  // includes the tier's retrieval delay
  double snapshot_s(int nodes) const;
  // Seconds the job is stopped for one regular checkpoint: the write (sync) or the snapshot.
  double blocking_s(int nodes) const;
  // Seconds from the start of a checkpoint until it is durable (sync write, or snapshot + write).
  double durable_s(int nodes) const;
  void validate(const char* what) const;
};

// Daly's higher-order optimum ("A higher order estimate of the optimum checkpoint interval for
// restart dumps", FGCS 2006): with checkpoint cost C and mean time between interruptions M,
//   tau = sqrt(2 C M) [1 + (1/3) sqrt(C / (2M)) + (1/9) (C / (2M))] - C   for C < 2M,
//   tau = M                                                                  otherwise.
// Young's first-order sqrt(2 C M) is its leading term.
double young_daly_interval_s(double checkpoint_s, double mtbf_s);

// Daly's expected wall time of W seconds of work checkpointed every tau (each segment of tau
// work followed by a checkpoint of C seconds, failures exponential with mean M, restart R):
//   T = M e^(R/M) (e^((tau + C)/M) - 1) W / tau.
// With R = 0, goodput W / T = tau / (M (e^((tau + C)/M) - 1)).
double daly_expected_wall_time_s(double work_s, double tau_s, double checkpoint_s, double mtbf_s,
                                 double restart_s = 0.0);

}  // namespace cs::fleet
