#include "sim/compute/training_executor.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "workloads/collective_plan.hpp"

namespace cs::compute {

using work::Stream;

TrainingExecutor::TrainingExecutor(engine::Simulator& sim, net::Comm& comm, const work::TaskGraph& graph,
                                   std::vector<double> item_seconds, ExecutorOptions options)
    : sim_(sim), comm_(comm), graph_(graph), options_(options), item_seconds_(std::move(item_seconds)) {
  if (item_seconds_.size() != graph.compute_items.size())
    throw std::invalid_argument("TrainingExecutor: one time per compute item expected");
  if (!(options_.comm_compute_share >= 0 && options_.comm_compute_share < 1))
    throw std::invalid_argument("TrainingExecutor: comm_compute_share must be in [0, 1)");
  const std::size_t n = graph.tasks.size();
  timing_.assign(n, {});
  pending_.assign(n, 0);
  // Successors from the predecessor lists (a predecessor listed twice is counted twice).
  succ_begin_.assign(n + 1, 0);
  for (uint32_t t = 0; t < n; ++t) {
    pending_[t] = uint32_t(graph.predecessors(t).size());
    for (uint32_t p : graph.predecessors(t)) ++succ_begin_[p + 1];
  }
  for (std::size_t i = 0; i < n; ++i) succ_begin_[i + 1] += succ_begin_[i];
  succs_.assign(graph.preds.size(), 0);
  std::vector<uint32_t> fill(succ_begin_.begin(), succ_begin_.end() - 1);
  for (uint32_t t = 0; t < n; ++t)
    for (uint32_t p : graph.predecessors(t)) succs_[fill[p]++] = t;

  const std::size_t queues = graph.workers.size() * work::kStreams;
  head_.assign(queues, 0);
  busy_.assign(queues, 0);
  outstanding_.assign(queues, 0);
  comm_active_.assign(graph.workers.size(), 0);
  running_.assign(graph.workers.size(), {});
  comm_groups_.assign(graph.groups.size(), -1);
  choices_.resize(graph.groups.size());
  participants_.assign(graph.comm_items.size(), {});
  participants_known_.assign(graph.comm_items.size(), 0);
  worker_of_rank_.assign(std::size_t(graph.ranks), -1);
  for (uint32_t w = 0; w < graph.workers.size(); ++w)
    for (int r : graph.workers[w].ranks) worker_of_rank_[std::size_t(r)] = int(w);
}

std::size_t TrainingExecutor::queue_of(uint32_t task) const {
  const auto& t = graph_.tasks[task];
  return std::size_t(t.worker) * work::kStreams + std::size_t(t.stream);
}

void TrainingExecutor::start() {
  start_s_ = end_s_ = sim_.now();
  for (uint32_t t = 0; t < graph_.tasks.size(); ++t)
    if (pending_[t] == 0) timing_[t].ready_s = start_s_;
  for (std::size_t q = 0; q < head_.size(); ++q) try_start(q);
}

void TrainingExecutor::try_start(std::size_t q) {
  if (busy_[q]) return;
  const uint32_t position = graph_.stream_begin[q] + head_[q];
  if (position >= graph_.stream_begin[q + 1]) return;
  const uint32_t task = graph_.stream_tasks[position];
  if (pending_[task] > 0) return;
  begin(task);
}

net::GroupId TrainingExecutor::comm_group(uint32_t group) {
  if (comm_groups_[group] < 0) comm_groups_[group] = comm_.group(graph_.groups[group]);
  return net::GroupId(comm_groups_[group]);
}

net::CollectiveOptions nccl_collective_options(net::Comm& comm, net::GroupId group, work::CollectiveOp op, double bytes,
                                               bool nccl_algorithms) {
  using work::CollectiveAlgorithm;
  net::CollectiveOptions chosen;
  if (!nccl_algorithms) return chosen;
  if (op == work::CollectiveOp::all_to_all) {
    chosen.algorithm = CollectiveAlgorithm::direct;
    return chosen;
  }
  double best = std::numeric_limits<double>::infinity();
  // What auto weighs (NCCL's algorithms for the op). torus: XLA's per-dimension bidirectional
  // rings, planned only for a group holding one rank on every chip of a torus (a data-parallel
  // group over a whole TPU slice); refused elsewhere.
  for (CollectiveAlgorithm a : work::tuned_algorithms_for(op)) {
    if (comm.refuses(group, op, a)) continue;  // as the catch below, without the exception's cost
    try {
      const double t = comm.alone_time_s(group, op, bytes, {a, std::nullopt});
      if (t < best) best = t, chosen.algorithm = a;
    } catch (const net::CommError&) {  // no plan for this group, or no in-network reduction here
    }
  }
  return chosen;
}

net::CollectiveOptions TrainingExecutor::collective_options(uint32_t group, work::CollectiveOp op,
                                                                   double bytes) {
  std::vector<Choice>& known = choices_[group];
  for (const Choice& c : known)
    if (c.op == op && c.bytes == bytes) return c.options;
  const net::CollectiveOptions chosen = nccl_collective_options(comm_, comm_group(group), op, bytes, options_.nccl_algorithms);
  known.push_back(Choice{op, bytes, chosen});
  return chosen;
}

// The workers whose GPUs a communication item moves data on (its groups' ranks that belong to
// built workers): their compute may slow while it runs.
const std::vector<uint32_t>& TrainingExecutor::participants(uint32_t item) {
  if (!participants_known_[item]) {
    auto& list = participants_[item];
    for (const auto& part : graph_.comm_items[item].parts)
      for (int r : graph_.groups[part.group])
        if (int w = worker_of_rank_[std::size_t(r)]; w >= 0) list.push_back(uint32_t(w));
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    participants_known_[item] = 1;
  }
  return participants_[item];
}

void TrainingExecutor::begin(uint32_t task) {
  const auto& t = graph_.tasks[task];
  busy_[queue_of(task)] = 1;
  timing_[task].start_s = sim_.now();
  if (t.stream == Stream::compute) {
    Running& run = running_[t.worker];
    run.task = task;
    run.remaining_s = item_seconds_[t.item];
    run.since = sim_.now();
    run.rate = comm_active_[t.worker] > 0 ? 1 - options_.comm_compute_share : 1;
    run.event = sim_.schedule_at(sim_.now() + run.remaining_s / run.rate, *this, task);
    return;
  }
  if (t.stream == Stream::host) {  // CPU offload: a copy or the host's step, at its own pace
    sim_.schedule_at(sim_.now() + item_seconds_[t.item], *this, task);
    return;
  }
  const auto& parts = graph_.comm_items[t.item].parts;
  const auto skipped = [&](const work::CommPart& part) {
    return !options_.skip_groups.empty() && options_.skip_groups[part.group];
  };
  // Counted before anything is issued, so a transfer reported at once cannot end the task early.
  uint32_t& outstanding = outstanding_[queue_of(task)];
  outstanding = 1;
  for (const auto& part : parts) outstanding += !skipped(part);
  for (uint32_t w : participants(t.item)) set_comm_activity(w, +1);
  for (const auto& part : parts) {
    if (skipped(part)) continue;
    if (part.op == work::CollectiveOp::send_recv) {
      const auto& pair = graph_.groups[part.group];
      comm_.send(pair[0], pair[1], part.bytes, this, task, part.group);
    } else {
      comm_.collective(comm_group(part.group), part.op, part.bytes, this, task,
                       collective_options(part.group, part.op, part.bytes));
    }
  }
  if (--outstanding == 0) finish(task);
}

void TrainingExecutor::on_event(uint64_t tag) {
  const uint32_t task = uint32_t(tag);
  if (graph_.tasks[task].stream == Stream::compute) running_[graph_.tasks[task].worker].task = UINT32_MAX;
  finish(task);
}

void TrainingExecutor::on_transfer_done(net::TransferId, uint64_t tag) {
  const uint32_t task = uint32_t(tag);
  if (--outstanding_[queue_of(task)] == 0) finish(task);
}

void TrainingExecutor::finish(uint32_t task) {
  const auto& t = graph_.tasks[task];
  const double now = sim_.now();
  timing_[task].end_s = now;
  end_s_ = std::max(end_s_, now);
  ++finished_;
  const std::size_t q = queue_of(task);
  busy_[q] = 0;
  ++head_[q];
  if (!graph_.is_timed(t))
    for (uint32_t w : participants(t.item)) set_comm_activity(w, -1);
  for (uint32_t i = succ_begin_[task]; i < succ_begin_[task + 1]; ++i) {
    const uint32_t s = succs_[i];
    if (--pending_[s] == 0) {
      timing_[s].ready_s = now;
      try_start(queue_of(s));
    }
  }
  try_start(q);
}

void TrainingExecutor::set_comm_activity(uint32_t worker, int delta) {
  const bool was = comm_active_[worker] > 0;
  comm_active_[worker] += delta;
  if (options_.comm_compute_share > 0 && was != (comm_active_[worker] > 0)) reschedule(worker);
}

// The worker's running compute task changes speed: bank the work done, re-time its end.
void TrainingExecutor::reschedule(uint32_t worker) {
  Running& run = running_[worker];
  if (run.task == UINT32_MAX) return;
  const double now = sim_.now();
  run.remaining_s = std::max(0.0, run.remaining_s - (now - run.since) * run.rate);
  run.since = now;
  run.rate = comm_active_[worker] > 0 ? 1 - options_.comm_compute_share : 1;
  sim_.cancel(run.event);
  run.event = sim_.schedule_at(now + run.remaining_s / run.rate, *this, run.task);
}

}  // namespace cs::compute
