#include "sim/compute/step_bound.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace cs::compute {

namespace {

constexpr uint32_t kNone = UINT32_MAX;

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

StepBound step_time_lower_bound(const work::TaskGraph& graph, std::span<const double> item_seconds, int micro_batches) {
  const std::size_t n = graph.tasks.size(), workers = graph.workers.size();
  std::vector<uint32_t> stream_prev(n, kNone);
  for (std::size_t q = 0; q + 1 < graph.stream_begin.size(); ++q)
    for (uint32_t k = graph.stream_begin[q] + 1; k < graph.stream_begin[q + 1]; ++k)
      stream_prev[graph.stream_tasks[k]] = graph.stream_tasks[k - 1];
  const std::vector<uint32_t> order = waiting_order(graph, stream_prev);
  const auto seconds = [&](uint32_t t) { return graph.is_timed(graph.tasks[t]) ? item_seconds[graph.tasks[t].item] : 0.0; };

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

  // Each worker's compute stream: step-level and per-micro-batch work, head and tail.
  StepBound b;
  const double per_graph_micro = double(micro_batches) / double(std::max(1, graph.micro_batches));
  for (uint32_t w = 0; w < workers; ++w) {
    const auto stream = graph.stream(w, work::Stream::compute);
    if (stream.empty()) continue;
    double step_level = 0, per_micro = 0, optimizer = 0;
    for (uint32_t t : stream) {
      const double s = seconds(t);
      if (graph.tasks[t].kind == work::TaskKind::optimizer) optimizer += s;
      else if (graph.tasks[t].micro < 0) step_level += s;
      else per_micro += s;
    }
    const double compute = step_level + per_micro * per_graph_micro;
    b.compute_s += compute;
    b.optimizer_s += optimizer;
    b.step_time_s = std::max(b.step_time_s, start[stream.front()] + compute + optimizer + after[stream.back()]);
  }
  if (micro_batches == graph.micro_batches) b.step_time_s = std::max(b.step_time_s, whole);
  if (workers > 0) b.compute_s /= double(workers), b.optimizer_s /= double(workers);
  return b;
}

}  // namespace cs::compute
