#include "sim/compute/step_bound.hpp"

#include <algorithm>
#include <limits>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "sim/compute/training_executor.hpp"

namespace cs::compute {

namespace {

constexpr uint32_t kNone = UINT32_MAX;
// Communication tasks a forced gap may chain (compute, then e.g. a reduce-scatter and an
// all-gather on one stream, then compute): longer chains are not looked for (the bound stays a
// bound, only looser).
constexpr int kGapChain = 3;

// The tasks in an order where every task comes after what it waits for (its dependencies and
// its stream's previous task). The builder adds tasks in such an order nearly always: then it
// is the index order, checked in one pass; otherwise Kahn's algorithm over successor lists.
std::vector<uint32_t> waiting_order(const work::TaskGraph& graph, const std::vector<uint32_t>& stream_prev) {
  const uint32_t n = uint32_t(graph.tasks.size());
  const auto each_edge = [&](auto&& edge) {
    for (uint32_t t = 0; t < n; ++t) {
      for (uint32_t p : graph.predecessors(t)) edge(p, t);
      if (stream_prev[t] != kNone) edge(stream_prev[t], t);
    }
  };
  bool ascending = true;
  each_edge([&](uint32_t p, uint32_t t) { ascending = ascending && p < t; });
  std::vector<uint32_t> order;
  order.reserve(n);
  if (ascending) {
    for (uint32_t t = 0; t < n; ++t) order.push_back(t);
    return order;
  }
  std::vector<uint32_t> waiting(n, 0), succ_begin(n + 1, 0);
  each_edge([&](uint32_t p, uint32_t t) { ++succ_begin[p + 1], ++waiting[t]; });
  for (uint32_t i = 0; i < n; ++i) succ_begin[i + 1] += succ_begin[i];
  std::vector<uint32_t> succ(succ_begin[n]), fill(succ_begin.begin(), succ_begin.end() - 1);
  each_edge([&](uint32_t p, uint32_t t) { succ[fill[p]++] = t; });
  for (uint32_t t = 0; t < n; ++t)
    if (waiting[t] == 0) order.push_back(t);
  for (std::size_t k = 0; k < order.size(); ++k)
    for (uint32_t i = succ_begin[order[k]]; i < succ_begin[order[k] + 1]; ++i)
      if (--waiting[succ[i]] == 0) order.push_back(succ[i]);
  if (order.size() != n) throw std::logic_error("step_time_lower_bound: the task graph has a cycle");
  return order;
}

}  // namespace

StepBound step_time_lower_bound(const work::TaskGraph& graph, std::span<const double> item_seconds, int micro_batches,
                                std::span<const double> comm_seconds) {
  const std::size_t n = graph.tasks.size(), workers = graph.workers.size();
  std::vector<uint32_t> stream_prev(n, kNone);
  for (std::size_t q = 0; q + 1 < graph.stream_begin.size(); ++q)
    for (uint32_t k = graph.stream_begin[q] + 1; k < graph.stream_begin[q + 1]; ++k)
      stream_prev[graph.stream_tasks[k]] = graph.stream_tasks[k - 1];
  const std::vector<uint32_t> order = waiting_order(graph, stream_prev);
  // Each task's time and whether it is compute, looked up once: the passes below read them for
  // every dependency (reading the task each time was most of this function's time).
  std::vector<double> duration(n);
  std::vector<uint8_t> timed(n);
  for (std::size_t t = 0; t < n; ++t) {
    const work::Task& task = graph.tasks[t];
    timed[t] = graph.is_timed(task);
    duration[t] = timed[t] ? item_seconds[task.item] : comm_seconds.empty() ? 0.0 : comm_seconds[task.item];
  }
  const auto seconds = [&](uint32_t t) { return duration[t]; };

  // Forward: the latest end of what each task waits for (its earliest start); the whole path.
  std::vector<double> start(n, 0);
  double whole = 0;
  for (uint32_t t : order) {
    for (uint32_t p : graph.predecessors(t)) start[t] = std::max(start[t], start[p] + seconds(p));
    if (stream_prev[t] != kNone) start[t] = std::max(start[t], start[stream_prev[t]] + seconds(stream_prev[t]));
    whole = std::max(whole, start[t] + seconds(t));
  }
  // Backward: the longest path after each task ends.
  std::vector<double> after(n, 0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const uint32_t t = *it;
    const double through = seconds(t) + after[t];
    for (uint32_t p : graph.predecessors(t)) after[p] = std::max(after[p], through);
    if (stream_prev[t] != kNone) after[stream_prev[t]] = std::max(after[stream_prev[t]], through);
  }

  // The longest chain of communication tasks from the end of compute task `from` to the end of
  // `to` (a communication task), at most `depth` more links; -inf when there is none.
  constexpr double kNoChain = -std::numeric_limits<double>::infinity();
  const auto chain = [&](auto&& self, uint32_t from, uint32_t to, int depth) -> double {
    double best = kNoChain;
    const auto link = [&](uint32_t p) {
      if (p == from) best = std::max(best, 0.0);
      else if (depth > 0 && !timed[p]) best = std::max(best, self(self, from, p, depth - 1));
    };
    for (uint32_t p : graph.predecessors(to)) link(p);
    if (stream_prev[to] != kNone) link(stream_prev[to]);
    return best == kNoChain ? kNoChain : best + seconds(to);
  };
  // What compute task `next` must wait after `prev` ends: the longest such chain into it.
  const auto forced_gap = [&](uint32_t prev, uint32_t next) {
    double gap = 0;
    for (uint32_t c : graph.predecessors(next))
      if (!timed[c]) gap = std::max(gap, chain(chain, prev, c, kGapChain - 1));
    return gap;
  };

  // Each worker's compute stream: step-level and per-micro-batch work, forced gaps, head and tail.
  StepBound b;
  const bool whole_step = micro_batches == graph.micro_batches;
  const double per_graph_micro = double(micro_batches) / double(std::max(1, graph.micro_batches));
  std::vector<double> micro_gap(std::size_t(std::max(0, graph.micro_batches)), 0);
  for (uint32_t w = 0; w < workers; ++w) {
    const auto stream = graph.stream(w, work::Stream::compute);
    if (stream.empty()) continue;
    double step_level = 0, per_micro = 0, optimizer = 0, step_gaps = 0, all_micro_gaps = 0;
    std::fill(micro_gap.begin(), micro_gap.end(), 0.0);
    for (std::size_t k = 0; k < stream.size(); ++k) {
      const uint32_t t = stream[k];
      const double s = seconds(t);
      if (graph.tasks[t].kind == work::TaskKind::optimizer) optimizer += s;
      else if (graph.tasks[t].micro < 0) step_level += s;
      else per_micro += s;
      if (k == 0 || comm_seconds.empty()) continue;
      const int32_t micro = graph.tasks[t].micro;
      if (whole_step) {
        all_micro_gaps += forced_gap(stream[k - 1], t);  // every pair: the step is this graph's
      } else if (micro == graph.tasks[stream[k - 1]].micro) {
        const double gap = forced_gap(stream[k - 1], t);
        if (micro < 0) step_gaps += gap;
        else if (std::size_t(micro) < micro_gap.size()) micro_gap[std::size_t(micro)] += gap;
      }
    }
    const double compute = step_level + per_micro * per_graph_micro;
    double gaps = all_micro_gaps;
    if (!whole_step && !micro_gap.empty())
      gaps = step_gaps + double(micro_batches) * *std::min_element(micro_gap.begin(), micro_gap.end());
    b.compute_s += compute;
    b.optimizer_s += optimizer;
    b.step_time_s = std::max(b.step_time_s, start[stream.front()] + compute + optimizer + gaps + after[stream.back()]);
  }
  if (whole_step) b.step_time_s = std::max(b.step_time_s, whole);
  if (workers > 0) b.compute_s /= double(workers), b.optimizer_s /= double(workers);
  return b;
}

std::vector<double> comm_item_seconds(const work::TaskGraph& graph, AloneTimeComm& comm, bool nccl_algorithms) {
  std::vector<int64_t> groups(graph.groups.size(), -1);  // graph group -> the layer's
  std::vector<double> out(graph.comm_items.size(), 0);
  for (std::size_t i = 0; i < graph.comm_items.size(); ++i) {
    for (const work::CommPart& part : graph.comm_items[i].parts) {
      try {
        double s = 0;
        if (part.op == work::CollectiveOp::send_recv) {
          const auto& pair = graph.groups[part.group];
          s = comm.send_time_s(pair[0], pair[1], part.bytes);
        } else {
          if (groups[part.group] < 0) groups[part.group] = comm.group(graph.groups[part.group]);
          const auto group = net::GroupId(groups[part.group]);
          s = comm.alone_time_s(group, part.op, part.bytes,
                                nccl_collective_options(comm, group, part.op, part.bytes, nccl_algorithms));
        }
        out[i] = std::max(out[i], s);
      } catch (const net::CommError&) {  // refused: 0 here, the simulation says why
      }
    }
  }
  return out;
}

}  // namespace cs::compute
