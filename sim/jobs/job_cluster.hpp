#pragma once
// A shared GPU cluster running a stream of jobs from several queues, as a discrete-event model
// on cs::engine::Simulator that advances from event to event:
//   - a job's submission (the next one is taken from the stream then: job_feed.hpp, drawn then
//     or, with config.draw_ahead, ahead on a second thread);
//   - a job's release of its GPUs: the end of its run (completion), or of a stop (a failure
//     being detected, an emergency checkpoint being written) after which it is requeued. Only
//     the next release is an event on the engine: the holders are already in release order in
//     the book (release_index.hpp), and that event is moved when the next release changes;
//   - the start of a reclaim notice's emergency checkpoint;
//   - the fleet's instance pools (instance_pool.hpp): node failures, spot reclaim notices and
//     reclaims, nodes coming back; they act on the jobs running on those nodes;
//   - a scheduling pass (job_scheduler.hpp), once per instant at which something changed,
//     after that instant's other events (priority `resolve`);
//   - time-series samples every sample_interval_s (priority `observe`).
// A running job never ticks: its run segment (job_progress.hpp) says where it is at any time.
//
// Interruptions of a running job (a node it holds fails or is reclaimed, or it is preempted)
// lose its work since the last durable checkpoint; it is requeued and, when it starts again,
// restores (fleet::restore_seconds: restart + warm-up + the checkpoint's read). A hardware
// failure keeps the job's GPUs stopped for restore.detection_s first (the job hangs until a
// watchdog notices). During a spot reclaim notice a job keeps training until its nodes go; a
// notice long enough for a durable checkpoint has it write an emergency checkpoint timed to be
// durable as they go (the work done during the notice counts, nothing is lost). Nodes under
// notice, failed or reclaimed take no new jobs until they are back.
//
// Time series (when config.record_timeseries and sample_interval_s > 0), on the Recorder:
// "<prefix>.queue_length.<queue>", "<prefix>.busy_gpus.<queue>", "<prefix>.wait_mean_s.<queue>"
// (mean wait of the jobs that started in the last interval; no sample when none did),
// "<prefix>.pending", "<prefix>.busy_gpus", "<prefix>.free_gpus", "<prefix>.down_gpus".
//
// Sources: job_cluster.cpp (the stream, starts, releases, events), job_cluster_interruptions.cpp
// (preemption and the fleet's failures and reclaims), job_cluster_result.cpp (the result).
#include <array>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/engine/time_weighted.hpp"
#include "sim/fleet/cost_ledger.hpp"
#include "sim/fleet/instance_pool.hpp"
#include "sim/jobs/cluster_state.hpp"
#include "sim/jobs/fair_share.hpp"
#include "sim/jobs/job_book.hpp"
#include "sim/jobs/job_scheduler.hpp"
#include "sim/jobs/job_feed.hpp"
#include "sim/jobs/jobs_config.hpp"
#include "sim/jobs/jobs_result.hpp"
#include "sim/jobs/step_time.hpp"

