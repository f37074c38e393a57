#pragma once
// A shared GPU cluster's job stream and scheduler: configuration (plain data, SI units).
//
// The cluster: fleet.nodes nodes of gpus_per_node GPUs, held in the fleet's instance pools
// (fleet_config.hpp: markets, prices, failures, spot reclaims), numbered on demand first, then
// spot, then reserved; node_domain gives each node's placement domain (its leaf, rail group or
// dragonfly group: topology_domains.hpp).
// The jobs: generated as the run goes from classes (arrival shares, GPU counts and durations
// drawn from distributions) and an arrival process, or replayed from a trace (job_trace.hpp).
// A job's duration is its run time on a compact placement; a scattered one runs slower by
// its class's step-time model (step_time.hpp).
// The scheduler (job_scheduler.hpp): a policy orders the queues' pending jobs, optionally
// with EASY backfilling; gang scheduling (all GPUs at once); preemption of lower-priority
// queues' jobs; a placement policy picks the GPUs.
#include <array>
#include <climits>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/enum_table.hpp"
#include "sim/fleet/checkpoint.hpp"
#include "sim/fleet/fleet_config.hpp"
#include "sim/fleet/restore.hpp"
#include "sim/sources/distribution.hpp"
#include "workloads/arrivals.hpp"

namespace cs::jobs {

// How pending jobs are ordered (job_scheduler.hpp says how each is applied):
//   fifo        submission order, one order across the queues (Slurm's priority/basic);
//   backfill    fifo with EASY backfilling (SchedulerType=sched/backfill);
//   priority    queue priority first, then submission (partition PriorityTier);
//   fair_share  queue priority first, then Slurm's classic fair-share factor 2^(-U/S) of the
//               queue (fair_share.hpp), then submission.
enum class Policy : unsigned char { fifo, backfill, priority, fair_share };
// Which free GPUs a job gets (placement.hpp):
//   any       the first free GPUs in node order, blind to the topology;
//   pack      the fewest nodes: whole free nodes, then the fullest node that holds the rest;
//   topology  inside one domain where it fits (the fullest domain that holds the job, as
//             Slurm's topology/tree plugin picks a leaf switch by best fit), else across the
//             fewest domains; packed inside each.
enum class PlacementPolicy : unsigned char { any, pack, topology };
// fleet.scheduler.policy.
inline constexpr auto kPolicyNames = std::to_array<EnumName<Policy>>({
    {"fifo", Policy::fifo, "submission order; a job that cannot start blocks its queue"},
    {"backfill", Policy::backfill, "fifo with EASY backfilling"},
    {"priority", Policy::priority, "queue priority, then submission"},
    {"fair_share", Policy::fair_share, "queue priority, then Slurm's classic fair-share factor, then submission"},
});
static_assert(names_every_value<kPolicyNames>());
// fleet.scheduler.placement.
inline constexpr auto kPlacementPolicyNames = std::to_array<EnumName<PlacementPolicy>>({
    {"any", PlacementPolicy::any, "the first free GPUs in node order"},
    {"pack", PlacementPolicy::pack, "the fewest nodes: whole free nodes, then the fullest that holds the rest"},
    {"topology", PlacementPolicy::topology, "inside one leaf, rail group or dragonfly group where it fits"},
});
static_assert(names_every_value<kPlacementPolicyNames>());

std::string_view to_string(Policy p);
std::string_view to_string(PlacementPolicy p);

inline constexpr int kNoGpuCap = INT_MAX;

struct QueueConfig {
  std::string name;
  int priority = 0;          // higher runs first (priority, fair_share) and may preempt lower
  // Share of the cluster's GPUs, in [0, 1]: fair share's shares. Unset: an equal part of
  // what the queues with a quota leave.
  std::optional<double> quota;
  int max_gpus = kNoGpuCap;  // GPUs the queue's jobs may hold at once (Slurm GrpTRES gres/gpu)
};

struct JobClass {
  std::string name;
  int queue = 0;         // index into SchedulerConfig::queues
  double share = 1.0;    // relative weight among the classes' arrivals (> 0)
  // GPUs per job: drawn, rounded to the nearest whole number, clamped to [1, the most its
  // queue may hold and the cluster has].
  sources::Distribution gpus = sources::Distribution::constant(1.0);
  // Seconds the job runs on a compact placement (drawn per job).
  sources::Distribution duration = sources::Distribution::exponential(3600.0);
  // A scattered placement's slowdown per domain spanned beyond the fewest the job could use
  // (step_time.hpp: SpreadPenaltyModel); 0: insensitive to placement.
  double spread_penalty = 0.0;
};

struct SchedulerConfig {
  Policy policy = Policy::fifo;
  bool backfill = false;     // EASY backfilling on top of the order (always on for `backfill`)
  bool preemption = false;   // a job may preempt running jobs of lower-priority queues
  PlacementPolicy placement = PlacementPolicy::any;
  std::vector<QueueConfig> queues{QueueConfig{"default", 0, std::nullopt, kNoGpuCap}};
  // Pending jobs one pass examines after the backfill reservation is set (Slurm's
  // SchedulerParameters=bf_max_job_test, default 500).
  int bf_max_job_test = 500;
  // With topology placement, how long a job that would span more domains than it needs may
  // wait for a placement in the fewest (Slurm's SchedulerParameters=max_switch_wait, for jobs
  // that ask for --switches); after that it takes the GPUs that are free. 0: never waits.
  double max_switch_wait_s = 0.0;
  // Half-life of the usage fair share compares with the shares (Slurm's PriorityDecayHalfLife,
  // default 7 days); 0: usage never decays.
  double usage_half_life_s = 7.0 * 86400.0;

