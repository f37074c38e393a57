#include "sim/fleet/training_run.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/fleet/run_until_done.hpp"

namespace cs::fleet {
namespace {

constexpr int kTracePid = 1;

}  // namespace

TrainingRun::TrainingRun(engine::Simulator& sim, TrainingRunConfig config)
    : sim_(sim), config_(std::move(config)) {
  config_.validate();
  total_work_ = config_.work_s();
  interval_ = config_.checkpoint_interval_s();
  if (config_.elastic.enabled) replicas_needed_ = config_.nodes / config_.elastic.nodes_per_replica;
  active_replicas_ = replicas_needed_;

  // The failure trace is one log of the job's nodes: it replays in the pool that starts with
  // the most nodes (the first market in on_demand, spot, reserved order on a tie).
  const PerMarket<int> initial = config_.initial_nodes();
  Market trace_market = Market::on_demand;
  for (const Market m : kAllMarkets)
    if (initial[m] > initial[trace_market]) trace_market = m;
  for (const Market m : kAllMarkets) {
    InstancePoolConfig pc;
    pc.name = config_.series_prefix + "/" + std::string(to_string(m));
    pc.market = m;
    pc.usd_per_hour = config_.billed_usd_per_node_hour(m);
    pc.failures = config_.failures;
    if (m != trace_market) pc.failures.trace.clear();
    pc.reclaims = config_.reclaims;
    pc.provisioning = config_.provisioning[m];
    pools_[index(m)] = std::make_unique<InstancePool>(sim_, std::move(pc), ledger_, this);
  }
  if (std::isfinite(config_.fallback_after_s))
    pools_[index(Market::spot)]->set_fallback(
        {pools_[index(Market::on_demand)].get(), config_.fallback_after_s});

  const auto mtbf = [](double rate) { return rate > 0.0 ? 1.0 / rate : std::numeric_limits<double>::infinity(); };
  counts_.mtbf_s = mtbf(config_.interruption_rate_per_s());
  counts_.work_losing_mtbf_s = mtbf(config_.work_losing_rate_per_s());
  counts_.checkpoint_interval_s = interval_;
  counts_.checkpoint_write_s = config_.checkpoint.write_s(config_.nodes);
  counts_.checkpoint_blocking_s = config_.checkpoint.blocking_s(config_.nodes);
}

TrainingRun::~TrainingRun() {
  sim_.cancel(state_event_);
  sim_.cancel(emergency_event_);
  if (async_write_) sim_.cancel(async_write_->done);
  for (auto& p : pools_) p->release_all();
}

void TrainingRun::start() {
  if (started_) throw std::logic_error("TrainingRun::start: already started");
  started_ = true;
  start_time_ = sim_.now();
  state_since_ = start_time_;
  sim_.recorder().name_process(kTracePid, config_.series_prefix);
  const PerMarket<int> initial = config_.initial_nodes();
  const PerMarket<int> committed = config_.committed_nodes();
  for (const Market m : kAllMarkets) {
    pools_[index(m)]->start_held(initial[m]);
    ledger_.set_committed(pools_[index(m)]->account(), start_time_, committed[m]);
  }
  record_fleet();
  if (config_.record_timeseries)
    sim_.recorder().sample(config_.series_prefix + ".state", sim_.now(),
                           static_cast<double>(JobState::starting));
  next_checkpoint_work_ = interval_;
  const RestoreConfig& r = config_.restore;
  schedule_state_end(r.launch_overhead_at_start
                         ? r.restart.seconds(config_.nodes) + r.warmup_s
                         : 0.0);
}

// ---- Quantities --------------------------------------------------------------------------

double TrainingRun::current_work() const {
  if (state_ != JobState::running) return work_;
  return std::min(target_work_, work_ + rate_ * (sim_.now() - run_since_));
}

int TrainingRun::held_nodes() const {
  int n = 0;
  for (const auto& p : pools_) n += p->held();
  return n;
}

int TrainingRun::replicas_held() const {
  return config_.elastic.enabled ? held_nodes() / config_.elastic.nodes_per_replica
                                 : (held_nodes() >= config_.nodes ? 1 : 0);
}

int TrainingRun::active_nodes() const {
  return config_.elastic.enabled ? active_replicas_ * config_.elastic.nodes_per_replica
                                 : config_.nodes;
}

double TrainingRun::progress_rate() const {
  if (!config_.elastic.enabled) return 1.0;
  return std::pow(static_cast<double>(active_replicas_) / replicas_needed_,
                  config_.elastic.throughput_exponent);
}

// ---- State machine -----------------------------------------------------------------------

void TrainingRun::enter(JobState s) {
  const engine::Time now = sim_.now();
  counts_.time_in_state_s[static_cast<std::size_t>(state_)] += now - state_since_;
  sim_.recorder().trace_complete(to_string(state_), "training_run", kTracePid, 0, state_since_,
                                 now - state_since_);
  state_ = s;
  state_since_ = now;
  if (config_.record_timeseries)
    sim_.recorder().sample(config_.series_prefix + ".state", now, static_cast<double>(s));
}

void TrainingRun::schedule_state_end(double after_s) {
  sim_.cancel(state_event_);
  state_event_ = sim_.schedule_in(std::max(0.0, after_s), *this, kStateEnd);
}

void TrainingRun::begin_running() {
  if (config_.elastic.enabled && active_replicas_ < replicas_needed_ &&
      replicas_held() > active_replicas_) {
    reconfigure(std::min(replicas_held(), replicas_needed_));
    return;
  }
  rate_ = progress_rate();
  run_since_ = sim_.now();
  target_work_ = std::min(next_checkpoint_work_, total_work_);
  enter(JobState::running);
  schedule_state_end((target_work_ - work_) / rate_);
  arm_emergency_checkpoint();
}

// The emergency checkpoint of the first notice still to come, started as late as it can be
// written before the nodes go: the job trains until then. A notice whose write no longer fits
// (a restore or a checkpoint took its start) saves nothing: the job runs on into the reclaim.
void TrainingRun::arm_emergency_checkpoint() {
  if (emergency_event_.valid()) return;
  const double durable = config_.checkpoint.durable_s(active_nodes());
  while (!leaving_at_.empty() && leaving_at_.front() - durable < sim_.now()) leaving_at_.pop_front();
  if (leaving_at_.empty()) return;
  emergency_event_ = sim_.schedule_at(leaving_at_.front() - durable, *this, kEmergencyCheckpoint);
}

void TrainingRun::begin_emergency_checkpoint() {
  emergency_event_ = {};
  if (state_ != JobState::running || leaving_at_.empty()) return;  // re-armed when it runs again
  const engine::Time leave = leaving_at_.front();
  leaving_at_.pop_front();
  work_ = current_work();
  begin_checkpoint(true, false);
  checkpoint_->ends_at = leave;
  sim_.cancel(state_event_);
  state_event_ = sim_.schedule_at(leave, *this, kStateEnd);  // durable as the nodes go, exactly
}

void TrainingRun::begin_checkpoint(bool emergency, bool final) {
  checkpoint_ = CheckpointInProgress{work_, CheckpointPhase::write, emergency, final};
  enter(JobState::checkpointing);
  const CheckpointConfig& c = config_.checkpoint;
  if (c.mode == CheckpointMode::sync || emergency || final) {
    // Must be durable before the job goes on (or the instance goes): snapshot + write.
    schedule_state_end(c.durable_s(active_nodes()));
  } else if (async_write_) {
    checkpoint_->phase = CheckpointPhase::wait_previous;  // one background write at a time
  } else {
    start_snapshot();
  }
}

void TrainingRun::start_snapshot() {
  checkpoint_->phase = CheckpointPhase::snapshot;
  schedule_state_end(config_.checkpoint.snapshot_s(active_nodes()));
}

void TrainingRun::checkpoint_phase_done() {
  const CheckpointInProgress c = *checkpoint_;
  checkpoint_.reset();
  if (c.phase == CheckpointPhase::write) {
    commit(c.work);
    if (c.final) {
      finish();
      return;
    }
    // Durable as the nodes go. The reclaim at that instant ran first (on_interruption
    // completes the checkpoint then); reaching here from the checkpoint's own end means the
    // nodes did not go (a failure took them first and the replacements are not noticed).
    if (c.emergency) ++counts_.emergency_checkpoints;
  } else {  // snapshot taken: the write goes on in the background
    async_write_ = AsyncWrite{c.work, sim_.schedule_in(config_.checkpoint.write_s(active_nodes()),
                                                       *this, kAsyncWriteDone)};
  }
  next_checkpoint_work_ = c.work + interval_;
  begin_running();
}

void TrainingRun::commit(double work) {
  ++counts_.checkpoints;
  has_checkpoint_ = true;
  committed_ = std::max(committed_, work);
  if (config_.record_timeseries)
    sim_.recorder().sample(config_.series_prefix + ".committed_work_s", sim_.now(), committed_);
}

void TrainingRun::begin_restore() {
  active_replicas_ = config_.elastic.enabled ? std::min(replicas_held(), replicas_needed_)
                                             : replicas_needed_;
  ++counts_.restores;
  work_ = committed_;
  next_checkpoint_work_ = committed_ + interval_;
  const double detection = std::max(0.0, not_before_ - sim_.now());
  enter(JobState::restoring);
  schedule_state_end(detection + config_.restore_s(active_nodes(), has_checkpoint_));
}

void TrainingRun::try_restart() {
  const bool enough = config_.elastic.enabled
                          ? replicas_held() >= config_.elastic.min_replicas
                          : held_nodes() >= config_.nodes;
  if (enough) {
    begin_restore();
  } else {
    sim_.cancel(state_event_);
    state_event_ = {};
    enter(JobState::waiting);
  }
}

// A checkpoint being written and a background write need every node that wrote a shard: an
// interruption loses both.
void TrainingRun::drop_checkpoints_in_flight() {
  if (checkpoint_ && checkpoint_->phase == CheckpointPhase::write) ++counts_.checkpoint_writes_lost;
  checkpoint_.reset();
  if (async_write_) {
    sim_.cancel(async_write_->done);
    async_write_.reset();
    ++counts_.async_writes_lost;
  }
}

// Drops what an interruption destroys: the work since the durable checkpoint and the
// checkpoints in flight.
void TrainingRun::interrupt(const Interruption& event) {
  counts_.lost_work_s += current_work() - committed_;
  work_ = committed_;
  drop_checkpoints_in_flight();
  sim_.cancel(state_event_);
  state_event_ = {};
  sim_.cancel(emergency_event_);  // re-armed when it runs again, on the nodes it holds then
  emergency_event_ = {};
  if (event.kind == LossKind::hardware_failure)
    not_before_ = std::max(not_before_, sim_.now() + config_.restore.detection_s);
  try_restart();
}

// Elastic: the surviving replicas keep the state; only the step in flight is lost (and the
// checkpoints in flight, which miss the shards of the nodes that went).
void TrainingRun::elastic_shrink() {
  const double w = current_work();
  const double step = config_.step_time_s;
  const double kept = std::max(committed_, std::floor(w / step) * step);
  counts_.lost_work_s += std::max(0.0, w - kept);
  work_ = std::min(w, kept);
  drop_checkpoints_in_flight();
  reconfigure(std::min(replicas_held(), replicas_needed_));
}

void TrainingRun::reconfigure(int replicas) {
  active_replicas_ = replicas;
  ++counts_.reconfigurations;
  enter(JobState::reconfiguring);
  schedule_state_end(config_.elastic.reconfigure_s);
}

void TrainingRun::finish() {
  work_ = total_work_;
  sim_.cancel(state_event_);
  state_event_ = {};
  sim_.cancel(emergency_event_);
  emergency_event_ = {};
  leaving_at_.clear();
  if (async_write_) sim_.cancel(async_write_->done);  // superseded: the run is over
  async_write_.reset();
  enter(JobState::done);
  end_time_ = sim_.now();
  for (auto& p : pools_) {
    p->release_all();
    ledger_.set_committed(p->account(), end_time_, 0);  // the commitment ends with the run
  }
  record_fleet();
}

void TrainingRun::record_fleet() {
  if (!config_.record_timeseries) return;
  engine::Recorder& rec = sim_.recorder();
  const engine::Time now = sim_.now();
  for (const Market m : kAllMarkets)
    rec.sample(config_.series_prefix + ".nodes." + std::string(to_string(m)), now,
               pools_[index(m)]->held());
  rec.sample(config_.series_prefix + ".cost_usd", now, ledger_.usd(now));
}

// ---- Events ------------------------------------------------------------------------------

void TrainingRun::on_event(uint64_t tag) {
  if (tag == kAsyncWriteDone) {
    const double work = async_write_->work;
    async_write_.reset();
    commit(work);
    if (state_ == JobState::checkpointing && checkpoint_ &&
        checkpoint_->phase == CheckpointPhase::wait_previous)
      start_snapshot();
    return;
  }
  if (tag == kEmergencyCheckpoint) {
    begin_emergency_checkpoint();
    return;
  }
  state_event_ = {};
  switch (state_) {
    case JobState::starting:
    case JobState::restoring:
    case JobState::reconfiguring:
      begin_running();
      break;
    case JobState::running:
      work_ = target_work_;  // exactly: no drift from rate x time
      if (work_ >= total_work_) {
        if (config_.checkpoint.final_checkpoint) {
          begin_checkpoint(false, true);
        } else {
          finish();
        }
      } else {
        begin_checkpoint(false, false);
      }
      break;
    case JobState::checkpointing:
      checkpoint_phase_done();
      break;
    case JobState::waiting:
    case JobState::done:
      break;
  }
}

void TrainingRun::on_reclaim_notice(InstancePool&, std::span<const int> ids, double warning_s) {
  if (!started_ || state_ == JobState::done || !config_.checkpoint.emergency_on_notice) return;
  if (config_.elastic.enabled) {
    // An elastic job keeps going if enough replicas survive: no checkpoint needed.
    const int after = (held_nodes() - static_cast<int>(ids.size())) /
                      config_.elastic.nodes_per_replica;
    if (after >= config_.elastic.min_replicas) return;
  }
  if (config_.checkpoint.durable_s(active_nodes()) > warning_s) return;
  // The job trains on; its checkpoint starts as late as it can (arm_emergency_checkpoint).
  leaving_at_.push_back(sim_.now() + warning_s);
  if (state_ == JobState::running) arm_emergency_checkpoint();
}

void TrainingRun::on_interruption(InstancePool&, std::span<const int>, const Interruption& event) {
  if (!started_ || state_ == JobState::done) return;
  record_fleet();
  if (state_ == JobState::checkpointing && checkpoint_->emergency && checkpoint_->ends_at <= sim_.now()) {
    // Written by the instant the nodes go: it counts. The reclaim, noticed first, runs first.
    sim_.cancel(state_event_);
    state_event_ = {};
    checkpoint_phase_done();
  }
  if (state_ == JobState::waiting) return;  // no work in progress to lose
  const bool elastic = config_.elastic.enabled && event.instances_lost;
  if (elastic && held_nodes() >= active_nodes()) return;  // a spare node went
  if (event.kind == LossKind::spot_reclaim) {
    ++counts_.interruptions;
  } else {
    ++counts_.failures;
  }
  if (elastic && replicas_held() >= config_.elastic.min_replicas) {
    if (state_ == JobState::starting || state_ == JobState::restoring) {
      begin_restore();  // start over on the replicas left
    } else {
      elastic_shrink();
    }
    return;
  }
  interrupt(event);
}

void TrainingRun::on_ready(InstancePool&, std::span<const int>) {
  if (!started_ || state_ == JobState::done) return;
  record_fleet();
  if (state_ == JobState::waiting) {
    try_restart();
  } else if (config_.elastic.enabled && state_ == JobState::running &&
             active_replicas_ < replicas_needed_ && replicas_held() > active_replicas_) {
    work_ = current_work();
    reconfigure(std::min(replicas_held(), replicas_needed_));
  }
}

// ---- Result ------------------------------------------------------------------------------

TrainingRunResult TrainingRun::result() const {
  TrainingRunResult r = counts_;
  const engine::Time now = done() ? end_time_ : sim_.now();
  r.completed = done();
  if (!done()) r.time_in_state_s[static_cast<std::size_t>(state_)] += now - state_since_;
  r.wall_time_s = now - start_time_;
  r.useful_time_s = done() ? total_work_ : committed_;
  r.goodput = r.wall_time_s > 0.0 ? r.useful_time_s / r.wall_time_s : 0.0;
  r.restore_time_s = r.time_in_state_s[static_cast<std::size_t>(JobState::restoring)];
  r.money = money(ledger_, now, config_.owned_billing(), (now - start_time_) / 3600.0);
  r.cost_usd_by_market = r.money.usd_by_market;
  r.node_hours_by_market = ledger_.instance_hours_by_market(now);
  r.cost_usd = r.money.cost_usd;
  r.tokens = r.useful_time_s / config_.step_time_s * config_.tokens_per_step;
  for (const auto& p : pools_) {
    r.node_failures += p->stats().failures;
    r.reclaims += p->stats().reclaims;
    r.fallbacks += p->stats().fallbacks;
  }
  r.events = sim_.events_processed();
  return r;
}

void run_until_done(engine::Simulator& sim, const TrainingRun& run, engine::Time until) {
  run_until_done(sim, [&] { return run.done(); }, until);
}

TrainingRunResult run_training(const TrainingRunConfig& config, uint64_t seed) {
  engine::Simulator sim(seed);
  TrainingRun run(sim, config);
  run.start();
  run_until_done(sim, run, run.config().max_wall_time_s);
  return run.result();
}

}  // namespace cs::fleet
