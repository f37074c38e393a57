#include "sim/jobs/job_cluster.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/engine/priority.hpp"
#include "sim/fleet/run_until_done.hpp"

namespace cs::jobs {
namespace {

using fleet::Market;

std::unique_ptr<StepTimeModel> default_step_time(const JobsConfig& c) {
  std::vector<double> penalties;
  for (const JobClass& k : c.classes) penalties.push_back(k.spread_penalty);
  return std::make_unique<SpreadPenaltyModel>(std::move(penalties));
}

}  // namespace

JobCluster::JobCluster(engine::Simulator& sim, JobsConfig config, std::unique_ptr<StepTimeModel> step_time)
    : sim_(sim),
      config_((config.validate(), std::move(config))),
      // The cluster-wide free-GPU buckets only for the placement that reads them.
      cluster_(config_.fleet.nodes, config_.gpus_per_node, config_.node_domain,
               config_.scheduler.placement == PlacementPolicy::pack),
      book_(static_cast<int>(config_.scheduler.queues.size()), config_.fleet.nodes, config_.gpus_per_node,
            config_.scheduler.preemption),
      fair_share_(config_.quotas(), config_.scheduler.usage_half_life_s, sim.now()),
      step_time_(step_time ? std::move(step_time) : default_step_time(config_)),
      feed_(sim.seed(), config_),
      scheduler_(config_.scheduler, book_, cluster_, fair_share_, *this),
      available_(sim.now(), cluster_.in_service_gpus()) {
  const fleet::PerMarket<int> initial = config_.fleet.initial_nodes();
  int first = 0;
  for (const Market m : fleet::kAllMarkets) {
    fleet::InstancePoolConfig pc;
    pc.name = config_.series_prefix + "/" + std::string(fleet::to_string(m));
    pc.market = m;
    pc.usd_per_hour = config_.fleet.billed_usd_per_node_hour(m);
    pc.failures = config_.fleet.failures;
    // The failure trace is one log of the cluster's nodes: it replays in the on-demand pool.
    if (m != Market::on_demand) pc.failures.trace.clear();
    pc.reclaims = config_.fleet.reclaims;
    pc.provisioning = config_.fleet.provisioning[m];
    pools_[fleet::index(m)] = std::make_unique<fleet::InstancePool>(sim_, std::move(pc), ledger_, this);
    first_node_[m] = first;
    first += initial[m];
  }
  per_node_interruption_rate_ = config_.fleet.interruption_rate_per_s() / config_.fleet.nodes;
  // Every start plans its checkpoints for its node count: the same few plans, computed once.
  const int planned = std::min(config_.fleet.nodes, kPlannedNodes);
  for (int nodes = 1; nodes <= planned; ++nodes) plans_.push_back(compute_checkpoint_plan(nodes));
  const std::size_t q = config_.scheduler.queues.size();
  busy_.assign(q, engine::TimeWeighted(sim.now(), 0.0));
  submitted_.assign(q, 0);
  completed_.assign(q, 0);
  preempted_.assign(q, 0);
  waits_.resize(q);
  class_waits_.resize(config_.classes.size());
  size_waits_.resize(std::size(kSizeBuckets));
  window_wait_sum_.assign(q, 0.0);
  window_starts_.assign(q, 0);
}

JobCluster::~JobCluster() {
  for (engine::EventId* id : {&arrival_event_, &pass_event_, &later_pass_event_, &sample_event_, &release_event_})
    sim_.cancel(*id);
  book_.for_each([&](const Job& j) { sim_.cancel(j.notice_event); });
  for (auto& p : pools_) p->release_all();
}

void JobCluster::start() {
  if (started_) throw std::logic_error("JobCluster::start: already started");
  started_ = true;
  const fleet::PerMarket<int> initial = config_.fleet.initial_nodes();
  const fleet::PerMarket<int> committed = config_.fleet.committed_nodes();
  for (const Market m : fleet::kAllMarkets) {
    pools_[fleet::index(m)]->start_held(initial[m]);
    ledger_.set_committed(pools_[fleet::index(m)]->account(), sim_.now(), committed[m]);
  }
  schedule_arrival();
  if (config_.record_timeseries && config_.sample_interval_s > 0.0)
    sample_event_ = sim_.schedule_at(sim_.now(), *this, tag(Tag::sample), engine::priority::observe);
  check_done();
}

// ---- The stream -------------------------------------------------------------------------

void JobCluster::schedule_arrival() {
  next_ = feed_.next();
  if (!next_) {
    stream_done_ = true;
    return;
  }
  arrival_event_ = sim_.schedule_at(std::max(next_->submit_s, sim_.now()), *this, tag(Tag::arrival));
}

void JobCluster::submit(const JobRequest& r) {
  const QueueConfig& q = config_.scheduler.queues[static_cast<std::size_t>(r.queue)];
  if (r.gpus > std::min<int64_t>(cluster_.total_gpus(), q.max_gpus)) {
    ++rejected_;  // Slurm refuses at submission a job its partition's limits can never run
    return;
  }
  const double waits = static_cast<double>(completed_total_);  // the waits kept (exact: an integer)
  const double held = static_cast<double>(book_.size() + records_.size()) + config_.held_per_wait * waits;
  if (held >= static_cast<double>(config_.max_held_jobs))
    throw HeldJobsLimitError(static_cast<uint64_t>(held) + 1, sim_.now());
  const Slot s = book_.add();
  Job& j = book_.at(s);
  j.id = feed_.taken() - 1;
  j.job_class = r.job_class;
  j.queue = r.queue;
  j.gpus = static_cast<int>(r.gpus);
  j.submit_s = sim_.now();
  j.work_s = r.duration_s;
  j.pending_since_s = sim_.now();
  ++submitted_[static_cast<std::size_t>(r.queue)];
  book_.enqueue(s);
  request_pass();
}

// ---- Running jobs ------------------------------------------------------------------------

CheckpointPlan JobCluster::checkpoint_plan(int nodes) const {
  const auto i = static_cast<std::size_t>(nodes) - 1;  // a run holds at least one node
  return nodes >= 1 && i < plans_.size() ? plans_[i] : compute_checkpoint_plan(nodes);
}

CheckpointPlan JobCluster::compute_checkpoint_plan(int nodes) const {
  CheckpointPlan plan;
  if (!config_.checkpoint) return plan;
  const fleet::CheckpointConfig& c = *config_.checkpoint;
  plan.blocking_s = c.blocking_s(nodes);
  plan.lag_s = c.mode == fleet::CheckpointMode::async ? c.write_s(nodes) : 0.0;
  if (c.interval_s) {
    plan.interval_work_s = *c.interval_s;
  } else {
    // Young/Daly for the job's own nodes: its interruptions are its nodes' failures and reclaims.
    const double rate = per_node_interruption_rate_ * nodes;
    plan.interval_work_s = rate > 0.0 ? fleet::young_daly_interval_s(plan.blocking_s, 1.0 / rate)
                                      : std::numeric_limits<double>::infinity();
    if (c.mode == fleet::CheckpointMode::async) plan.interval_work_s = std::max(plan.interval_work_s, plan.lag_s);
  }
  return plan;
}

RunSegment JobCluster::plan_run(const Job& job, const Allocation& allocation, double slowdown) const {
  const int nodes = ClusterState::node_count(allocation);
  const bool restart = !std::isnan(job.first_start_s);
  RunSegment r;
  r.start_s = sim_.now();
  r.rate = 1.0 / slowdown;
  r.work0 = job.committed_s;
  r.total_work = job.work_s;
  r.plan = checkpoint_plan(nodes);
  if (restart || config_.restore.launch_overhead_at_start) {
    const fleet::CheckpointConfig none;
    r.overhead_s = fleet::restore_seconds(config_.restore, config_.checkpoint ? *config_.checkpoint : none, nodes,
                                          restart && job.committed_s > 0.0);
  }
  return r;
}

double JobCluster::release_if_started(Slot s, const Allocation& allocation) {
  const Job& j = book_.at(s);
  return plan_run(j, allocation, step_time_.slowdown(j.job_class, shape_of(cluster_, allocation), allocation)).end_s();
}

void JobCluster::set_held(int queue) {
  const double held = book_.held_gpus(queue);
  busy_[static_cast<std::size_t>(queue)].set(sim_.now(), held);
  fair_share_.set_held(queue, held, sim_.now());
}

void JobCluster::hold(Slot s, double release_s) {
  if (!(release_s >= sim_.now()) || !std::isfinite(release_s))
    throw std::logic_error("JobCluster: a release at t=" + std::to_string(release_s) + " s, now " +
                           std::to_string(sim_.now()) + " s");
  Job& j = book_.at(s);
  j.release_s = release_s;
  j.hold_seq = ++holds_;
  book_.hold(s);
  // A release not before the next one's leaves it the next (at the same instant, the earlier
  // hold goes first): the event stays, without asking the index (most holds release later).
  if (release_event_.valid() && release_s >= release_event_s_) return;
  schedule_next_release();
}

void JobCluster::unhold(Slot s) {
  book_.unhold(s);
  schedule_next_release();
}

[[gnu::flatten]] void JobCluster::schedule_next_release() {
  const ReleaseIndex& index = book_.by_release();
  const ReleaseIndex::Entry* first = index.first();
  Slot next = -1;
  double at = 0.0;
  if (first != nullptr) {
    next = first->slot;
    at = first->release_s;
    // Holders releasing at the same instant go in the order of their holds, as their events
    // would have (the index orders them by id): placement reads the free-GPU buckets, whose
    // order follows the order of releases.
    const ReleaseIndex::Entry* second = index.second();
    if (second != nullptr && second->release_s == at) {
      uint64_t earliest = book_.at(next).hold_seq;
      index.walk([&](const ReleaseIndex::Entry& e) {
        if (e.release_s != at) return false;
        const uint64_t seq = book_.at(e.slot).hold_seq;
        if (seq < earliest) {
          earliest = seq;
          next = e.slot;
        }
        return true;
      });
    }
  }
  if (release_event_.valid() && next == release_slot_ && at == release_event_s_) return;
  // (No event to cancel after its release ran: the engine's cancel of no event is a call.)
  if (release_event_.valid()) sim_.cancel(release_event_);
  release_event_ = {};
  release_slot_ = next;
  release_event_s_ = at;
  if (next >= 0) release_event_ = sim_.schedule_at(at, *this, tag(Tag::release, static_cast<uint64_t>(next)));
}

void JobCluster::start(Slot s, const Allocation& allocation) {
  Job& j = book_.at(s);
  const double now = sim_.now();
  book_.dequeue(s);
  const double waited = now - j.pending_since_s;
  j.wait_s += waited;
  window_wait_sum_[static_cast<std::size_t>(j.queue)] += waited;
  ++window_starts_[static_cast<std::size_t>(j.queue)];
  cluster_.allocate(allocation);
  const PlacementShape shape = shape_of(cluster_, allocation);
  j.slowdown = step_time_.slowdown(j.job_class, shape, allocation);
  j.spread = shape.domains;
  j.nodes = ClusterState::node_count(allocation);
  j.run = plan_run(j, allocation, j.slowdown);
  if (std::isnan(j.first_start_s)) j.first_start_s = now;
  j.allocation.assign(allocation.begin(), allocation.end());  // into the slot's buffer
  j.phase = JobPhase::running;
  hold(s, j.run.end_s());
  set_held(j.queue);
  ++runs_;
  spread_sum_ += j.spread;
  slowdown_sum_ += j.slowdown;
}

double JobCluster::close_segment(Job& j) {
  const double now = sim_.now();
  if (j.notice_event.valid()) sim_.cancel(j.notice_event);  // the segment's emergency checkpoint goes with it
  j.notice_event = {};
  const RunSegment& r = j.run;
  const double elapsed = now - r.start_s;
  const double restoring = std::min(elapsed, r.overhead_s);
  const RunSegment::Progress progress = r.progress_at(now);
  const double work = progress.work;
  const double working = (work - r.work0) / r.rate;
  restore_gpu_s_ += restoring * j.gpus;
  checkpoint_gpu_s_ += std::max(0.0, elapsed - restoring - working) * j.gpus;
  slowdown_gpu_s_ += (work - r.work0) * (1.0 / r.rate - 1.0) * j.gpus;
  checkpoints_ += progress.checkpoints;
  return work;
}

void JobCluster::release_and_requeue(Slot s) {
  Job& j = book_.at(s);
  unhold(s);
  cluster_.release(j.allocation);
  available_.set(sim_.now(), cluster_.in_service_gpus());  // a leaving node's GPUs go with the job
  j.allocation.clear();
  if (j.commit_at_release_s >= 0.0) j.committed_s = std::max(j.committed_s, j.commit_at_release_s);
  j.commit_at_release_s = -1.0;
  j.phase = JobPhase::pending;
  j.pending_since_s = sim_.now();
  book_.enqueue(s);
  set_held(j.queue);
  request_pass();
}

void JobCluster::complete(Slot s) {
  Job& j = book_.at(s);
  close_segment(j);
  unhold(s);
  cluster_.release(j.allocation);
  available_.set(sim_.now(), cluster_.in_service_gpus());  // a leaving node's GPUs go with the job
  j.phase = JobPhase::done;
  j.end_s = sim_.now();
  j.committed_s = j.work_s;
  const auto q = static_cast<std::size_t>(j.queue);
  ++completed_[q];
  ++completed_total_;
  waits_[q].push_back(j.wait_s);
  if (j.job_class >= 0) class_waits_[static_cast<std::size_t>(j.job_class)].push_back(j.wait_s);
  size_waits_[size_bucket(j.gpus)].push_back(j.wait_s);
  runtime_sum_ += j.end_s - j.first_start_s;
  if (config_.record_jobs) records_.push_back(record_of(j));
  set_held(j.queue);
  book_.remove(s);
  request_pass();
  check_done();
}

// ---- Interruptions (preemption, the fleet's failures and reclaims): job_cluster_interruptions.cpp

// One pending later pass, at the earliest time asked for: that pass asks again for the jobs
// still waiting.
void JobCluster::pass_at(double t) {
  if (later_pass_event_.valid() && later_pass_s_ <= t) return;
  sim_.cancel(later_pass_event_);
  later_pass_s_ = t;
  later_pass_event_ = sim_.schedule_at(t, *this, tag(Tag::later_pass));
}

// ---- Scheduling and sampling -------------------------------------------------------------

[[gnu::flatten]] void JobCluster::request_pass() {
  if (pass_event_.valid() || done_) return;
  pass_event_ = sim_.schedule_at(sim_.now(), *this, tag(Tag::pass), engine::priority::resolve);
}

void JobCluster::sample() {
  engine::Recorder& rec = sim_.recorder();
  const double now = sim_.now();
  const std::string& p = config_.series_prefix;
  int busy = 0;
  for (std::size_t q = 0; q < config_.scheduler.queues.size(); ++q) {
    const std::string& name = config_.scheduler.queues[q].name;
    const int held = book_.held_gpus(static_cast<int>(q));
    busy += held;
    rec.sample(p + ".queue_length." + name, now, static_cast<double>(book_.pending(static_cast<int>(q)).size()));
    rec.sample(p + ".busy_gpus." + name, now, held);
    if (window_starts_[q] > 0)
      rec.sample(p + ".wait_mean_s." + name, now, window_wait_sum_[q] / static_cast<double>(window_starts_[q]));
    window_wait_sum_[q] = 0.0;
    window_starts_[q] = 0;
  }
  rec.sample(p + ".pending", now, static_cast<double>(book_.pending_total()));
  rec.sample(p + ".busy_gpus", now, busy);
  rec.sample(p + ".free_gpus", now, cluster_.free_gpus());
  rec.sample(p + ".down_gpus", now, cluster_.total_gpus() - cluster_.available_gpus());
}

void JobCluster::on_event(uint64_t t) {
  const auto kind = static_cast<Tag>(t & 0xf);
  const auto payload = static_cast<Slot>(t >> 4);
  switch (kind) {
    case Tag::arrival: {
      arrival_event_ = {};
      const JobRequest r = *next_;
      submit(r);
      schedule_arrival();
      check_done();
      break;
    }
    case Tag::release: {
      release_event_ = {};
      release_slot_ = -1;
      const Job& j = book_.at(payload);
      if (j.phase == JobPhase::running) complete(payload);
      else release_and_requeue(payload);
      // The next releases are most likely the index's first two: their jobs' records are read
      // then, at random places in the book, and then the nodes of their allocations, elsewhere
      // again (cache misses, a tenth of a run). Fetch them a release ahead, in two stages: the
      // record of the one after next now; for the next, whose record was fetched at the last
      // release, its allocation's nodes.
      if (const ReleaseIndex::Entry* next = book_.by_release().first()) book_.prefetch_allocation(next->slot);
      if (const ReleaseIndex::Entry* after = book_.by_release().second()) book_.prefetch(after->slot);
      break;
    }
    case Tag::pass:
      pass_event_ = {};
      sim_.poll_interrupt();  // a pass over a long queue is the run's costly event
      scheduler_.pass(sim_.now());
      break;
    case Tag::later_pass:
      later_pass_event_ = {};
      request_pass();
      break;
    case Tag::emergency_checkpoint:
      emergency_checkpoint(payload);
      break;
    case Tag::sample:
      sample();
      sample_event_ = done_ ? engine::EventId{}
                            : sim_.schedule_in(config_.sample_interval_s, *this, tag(Tag::sample),
                                               engine::priority::observe);
      break;
  }
}

// ---- The end (the result: job_cluster_result.cpp) ----------------------------------------

void JobCluster::check_done() {
  if (!done_ && started_ && stream_done_ && book_.size() == 0) finish();
}

void JobCluster::finish() {
  done_ = true;
  end_s_ = sim_.now();
  for (engine::EventId* id : {&arrival_event_, &pass_event_, &later_pass_event_, &sample_event_}) {
    sim_.cancel(*id);
    *id = {};
  }
  if (config_.record_timeseries && config_.sample_interval_s > 0.0) sample();
  for (auto& p : pools_) {
    p->release_all();
    ledger_.set_committed(p->account(), end_s_, 0);  // the commitment ends with the run
  }
}

void run_until_done(engine::Simulator& sim, const JobCluster& cluster, double until) {
  fleet::run_until_done(sim, [&] { return cluster.done(); }, until);
}

JobsResult run_jobs(const JobsConfig& config, uint64_t seed) {
  engine::Simulator sim(seed);
  JobCluster cluster(sim, config);
  cluster.start();
  run_until_done(sim, cluster, config.until_s);
  return cluster.result();
}

}  // namespace cs::jobs
