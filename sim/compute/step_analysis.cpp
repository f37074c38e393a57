#include "sim/compute/step_analysis.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace cs::compute {
namespace {

using work::Stream;
using work::TaskKind;

std::size_t type_index(Stream type) {
  switch (work::group_type(type)) {
    case Stream::tp: return 0;
    case Stream::cp: return 1;
    case Stream::ep: return 2;
    case Stream::pp: return 3;
    case Stream::host: return 5;
    default: return 4;
  }
}

class Attribution {
 public:
  Attribution(const work::TaskGraph& g, const std::vector<TaskTiming>& t) : graph_(g), timing_(t) {}

  // The predecessor `task` waited for last (the latest to end; on a tie, communication).
  uint32_t binding(uint32_t task) const {
    uint32_t best = UINT32_MAX;
    for (uint32_t p : graph_.predecessors(task)) {
      if (best == UINT32_MAX || timing_[p].end_s > timing_[best].end_s ||
          (timing_[p].end_s == timing_[best].end_s && !graph_.is_compute(graph_.tasks[p])))
        best = p;
    }
    return best;
  }

  // [a, b) was spent waiting for `task` to end.
  void wait(double a, double b, uint32_t task, WorkerBreakdown& out) const {
    while (b > a) {
      if (task == UINT32_MAX || graph_.is_compute(graph_.tasks[task])) {
        out.bubble_s += b - a;
        return;
      }
      const auto& t = graph_.tasks[task];
      const double ready = timing_[task].ready_s;
      // CPU offload: waiting for the host's optimizer step is optimizer time; for a copy over
      // the host link, exposed offload.
      (t.kind == TaskKind::optimizer ? out.optimizer_s : out.exposed_s[t.stream]) += b - std::max(a, ready);
      if (a >= ready) return;
      b = ready;
      task = binding(task);
    }
  }

 private:
  const work::TaskGraph& graph_;
  const std::vector<TaskTiming>& timing_;
};

// For each worker, its communication or host task (one it moves data in) that ends last.
std::vector<uint32_t> last_communication(const work::TaskGraph& g, const std::vector<TaskTiming>& timing) {
  std::vector<int> worker_of_rank(std::size_t(g.ranks), -1);
  for (uint32_t w = 0; w < g.workers.size(); ++w)
    for (int r : g.workers[w].ranks) worker_of_rank[std::size_t(r)] = int(w);
  std::vector<std::vector<uint32_t>> item_workers(g.comm_items.size());
  std::vector<uint8_t> known(g.comm_items.size(), 0);
  std::vector<uint32_t> last(g.workers.size(), UINT32_MAX);
  for (uint32_t t = 0; t < g.tasks.size(); ++t) {
    const auto& task = g.tasks[t];
    if (g.is_compute(task)) continue;
    if (task.stream == Stream::host) {  // the worker's own host link and host step
      if (last[task.worker] == UINT32_MAX || timing[t].end_s > timing[last[task.worker]].end_s) last[task.worker] = t;
      continue;
    }
    if (!known[task.item]) {
      auto& list = item_workers[task.item];
      for (const auto& part : g.comm_items[task.item].parts)
        for (int r : g.groups[part.group])
          if (int w = worker_of_rank[std::size_t(r)]; w >= 0) list.push_back(uint32_t(w));
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
      known[task.item] = 1;
    }
    for (uint32_t w : item_workers[task.item])
      if (last[w] == UINT32_MAX || timing[t].end_s > timing[last[w]].end_s) last[w] = t;
  }
  return last;
}

}  // namespace

double& ExposedComm::operator[](Stream type) { return seconds[type_index(type)]; }
double ExposedComm::operator[](Stream type) const { return seconds[type_index(type)]; }
double ExposedComm::total() const { return std::accumulate(seconds.begin(), seconds.end(), 0.0); }

StepAnalysis analyze_step(const work::TaskGraph& g, const TrainingExecutor& ex) {
  if (!ex.done()) throw std::logic_error("analyze_step: the executor has not finished the graph");
  const auto& timing = ex.timings();
  const double t0 = ex.start_time_s(), t1 = ex.end_time_s();
  const Attribution attribution(g, timing);
  const auto last_comm = last_communication(g, timing);

  StepAnalysis a;
  a.step_time_s = t1 - t0;
  for (uint32_t w = 0; w < g.workers.size(); ++w) {
    WorkerBreakdown b;
    b.stage = g.workers[w].stage;
    b.replica = g.workers[w].replica;
    double free_at = t0;
    for (uint32_t t : g.stream(w, Stream::compute)) {
      const auto& tm = timing[t];
      if (tm.start_s > free_at) attribution.wait(free_at, tm.start_s, attribution.binding(t), b);
      const double ran = tm.end_s - tm.start_s;
      (g.tasks[t].kind == TaskKind::optimizer ? b.optimizer_s : b.compute_s) += ran;
      b.slowdown_s += ex.slowdown_s(t);
      free_at = tm.end_s;
    }
    // After the last compute task: waiting for this worker's last transfer, then for others.
    if (const uint32_t c = last_comm[w]; c != UINT32_MAX && timing[c].end_s > free_at) {
      attribution.wait(free_at, timing[c].end_s, c, b);
      free_at = timing[c].end_s;
    }
    b.bubble_s += std::max(0.0, t1 - free_at);
    a.workers.push_back(b);
  }
  const double n = double(std::max<std::size_t>(1, a.workers.size()));
  for (const auto& b : a.workers) {
    a.compute_s += b.compute_s / n;
    a.optimizer_s += b.optimizer_s / n;
    a.bubble_s += b.bubble_s / n;
    a.slowdown_s += b.slowdown_s / n;
    for (std::size_t i = 0; i < b.exposed_s.seconds.size(); ++i) a.exposed_s.seconds[i] += b.exposed_s.seconds[i] / n;
  }
  a.bubble_fraction = a.step_time_s > 0 ? a.bubble_s / a.step_time_s : 0;
  return a;
}

}  // namespace cs::compute
