#include "sim/compute/training_trace.hpp"

#include <string>

#include "workloads/training_placement.hpp"

namespace cs::compute {
namespace {

std::string_view pass_prefix(work::TaskKind kind) {
  using work::TaskKind;
  switch (kind) {
    case TaskKind::forward: return "F";
    case TaskKind::backward_input: return "B";
    case TaskKind::backward_weight: return "W";
    case TaskKind::recompute: return "R";
    case TaskKind::optimizer: return "opt";
    default: return "";
  }
}

std::string task_name(const work::TaskGraph& g, const work::Task& t) {
  std::string name;
  if (t.stream == work::Stream::host) {
    const auto& ops = g.compute_items[t.item].ops;
    name = "host ";
    name.append(ops.empty() ? std::string_view("work") : ops.front().name);
  } else if (g.is_compute(t)) {
    name = pass_prefix(t.kind);
  } else {
    const auto& parts = g.comm_items[t.item].parts;
    name.append(parts.empty() ? std::string_view("comm") : work::to_string(parts.front().op));
    name.append(" ");
    name.append(work::to_string(work::group_type(t.stream)));
  }
  if (t.layer >= 0) name.append(" L").append(std::to_string(t.layer));
  if (t.layer == -2) name.append(" embedding");
  if (t.layer == -3) name.append(" head");
  if (t.micro >= 0) name.append(" mb").append(std::to_string(t.micro));
  return name;
}

// Streams any task of the graph runs on.
std::vector<bool> used_streams(const work::TaskGraph& g) {
  std::vector<bool> used(work::kStreams, false);
  for (const auto& t : g.tasks) used[std::size_t(t.stream)] = true;
  return used;
}

void name_threads(engine::Recorder& recorder, int pid, const std::vector<bool>& used) {
  for (int s = 0; s < work::kStreams; ++s)
    if (used[std::size_t(s)]) recorder.name_thread(pid, s, work::to_string(static_cast<work::Stream>(s)));
}

}  // namespace

bool record_trace(const work::TaskGraph& g, const std::vector<TaskTiming>& timings, engine::Recorder& recorder,
                  const std::vector<int>& gpu_of_rank, const TraceOptions& options) {
  const auto used = used_streams(g);
  std::size_t gpu_tracks = 0;
  for (const auto& worker : g.workers) gpu_tracks += worker.ranks.size();
  const std::size_t per_worker = g.workers.empty() ? 0 : gpu_tracks / g.workers.size();
  const bool per_gpu = !gpu_of_rank.empty() && g.tasks.size() * per_worker <= options.max_spans;
  const auto gpu = [&](int rank) { return gpu_of_rank[std::size_t(rank)]; };

  for (uint32_t w = 0; w < g.workers.size(); ++w) {
    const auto& worker = g.workers[w];
    const std::string where =
        "stage " + std::to_string(worker.stage) + " replica " + std::to_string(worker.replica);
    if (per_gpu) {
      for (int r : worker.ranks) {
        std::string name = "GPU " + std::to_string(gpu(r));
        if (options.gpus_per_node > 0) name += " (node " + std::to_string(gpu(r) / options.gpus_per_node) + ")";
        name += ": " + where + ", rank " + std::to_string(r);
        recorder.name_process(options.pid_base + gpu(r), name);
        name_threads(recorder, options.pid_base + gpu(r), used);
      }
      continue;
    }
    std::string name = where;
    if (!gpu_of_rank.empty()) {
      name.append(" (GPU");
      for (int r : worker.ranks) name.append(" ").append(std::to_string(gpu(r)));
      name.append(")");
    }
    recorder.name_process(options.pid_base + int(w), name);
    name_threads(recorder, options.pid_base + int(w), used);
  }
  if (!recorder.trace_enabled()) return per_gpu;
  for (uint32_t i = 0; i < g.tasks.size(); ++i) {
    const auto& t = g.tasks[i];
    const auto& tm = timings[i];
    const std::string name = task_name(g, t);
    const auto category = work::to_string(t.kind);
    if (!per_gpu) {
      recorder.trace_complete(name, category, options.pid_base + int(t.worker), int(t.stream), tm.start_s,
                              tm.end_s - tm.start_s);
      continue;
    }
    for (int r : g.workers[t.worker].ranks)
      recorder.trace_complete(name, category, options.pid_base + gpu(r), int(t.stream), tm.start_s,
                              tm.end_s - tm.start_s);
  }
  return per_gpu;
}

}  // namespace cs::compute
