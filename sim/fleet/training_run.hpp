#pragma once
// A long training run on a fleet, as a discrete-event model on cs::engine::Simulator.
//
// The job is a state machine (training_run_config.hpp: JobState) driven by its own events and
// by its instance pools' notifications. It never ticks through steps: progress is a continuous
// quantity, work_ + rate * (now - run_since_) while running, and the next event is the instant
// the work reaches the next checkpoint or the end (rate = 1, or the elastic fraction). Events:
//   - end of the current state's activity (launch, restore, checkpoint write or snapshot,
//     reconfiguration, reaching a work target),
//   - completion of a background (async) checkpoint write,
//   - the pools' reclaim notices, interruptions and capacity coming back.
// An interruption that hits a running job loses the work since the last durable checkpoint
// (elastic: only the step in flight), an in-progress checkpoint write, and a pending background
// write; the job then restores as soon as it holds its nodes again (elastic: enough replicas).
// During a reclaim notice the job keeps training until its nodes go. A notice long enough for
// a durable checkpoint (snapshot + write) triggers an emergency checkpoint timed to be durable
// at the instant the nodes go (started that long before): the work done during the notice
// counts and nothing is lost. A notice shorter than the write changes nothing: the job runs on
// and loses its work since the last checkpoint at the reclaim.
//
// Time series (when config.record_timeseries), on the simulator's Recorder, each sampled when
// it changes: "<prefix>.state" (JobState as a number, see to_string), "<prefix>.nodes.<market>"
// (nodes held per market), "<prefix>.cost_usd" (cumulative), "<prefix>.committed_work_s" (work
// safe in a checkpoint). Trace spans (when the recorder traces): one per state, process
// "<prefix>".
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>

#include "sim/engine/simulator.hpp"
#include "sim/fleet/cost_ledger.hpp"
#include "sim/fleet/instance_pool.hpp"
#include "sim/fleet/training_run_config.hpp"

namespace cs::fleet {

class TrainingRun final : public engine::EventTarget, public InstancePoolListener {
 public:
  // Validates the configuration (std::invalid_argument) and creates the pools.
  TrainingRun(engine::Simulator& sim, TrainingRunConfig config);
  TrainingRun(const TrainingRun&) = delete;
  TrainingRun& operator=(const TrainingRun&) = delete;
  ~TrainingRun() override;

  // Holds the nodes and launches the job at sim.now(). Call once.
  void start();
  bool done() const { return state_ == JobState::done; }
  JobState state() const { return state_; }
  // The result at sim.now(): final once done(), a snapshot otherwise.
  TrainingRunResult result() const;
  const TrainingRunConfig& config() const { return config_; }
  const InstancePool& pool(Market m) const { return *pools_[index(m)]; }
  const CostLedger& ledger() const { return ledger_; }

  void on_event(uint64_t tag) override;
  void on_reclaim_notice(InstancePool& pool, std::span<const int> ids, double warning_s) override;
  void on_interruption(InstancePool& pool, std::span<const int> ids,
                       const Interruption& event) override;
  void on_ready(InstancePool& pool, std::span<const int> ids) override;

 private:
  enum Tag : uint64_t { kStateEnd = 0, kAsyncWriteDone = 1, kEmergencyCheckpoint = 2 };
  enum class CheckpointPhase : unsigned char { write, snapshot, wait_previous };
  struct CheckpointInProgress {
    double work = 0.0;
    CheckpointPhase phase = CheckpointPhase::write;
    bool emergency = false;
    bool final = false;
    engine::Time ends_at = 0.0;  // an emergency checkpoint's end: the instant its nodes go
  };
  struct AsyncWrite {
    double work = 0.0;
    engine::EventId done;
  };

  double current_work() const;
  int held_nodes() const;
  int replicas_held() const;
  int active_nodes() const;
  double progress_rate() const;
  void enter(JobState s);
  void schedule_state_end(double after_s);
  void begin_running();
  void begin_checkpoint(bool emergency, bool final);
  void arm_emergency_checkpoint();
  void begin_emergency_checkpoint();
  void start_snapshot();
  void checkpoint_phase_done();
  void commit(double work);
  void begin_restore();
  void try_restart();
  void drop_checkpoints_in_flight();
  void interrupt(const Interruption& event);
  void elastic_shrink();
  void reconfigure(int replicas);
  void finish();
  void record_fleet();

  engine::Simulator& sim_;
  TrainingRunConfig config_;
  CostLedger ledger_;
  std::array<std::unique_ptr<InstancePool>, kMarkets> pools_;
  double total_work_ = 0.0;
  double interval_ = 0.0;
  int replicas_needed_ = 1;
  int active_replicas_ = 1;

  JobState state_ = JobState::starting;
  engine::Time state_since_ = 0.0;
  engine::EventId state_event_;
  double work_ = 0.0;        // work at run_since_ (or now, when not running)
  double rate_ = 1.0;        // progress per second while running
  engine::Time run_since_ = 0.0;
  double target_work_ = 0.0; // work at which the running state ends
  double committed_ = 0.0;   // work safe in a durable checkpoint
  double next_checkpoint_work_ = 0.0;
  bool has_checkpoint_ = false;
  // The instants the nodes under a usable reclaim notice go, earliest first (one warning for
  // every pool: notices end in the order they come), and the pending emergency checkpoint's
  // start for the first.
  std::deque<engine::Time> leaving_at_;
  engine::EventId emergency_event_;
  engine::Time not_before_ = 0.0;  // failure detection: no restore before this
  std::optional<CheckpointInProgress> checkpoint_;
  std::optional<AsyncWrite> async_write_;
  bool started_ = false;
  engine::Time start_time_ = 0.0;
  engine::Time end_time_ = 0.0;

  TrainingRunResult counts_;  // counters filled as the run goes; result() completes them
};

// Runs `sim` until the job is done, leaving the clock at its end (the pools' events after it
// are not run), or until `until`, leaving the clock there.
void run_until_done(engine::Simulator& sim, const TrainingRun& run, engine::Time until);

// One run in its own Simulator seeded with `seed`, until done or config.max_wall_time_s.
TrainingRunResult run_training(const TrainingRunConfig& config, uint64_t seed);

}  // namespace cs::fleet