  bool backfilling() const { return backfill || policy == Policy::backfill; }
};

struct JobsConfig {
  // The stream: classes with an arrival process, or a trace (non-empty trace_path).
  std::vector<JobClass> classes;
  work::ArrivalSpec arrivals;
  std::string trace_path;
  int64_t max_jobs = -1;  // jobs submitted at most; -1: as many as arrive before until_s

  // The cluster.
  fleet::FleetConfig fleet;        // nodes, markets, prices, failures, spot reclaims
  int gpus_per_node = 8;
  std::vector<int> node_domain;    // per node, 0-based; empty: one domain
  SchedulerConfig scheduler;

  // Checkpoints of every job: none (a preempted or failed job starts again from scratch), or
  // the fleet's model with an interval given or, unset, Young/Daly's for the job's nodes.
  std::optional<fleet::CheckpointConfig> checkpoint;
  // Restarts after a preemption or failure. A job's first start pays nothing unless
  // launch_overhead_at_start (its duration includes its launch).
  fleet::RestoreConfig restore = [] {
    fleet::RestoreConfig r;
    r.launch_overhead_at_start = false;
    return r;
  }();

  double until_s = std::numeric_limits<double>::infinity();
  double sample_interval_s = 3600.0;  // time series period; 0: no time series
  bool record_timeseries = true;
  bool record_jobs = false;           // keep one row per job (JobsResult::jobs)
  // Jobs held at once (submitted and not finished, plus the rows kept by record_jobs): past it
  // the run stops with HeldJobsLimitError (job_cluster.hpp). The world sets it from run.max_memory.
  uint64_t max_held_jobs = std::numeric_limits<uint64_t>::max();
  // What a finished job's wait, kept for the percentiles, weighs against that limit, as a share
  // of one held job (the world sets it from their sizes; 0: not counted).
  double held_per_wait = 0.0;
  std::string series_prefix = "jobs";
  // Drawing the job stream ahead on a second thread (job_feed.hpp) once draw_ahead_after jobs
  // have been drawn in the simulation's thread: the same jobs in the same order either way (the
  // stream's draws depend on nothing the simulation does). Off: every job is drawn when it is
  // submitted. The world turns it on for a run allowed more than one thread.
  bool draw_ahead = false;
  int64_t draw_ahead_after = 4096;

  int total_gpus() const { return fleet.nodes * gpus_per_node; }
  int domains() const;
  // Every queue's quota, the unset ones filled (an equal part of what the others leave).
  std::vector<double> quotas() const;
  // Throws std::invalid_argument naming the field on anything out of range.
  void validate() const;
};

}  // namespace cs::jobs
