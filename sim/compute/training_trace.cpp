#include "sim/compute/training_trace.hpp"

#include <string>

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
  std::string name(pass_prefix(t.kind));
  if (!g.is_compute(t)) {
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

}  // namespace

void record_trace(const work::TaskGraph& g, const std::vector<TaskTiming>& timings, engine::Recorder& recorder,
                  const std::vector<int>& gpu_of_rank, int pid_base) {
  for (uint32_t w = 0; w < g.workers.size(); ++w) {
    const auto& worker = g.workers[w];
    std::string name("stage ");
    name.append(std::to_string(worker.stage)).append(" replica ").append(std::to_string(worker.replica));
    if (!gpu_of_rank.empty()) {
      name.append(" (GPU");
      for (int r : worker.ranks) name.append(" ").append(std::to_string(gpu_of_rank[std::size_t(r)]));
      name.append(")");
    }
    recorder.name_process(pid_base + int(w), name);
    for (int s = 0; s < work::kStreams; ++s)
      recorder.name_thread(pid_base + int(w), s, work::to_string(static_cast<work::Stream>(s)));
  }
  if (!recorder.trace_enabled()) return;
  for (uint32_t i = 0; i < g.tasks.size(); ++i) {
    const auto& t = g.tasks[i];
    const auto& tm = timings[i];
    recorder.trace_complete(task_name(g, t), work::to_string(t.kind), pid_base + int(t.worker), int(t.stream),
                            tm.start_s, tm.end_s - tm.start_s);
  }
}

}  // namespace cs::compute
