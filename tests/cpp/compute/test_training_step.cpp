// One step end to end: roofline compute on a catalog GPU, alpha-beta communication, the
// contract's summary quantities and their definitions, and the trace.
#include <sstream>

#include "sim/compute/training_step.hpp"
#include "sim/compute/training_trace.hpp"
#include "training_support.hpp"
#include "workloads/training_placement.hpp"

namespace cs::compute::test {
namespace {

work::TrainingWorkload llama8b_on_16() {
  work::TrainingWorkload w;
  w.model = *work::find_model_preset("llama3-8b");
  w.model.seq_len = 4096;
  w.parallel.tp = 4;
  w.parallel.pp = 2;
  w.parallel.dp = 2;
  w.parallel.sequence_parallel = true;
  w.parallel.zero = 1;
  w.batch = {32, 1};
  w.recompute = work::Recompute::selective;
  return w;
}

testing::AlphaBetaConfig dgx_like() {
  testing::AlphaBetaConfig c;
  c.ranks_per_node = 8;
  c.intra_node = {3e-6, 370e9};  // NVLink as NCCL rates it, plus software latency
  c.inter_node = {10e-6, 50e9};  // 400 Gb/s NICs
  return c;
}

TEST_CASE("a step reports the contract's training quantities by their definitions", "[step]") {
  const auto w = llama8b_on_16();
  REQUIRE_NOTHROW(work::validate(w, {16, 8}));
  engine::Simulator sim(1);
  testing::AlphaBetaComm comm(sim, 16, dgx_like());
  TrainingStepOptions o;
  o.keep_timeline = true;
  const GpuSpec& gpu = *find_gpu("H100-SXM");
  const TrainingResult r = simulate_training_step(sim, comm, w, gpu, o);

  const double tokens = 32.0 * 4096;
  CHECK(r.flops.tokens == tokens);
  CHECK(r.tokens_per_s == Approx(tokens / r.step_time_s));
  CHECK(r.model_tflops_per_gpu == Approx(r.flops.model / 16 / r.step_time_s / 1e12));
  CHECK(r.tflops_per_gpu == Approx(r.flops.executed / 16 / r.step_time_s / 1e12));
  CHECK(r.tflops_per_gpu > r.model_tflops_per_gpu);  // selective recomputation
  CHECK(r.mfu == Approx(r.model_tflops_per_gpu * 1e12 / 989e12));
  CHECK(r.mfu > 0.2);
  CHECK(r.mfu < 0.803);             // never above the GEMM ceiling
  CHECK(r.compute_s + r.optimizer_s + r.exposed_comm_s + r.bubble_s == Approx(r.step_time_s).epsilon(1e-9));
  CHECK(r.exposed_comm_s == Approx(r.exposed_by_group.total()));
  CHECK(r.bubble_fraction == Approx(r.bubble_s / r.step_time_s));
  CHECK(r.bubble_fraction > 0);  // two stages
  CHECK(r.exposed_by_group[work::Stream::tp] > 0);
  CHECK(r.fits);
  CHECK(r.memory_per_gpu_bytes == r.memory.max_bytes);
  CHECK(r.memory_per_gpu_bytes < 80e9);
  CHECK(r.tasks == r.graph->tasks.size());

  // The op breakdown sums to the compute stream's nominal work.
  double ops = 0;
  for (const auto& op : r.ops) ops += op.seconds;
  CHECK(ops == Approx(r.compute_s + r.optimizer_s - r.slowdown_s).epsilon(1e-9));

  // The trace has one span per task on each of its worker's GPUs, one process per GPU.
  const auto gpus = work::RankLayout(w.parallel).gpu_of_rank();
  const std::size_t per_worker = r.graph->workers.front().ranks.size();
  engine::Recorder rec;
  rec.enable_trace();
  CHECK(record_trace(*r.graph, r.timings, rec, gpus, {.pid_base = 0, .gpus_per_node = 8}));
  CHECK(rec.trace_event_count() == r.tasks * per_worker);
  std::ostringstream json;
  rec.write_chrome_trace(json);
  CHECK(json.str().find("GPU 13 (node 1): stage 1 replica 1") != std::string::npos);
  CHECK(json.str().find("\"F L0 mb0\"") != std::string::npos);

  // Beyond max_spans: one process per worker, one span per task.
  engine::Recorder by_worker;
  by_worker.enable_trace();
  CHECK_FALSE(record_trace(*r.graph, r.timings, by_worker, gpus, {.pid_base = 0, .gpus_per_node = 8, .max_spans = 10}));
  CHECK(by_worker.trace_event_count() == r.tasks);
  std::ostringstream json2;
  by_worker.write_chrome_trace(json2);
  CHECK(json2.str().find("stage 1 replica 1 (GPU 12 13 14 15)") != std::string::npos);
}

TEST_CASE("the same step twice gives the same numbers", "[step]") {
  auto run = [] {
    engine::Simulator sim(7);
    testing::AlphaBetaComm comm(sim, 16, dgx_like());
    TrainingStepOptions o;
    o.executor.comm_compute_share = 0.1;
    return simulate_training_step(sim, comm, llama8b_on_16(), *find_gpu("H100-SXM"), o);
  };
  const auto a = run(), b = run();
  CHECK(a.step_time_s == b.step_time_s);
  CHECK(a.bubble_s == b.bubble_s);
  CHECK(a.exposed_by_group.seconds == b.exposed_by_group.seconds);
  CHECK(a.slowdown_s > 0);
}

}  // namespace
}  // namespace cs::compute::test
