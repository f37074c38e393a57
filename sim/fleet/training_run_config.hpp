#pragma once
// A long training run on a fleet: its configuration (plain data, SI units, defaults with
// sources in the headers they come from) and its result.
//
// The job needs `nodes` nodes for steps x step_time_s seconds of useful work. Its nodes sit in
// up to three instance pools, one per market (fleet_config.hpp: the shares, prices, failures
// and reclaims); the on-demand pool also takes the spot capacity that does not come back
// within fallback_after_s.
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/enum_table.hpp"
#include "sim/fleet/checkpoint.hpp"
#include "sim/fleet/fleet_config.hpp"
#include "sim/fleet/restore.hpp"

namespace cs::fleet {

// Continue with fewer data-parallel replicas while capacity is missing instead of waiting
// (Oobleck, SOSP'23; Bamboo, NSDI'23). A node loss that leaves at least min_replicas whole
// replicas costs the step in flight and a reconfiguration, not a restore: the surviving
// replicas hold the model and optimizer state. Progress runs at
//   (replicas held / replicas needed) ^ throughput_exponent
// of full speed (1: the global batch is kept, so a step takes needed / held times as long).
// Capacity coming back triggers a reconfiguration to grow again.
struct ElasticConfig {
  bool enabled = false;
  int nodes_per_replica = 1;   // nodes of one data-parallel replica (TP x PP x CP / GPUs per node)
  int min_replicas = 1;
  double throughput_exponent = 1.0;
  double reconfigure_s = 30.0;  // estimate: Oobleck re-plans from precomputed templates
};

// The fleet's nodes, markets, prices, failures and reclaims are FleetConfig's.
struct TrainingRunConfig : FleetConfig {
  double step_time_s = 1.0;
  double steps = 0.0;
  double tokens_per_step = 0.0;  // tokens one step trains (global batch x sequence); 0: unknown

  CheckpointConfig checkpoint;
  RestoreConfig restore;
  ElasticConfig elastic;

  double max_wall_time_s = 10.0 * 365.0 * 86400.0;  // a run not done by then stops
  bool record_timeseries = true;
  std::string series_prefix = "training_run";

  double work_s() const { return steps * step_time_s; }
  // True when every spot reclaim's notice leaves time for an emergency checkpoint to become
  // durable (emergency checkpoints on, the durable time with every node within the warning, not
  // elastic): a reclaim then loses no work, only the restart.
  bool notice_saves_work() const;
  // Interruptions per second that lose work: failures, and reclaims unless their notice saves
  // it. The M of Young/Daly is 1 / this: checkpointing against a loss that cannot happen only
  // costs writes.
  double work_losing_rate_per_s() const;
  // The checkpoint interval the run uses: the given or Young/Daly one (for the work-losing
  // rate), in whole steps (at least one); for async checkpoints never shorter than one
  // background write.
  double checkpoint_interval_s() const;
  // Seconds one restore takes on `nodes` nodes, from a checkpoint or from scratch.
  double restore_s(int nodes, bool from_checkpoint) const;
  // Throws std::invalid_argument naming the field on anything out of range.
  void validate() const;
};

enum class JobState : unsigned char {
  starting,       // first launch
  running,        // making progress
  checkpointing,  // stopped for a checkpoint (write, snapshot, or waiting for the last write)
  restoring,      // detection, retrieval, read, restart, warm-up
  waiting,        // for capacity (nodes reclaimed or failed and not yet replaced), or for a
                  // noticed reclaim after an emergency checkpoint
  reconfiguring,  // elastic: changing the number of replicas
  done,
};
// The names of the "<prefix>.state" series' values (the value is the enumerator's) and of
// the trace's spans.
inline constexpr auto kJobStateNames = std::to_array<EnumName<JobState>>({
    {"starting", JobState::starting, "the first launch", NameUse::output_only},
    {"running", JobState::running, "making progress", NameUse::output_only},
    {"checkpointing", JobState::checkpointing, "stopped for a checkpoint", NameUse::output_only},
    {"restoring", JobState::restoring, "detection, retrieval, read, restart, warm-up", NameUse::output_only},
    {"waiting", JobState::waiting, "for capacity, or for a noticed reclaim", NameUse::output_only},
    {"reconfiguring", JobState::reconfiguring, "elastic: changing the number of replicas", NameUse::output_only},
    {"done", JobState::done, "finished", NameUse::output_only},
});
static_assert(names_every_value<kJobStateNames>());
inline constexpr std::size_t kJobStates = kJobStateNames.size();
std::string_view to_string(JobState s);

struct TrainingRunResult {
  bool completed = false;
  double wall_time_s = 0.0;
  double useful_time_s = 0.0;  // steps x step time completed and kept
  double goodput = 0.0;        // useful_time_s / wall_time_s
  int64_t interruptions = 0;   // spot reclaim events that hit the job
  int64_t failures = 0;        // failure events (any cause) that hit the job
  int64_t checkpoints = 0;     // completed (durable) checkpoints, final and emergency included
  double lost_work_s = 0.0;    // work done and then lost (recomputed)
  double restore_time_s = 0.0; // time in the restoring state
  double cost_usd = 0.0;
  Money money;                 // cost_usd split by market or by term of ownership
  double tokens = 0.0;         // tokens trained (useful work); 0 when tokens_per_step is unknown

  std::array<double, kJobStates> time_in_state_s{};
  PerMarket<double> cost_usd_by_market;
  PerMarket<double> node_hours_by_market;
  int64_t emergency_checkpoints = 0;   // taken in a reclaim notice window
  int64_t async_writes_lost = 0;       // background writes an interruption beat
  int64_t checkpoint_writes_lost = 0;  // checkpoints an interruption cut short while the job waited
  int64_t restores = 0;
  int64_t reconfigurations = 0;        // elastic shrinks and grows
  int64_t node_failures = 0;           // instance failures in all pools, over the whole run
  int64_t reclaims = 0;                // instances reclaimed in all pools, over the whole run
  int64_t fallbacks = 0;               // spot requests moved to on demand
  double checkpoint_interval_s = 0.0;  // the interval used
  double checkpoint_write_s = 0.0;     // one checkpoint's write with every node
  double checkpoint_blocking_s = 0.0;  // the job's stop per regular checkpoint
  double mtbf_s = 0.0;                 // 1 / the job's interruption rate, every node held
  double work_losing_mtbf_s = 0.0;     // 1 / the rate of those that lose work: Young/Daly's M
  uint64_t events = 0;                 // engine events processed

  // The numbers of the summary: docs/scenarios.md's training_run keys first (wall_time_s, goodput,
  // interruptions, failures, checkpoints, lost_work_s, restore_time_s, cost_usd), then the
  // breakdowns, each named "<group>.<name>" (a summary nests them under the group):
  //   job.{completed (1 or 0), useful_time_s, restores, reconfigurations},
  //   checkpoint.{interval_s, write_s, blocking_s, emergency, async_writes_lost, writes_lost},
  //   fleet.{node_failures, reclaims, fallbacks, job_mtbf_s, work_losing_mtbf_s},
  //   time_in_state_s.<state>, Money's numbers (cost_usd_by_market, cost_breakdown_usd,
  //   energy_kwh when owned), node_hours_by_market.<market>, and where tokens are known
  //   tokens_trained and cost_per_billion_tokens_usd.
  std::vector<std::pair<std::string, double>> summary_numbers() const;
};

}  // namespace cs::fleet
