#include "sim/compute/training_step.hpp"

#include <map>
#include <stdexcept>

namespace cs::compute {

std::vector<double> item_seconds(const work::TaskGraph& graph, const Roofline& roofline) {
  std::vector<double> seconds;
  seconds.reserve(graph.compute_items.size());
  for (const auto& item : graph.compute_items) seconds.push_back(roofline.ops_seconds(item.ops));
  return seconds;
}

namespace {

// Roofline seconds per (phase, op) summed over each worker's compute tasks, then averaged.
std::vector<OpSeconds> op_breakdown(const work::TaskGraph& graph, const Roofline& roofline) {
  std::vector<double> item_uses(graph.compute_items.size(), 0);
  for (const auto& t : graph.tasks)
    if (graph.is_compute(t)) item_uses[t.item] += 1;
  std::map<std::pair<std::string, std::string>, double> sums;
  for (std::size_t i = 0; i < graph.compute_items.size(); ++i)
    for (const auto& op : graph.compute_items[i].ops)
      sums[{std::string(to_string(op.phase)), std::string(op.name)}] += item_uses[i] * roofline.op_seconds(op);
  std::vector<OpSeconds> out;
  const double workers = double(graph.workers.size());
  for (const auto& [key, s] : sums) out.push_back({key.first, key.second, s / workers});
  return out;
}

}  // namespace

void derive_step_figures(TrainingResult& r, const work::TrainingWorkload& w, const GpuSpec& gpu,
                         const TrainingStepOptions& options) {
  r.flops = work::step_flops(w);
  const double gpus = double(w.parallel.tp) * w.parallel.pp * w.parallel.dp * w.parallel.cp;
  r.tokens_per_s = r.flops.tokens / r.step_time_s;
  r.tflops_per_gpu = r.flops.executed / gpus / r.step_time_s / 1e12;
  r.model_tflops_per_gpu = r.flops.model / gpus / r.step_time_s / 1e12;
  r.peak_flops = dense_peak_flops(gpu.dense_flops, w.precision);
  r.mfu = r.model_tflops_per_gpu * 1e12 / r.peak_flops;
  r.bubble_fraction = r.step_time_s > 0 ? r.bubble_s / r.step_time_s : 0;
  r.exposed_comm_s = r.exposed_by_group.total();
  r.memory = work::memory_per_gpu(w, gpu.memory_bytes, options.memory);
  r.memory_per_gpu_bytes = r.memory.max_bytes;
  r.host_memory_per_gpu_bytes = r.memory.max_host_bytes;
  r.fits = r.memory.fits;
}

TrainingResult simulate_training_step(engine::Simulator& sim, net::Comm& comm, const work::TrainingWorkload& w,
                                      const GpuSpec& gpu, const TrainingStepOptions& options) {
  const Roofline roofline(gpu, w.precision, options.efficiency, options.host);
  auto graph = std::make_shared<work::TaskGraph>(work::build_training_graph(w, options.graph));
  if (comm.ranks() < graph->ranks)
    throw std::invalid_argument("simulate_training_step: the communication layer holds " +
                                std::to_string(comm.ranks()) + " ranks; the plan needs " +
                                std::to_string(graph->ranks));
  ExecutorOptions executor_options = options.executor;
  if (options.graph.one_replica && options.graph.mirror_replica_traffic && !options.gpu_of_rank.empty())
    executor_options.skip_groups = isolated_mirrored_groups(w, *graph, options.gpu_of_rank, options.node);
  TrainingExecutor executor(sim, comm, *graph, item_seconds(*graph, roofline), executor_options);
  const uint64_t events_before = sim.events_processed();
  executor.start();
  // Stepped by hand (the step ends before the simulator's queue runs dry), so the simulator's
  // interrupt check is polled here, as run() would.
  for (uint64_t n = 1; !executor.done() && sim.step(); ++n)
    if (n % 4096 == 0) sim.poll_interrupt();
  if (!executor.done()) throw std::logic_error("simulate_training_step: the task graph did not finish");

  const StepAnalysis a = analyze_step(*graph, executor);
  TrainingResult r;
  r.step_time_s = a.step_time_s;
  r.compute_s = a.compute_s;
  r.optimizer_s = a.optimizer_s;
  r.bubble_s = a.bubble_s;
  r.slowdown_s = a.slowdown_s;
  r.exposed_by_group = a.exposed_s;
  r.workers = a.workers;
  r.ops = op_breakdown(*graph, roofline);
  derive_step_figures(r, w, gpu, options);
  r.tasks = graph->tasks.size();
  r.events = sim.events_processed() - events_before;
  if (options.keep_timeline) {
    r.timings = executor.timings();
    r.graph = std::move(graph);
  }
  return r;
}

}  // namespace cs::compute