namespace cs::jobs {

// More jobs held than JobsConfig::max_held_jobs: the run cannot finish within its memory.
class HeldJobsLimitError : public std::runtime_error {
 public:
  HeldJobsLimitError(uint64_t held, double at_s)
      : std::runtime_error("jobs: " + std::to_string(held) + " jobs held"), held(held), at_s(at_s) {}
  uint64_t held;
  double at_s;  // simulated time it was reached
};

class JobCluster final : public engine::EventTarget,
                         public fleet::InstancePoolListener,
                         private SchedulerHost {
 public:
  // Validates the configuration (std::invalid_argument). `step_time`: how placements slow jobs
  // down (step_time.hpp); null: SpreadPenaltyModel with the classes' penalties.
  JobCluster(engine::Simulator& sim, JobsConfig config, std::unique_ptr<StepTimeModel> step_time = nullptr);
  JobCluster(const JobCluster&) = delete;
  JobCluster& operator=(const JobCluster&) = delete;
  ~JobCluster() override;

  // Holds the nodes and asks for the first job at sim.now(). Call once.
  void start();
  // The stream is exhausted and every job is done.
  bool done() const { return done_; }
  // The result at sim.now() (final once done()).
  JobsResult result() const;

  const JobsConfig& config() const { return config_; }
  const ClusterState& cluster() const { return cluster_; }
  const JobBook& book() const { return book_; }
  const JobScheduler& scheduler() const { return scheduler_; }
  const StepTimeCache& step_time() const { return step_time_; }

  void on_event(uint64_t tag) override;
  void on_reclaim_notice(fleet::InstancePool& pool, std::span<const int> ids, double warning_s) override;
  void on_interruption(fleet::InstancePool& pool, std::span<const int> ids,
                       const fleet::Interruption& event) override;
  void on_ready(fleet::InstancePool& pool, std::span<const int> ids) override;

 private:
  enum class Tag : uint64_t { arrival, release, pass, later_pass, sample, emergency_checkpoint };
  enum class Cause : unsigned char { preemption, reclaim, failure };

  // SchedulerHost
  double release_if_started(Slot s, const Allocation& allocation) override;
  void start(Slot s, const Allocation& allocation) override;
  void preempt(Slot s) override;
  void pass_at(double t) override;

  uint64_t tag(Tag t, uint64_t payload = 0) const { return static_cast<uint64_t>(t) | payload << 4; }
  void schedule_arrival();
  void submit(const JobRequest& r);
  void request_pass();
  void sample();
  // A job's checkpoint plan on `nodes` nodes: from plans_ up to kPlannedNodes nodes.
  CheckpointPlan checkpoint_plan(int nodes) const;
  CheckpointPlan compute_checkpoint_plan(int nodes) const;
  RunSegment plan_run(const Job& job, const Allocation& allocation, double slowdown) const;
  // Closes a running job's segment at now: books its restore, checkpoint and slowdown time;
  // returns the work done by now.
  double close_segment(Job& job);
  void set_held(int queue);
  void hold(Slot s, double release_s);
  void unhold(Slot s);
  // Keeps the one release event on the book's next release (see release_event_).
  void schedule_next_release();
  void release_and_requeue(Slot s);
  void complete(Slot s);
  void interrupt(Slot s, Cause cause);
  void plan_emergency_checkpoint(Slot s, double leave_s);
  void emergency_checkpoint(Slot s);
  std::vector<int> nodes_of(const fleet::InstancePool& pool, std::span<const int> ids) const;
  std::vector<Slot> jobs_on(const std::vector<int>& nodes) const;
  JobRecord record_of(const Job& job) const;
  void check_done();
  void finish();

  engine::Simulator& sim_;
  JobsConfig config_;
  fleet::CostLedger ledger_;
  std::array<std::unique_ptr<fleet::InstancePool>, fleet::kMarkets> pools_;
  fleet::PerMarket<int> first_node_;  // node index of each pool's slot 0
  ClusterState cluster_;
  JobBook book_;
  FairShare fair_share_;
  StepTimeCache step_time_;
  JobFeed feed_;
  JobScheduler scheduler_;
  double per_node_interruption_rate_ = 0.0;
  static constexpr int kPlannedNodes = 4096;
  std::vector<CheckpointPlan> plans_;  // [n - 1]: compute_checkpoint_plan(n), n = 1 .. min(nodes, kPlannedNodes)

  std::optional<JobRequest> next_;  // the submission scheduled next
  bool stream_done_ = false;
  bool started_ = false;
  bool done_ = false;
  double end_s_ = 0.0;
  engine::EventId arrival_event_, pass_event_, later_pass_event_, sample_event_;
  // The next release, the only one on the engine's queue: the first holder by (release_s, then
  // the order of their holds), the order in which one event per holder, each scheduled at its
  // hold, would run. (The engine's heap held one event per running job, ~1,400 in a shared
  // cluster's year at 85%, and sifting them was a tenth of the run; the book keeps the holders
  // sorted anyway.) Against another event of the same instant and priority (a submission, a
  // fleet event) the order is not always that one: the event is scheduled when its holder
  // becomes the next release (at its hold, or at the release or unhold before it), so an event
  // for the same instant scheduled after the hold and before that runs first, where a holder's
  // own event would have run after it. Such ties need times equal to the bit (a trace in whole
  // seconds with no checkpoint cost can give them); the order stays deterministic.
  engine::EventId release_event_;
  Slot release_slot_ = -1;
  double release_event_s_ = 0.0;
  uint64_t holds_ = 0;
  double later_pass_s_ = 0.0;

  // Accumulators.
  std::vector<engine::TimeWeighted> busy_;  // GPUs held per queue
  engine::TimeWeighted available_;          // GPUs in service (ClusterState::in_service_gpus)
  std::vector<int64_t> submitted_, completed_, preempted_;
  // The completed jobs' waits, per queue, per class and per size bucket, in completion order.
  // In chunks (std::deque), not vectors: a vector grown to a million waits copied itself at
  // every doubling and kept up to twice its size (a shared cluster's year at 85%: peak RSS 52 MB
  // with vectors, 44 MB in chunks); the result copies each into a vector once.
  using Waits = std::deque<double>;
  std::vector<Waits> waits_;
  int64_t completed_total_ = 0;              // the waits_ kept, all queues (a submission's memory check)
  std::vector<Waits> class_waits_, size_waits_;
  std::vector<double> window_wait_sum_;      // per queue, starts since the last sample
  std::vector<int64_t> window_starts_;
  int64_t rejected_ = 0, interruptions_ = 0, checkpoints_ = 0, emergency_ = 0;
  int64_t runs_ = 0;
  double spread_sum_ = 0.0, slowdown_sum_ = 0.0, runtime_sum_ = 0.0;
  double lost_gpu_s_ = 0.0, restore_gpu_s_ = 0.0, checkpoint_gpu_s_ = 0.0, stalled_gpu_s_ = 0.0,
         slowdown_gpu_s_ = 0.0;
  std::vector<JobRecord> records_;
};

// Runs `sim` until the cluster is done (the clock left at its end) or until `until`.
void run_until_done(engine::Simulator& sim, const JobCluster& cluster, double until);

// One run in its own Simulator seeded with `seed`, until done or config.until_s.
JobsResult run_jobs(const JobsConfig& config, uint64_t seed);

}  // namespace cs::jobs
