#pragma once
// What a shared cluster's run reports: the contract's `jobs` keys (docs/scenarios.md) overall and
// per queue, the breakdowns behind them, and optionally one row per job.
//
// Definitions
// - A job's wait: the time it spent pending, every wait added up (submission to first start,
//   and requeue to restart after each preemption or interruption). Wait statistics are over
//   the jobs completed.
// - Busy GPU-time: GPU-seconds allocated to jobs (working, restoring, checkpointing, or
//   stopped while a failure is detected). utilization = busy GPU-time / (GPUs x horizon).
// - Lost GPU-time: GPU-seconds spent on work that an interruption or preemption threw away.
// Units: seconds, GPU-hours where the name says so, USD.
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/fleet/market.hpp"
#include "sim/fleet/money.hpp"

namespace cs::jobs {

struct QueueResult {
  std::string name;
  int64_t submitted = 0;
  int64_t completed = 0;
  double wait_mean_s = 0.0;
  double wait_p95_s = 0.0;
  double gpu_share = 0.0;        // its share of the busy GPU-time
  double busy_gpu_hours = 0.0;
  int64_t preemptions = 0;       // of its jobs
  // Chargeback: its share of the GPU-time in service (the cluster's GPU-hours, idle ones too),
  // against its quota (share of the cluster's GPUs; NaN: none set), and its part of the
  // cluster's cost: cost_usd x gpu_share (idle capacity charged pro rata to use, so the
  // queues' parts add up to the cluster's cost).
  double cluster_share = 0.0;
  double quota = 0.0;
  double cost_usd = 0.0;
};

// Waits of the completed jobs of one group (a job class, or a size bucket).
struct WaitGroup {
  std::string name;
  int64_t completed = 0;
  double wait_mean_s = 0.0;
  double wait_p95_s = 0.0;
};

// Size buckets of waits by job size, by GPUs: one GPU, within an 8-GPU node, then eightfold
// steps (up to 8 nodes, up to 64 nodes, more). `upper` is the bucket's largest size.
struct SizeBucket {
  int upper;
  const char* name;
};
inline constexpr SizeBucket kSizeBuckets[] = {{1, "1"}, {8, "2-8"}, {64, "9-64"}, {512, "65-512"}, {INT_MAX, "513+"}};
inline std::size_t size_bucket(int gpus) {
  std::size_t b = 0;
  while (gpus > kSizeBuckets[b].upper) ++b;
  return b;
}

// One row of the per-job table. start_s and end_s are NaN for a job that never started /
// did not finish before the run ended.
struct JobRecord {
  int64_t id = 0;
  int job_class = -1;
  int queue = 0;
  double submit_s = 0.0;
  double start_s = 0.0;     // first start
  double end_s = 0.0;
  int gpus = 0;
  int nodes = 0;            // of its last placement (0: never placed)
  int spread = 0;           // domains of its last placement
  double slowdown = 1.0;    // of its last placement
  int preemptions = 0;
  int interruptions = 0;
  double wait_s = 0.0;
  double lost_work_s = 0.0;
  double reserved_start_s = 0.0;  // its first EASY reservation as the head job (NaN: none)
  bool completed = false;
};

struct JobsResult {
  // The contract's keys.
  int64_t submitted = 0;
  int64_t completed = 0;
  double wait_mean_s = 0.0;
  double wait_p95_s = 0.0;
  double utilization = 0.0;
  int64_t preemptions = 0;
  double lost_gpu_hours = 0.0;
  double cost_usd = 0.0;
  std::vector<QueueResult> queues;
  std::vector<WaitGroup> classes;  // per job class, in the scenario's order (none for a bare trace)
  std::vector<WaitGroup> sizes;    // per kSizeBuckets entry, every bucket

  // Breakdowns.
  int64_t rejected = 0;            // trace jobs larger than their queue's cap or the cluster
  int64_t pending_at_end = 0;
  int64_t running_at_end = 0;
  int64_t interruptions = 0;       // node failures and spot reclaims that hit running jobs
  int64_t node_failures = 0;       // failures of nodes, in all pools
  int64_t reclaims = 0;            // spot nodes reclaimed
  int64_t checkpoints = 0;         // completed by jobs
  int64_t emergency_checkpoints = 0;
  double horizon_s = 0.0;          // from 0 to the end of the run
  double busy_gpu_hours = 0.0;
  double restore_gpu_hours = 0.0;     // GPUs held while restoring
  double checkpoint_gpu_hours = 0.0;  // GPUs held stopped for checkpoints
  double stalled_gpu_hours = 0.0;     // GPUs held while a failure is detected or an emergency
                                      // checkpoint is written
  double slowdown_gpu_hours = 0.0;    // GPU-time added by scattered placements
  double gpu_hours_available = 0.0;   // GPU-time of the nodes in service
  double mean_spread = 0.0;        // domains per started run
  double mean_slowdown = 1.0;      // per started run
  std::size_t placement_shapes = 0;  // distinct shapes the step-time model was asked about
  double runtime_mean_s = 0.0;     // first start to end, completed jobs
  fleet::PerMarket<double> cost_usd_by_market;
  fleet::Money money;              // cost_usd by market, or by term of ownership
  fleet::PerMarket<double> node_hours_by_market;
  uint64_t events = 0;

  std::vector<JobRecord> jobs;     // when JobsConfig::record_jobs, by id
};

}  // namespace cs::jobs
