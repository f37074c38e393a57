// One optimizer step of GPT-3 175B (Brown et al. 2020) on H100s: tp 8, pp 8, 1f1b, global batch
// 1536 sequences of 2048, micro-batch 1, bf16, ZeRO-1, sequence parallelism, selective
// recomputation; dp 16 on 1,024 GPUs (96 micro-batches per replica) and dp 256 on 16,384
// (6 micro-batches). Communication is the alpha-beta double (cs_compute_testing): NVLink
// 370.8 GB/s inside a node of 8, 400 Gb/s per GPU across nodes, NCCL-like latencies; the lead
// re-runs it on the flow network.
//
// For each GPU count it times, as thread CPU time (median of 3), building the task graph and
// running the step, for the full simulation and for the symmetry shortcut (one data-parallel
// replica, every other replica's traffic mirrored), each in a forked process so its peak RSS is
// its own, and prints the step's figures (equal in both: the double has no contention).
// Benchmarks print; they never fail.
// Usage: bench_training [--quick] [GPUs...]   (--quick: one repetition, 1,024 GPUs only)
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_util.hpp"
#include "sim/compute/testing/alpha_beta_comm.hpp"
#include "sim/compute/training_step.hpp"
#include "workloads/training_enumerate.hpp"

namespace {

using namespace cs;

using bench::peak_rss_mb;
using bench::thread_cpu_s;

work::TrainingWorkload gpt3(int gpus) {
  work::TrainingWorkload w;
  w.model = *work::find_model_preset("gpt3-175b");
  w.parallel.tp = 8;
  w.parallel.pp = 8;
  w.parallel.dp = gpus / 64;
  w.parallel.zero = 1;
  w.parallel.sequence_parallel = true;
  w.batch = {1536, 1};
  w.recompute = work::Recompute::selective;
  return w;
}

compute::testing::AlphaBetaConfig dgx_h100() {
  compute::testing::AlphaBetaConfig c;
  c.ranks_per_node = 8;
  c.intra_node = {3e-6, 18 * 20.6e9};  // NCCL's NVLink rate; LL-ish latency per step
  c.inter_node = {8e-6, 50e9};         // one 400 Gb/s NIC per GPU
  return c;
}

void run_case(int gpus, bool one_replica, int reps) {
  const auto w = gpt3(gpus);
  work::validate(w, {gpus, 8});
  std::vector<double> cpu;
  compute::TrainingResult r;
  for (int i = 0; i < reps; ++i) {
    engine::Simulator sim(1);
    compute::testing::AlphaBetaComm comm(sim, gpus, dgx_h100());
    compute::TrainingStepOptions o;
    o.graph.one_replica = one_replica;
    const double t0 = thread_cpu_s();
    r = compute::simulate_training_step(sim, comm, w, *compute::find_gpu("H100-SXM"), o);
    cpu.push_back(thread_cpu_s() - t0);
  }
  std::sort(cpu.begin(), cpu.end());
  std::printf("%6d  %-26s %3d %9.3f %8.0f %10zu %10llu | step %.3f s, %.0f tokens/s, %.1f TFLOP/s/GPU "
              "(model %.1f), MFU %.3f, bubble %.3f, exposed tp %.3f pp %.3f dp %.3f s, %.1f GB/GPU\n",
              gpus, one_replica ? "one replica (mirrored)" : "full", reps, cpu[cpu.size() / 2], peak_rss_mb(),
              r.tasks, static_cast<unsigned long long>(r.events), r.step_time_s, r.tokens_per_s, r.tflops_per_gpu,
              r.model_tflops_per_gpu, r.mfu, r.bubble_fraction, r.exposed_by_group[work::Stream::tp],
              r.exposed_by_group[work::Stream::pp], r.exposed_by_group[work::Stream::dp], r.memory_per_gpu_bytes / 1e9);
  std::fflush(stdout);
}

// Each case in its own process: its peak RSS is its own.
void forked(int gpus, bool one_replica, int reps) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    run_case(gpus, one_replica, reps);
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
}

// Enumerating every valid plan of GPT-3 175B on 1,024 H100s with its memory (the first part of
// `clustersim plan`; simulating the fitting ones is the second).
void enumerate_case() {
  const double t0 = thread_cpu_s();
  const auto plans = work::enumerate_plans(*work::find_model_preset("gpt3-175b"), 1536, {1024, 8}, 80e9);
  const double cpu = thread_cpu_s() - t0;
  std::size_t fits = 0;
  for (const auto& c : plans) fits += c.memory.fits;
  std::printf("enumerate_plans GPT-3 175B on 1024 GPUs: %zu valid plans, %zu fit in 80 GB, %.3f s CPU, %.0f MB\n",
              plans.size(), fits, cpu, peak_rss_mb());
}

}  // namespace

int main(int argc, char** argv) {
  auto [quick, sizes] = bench::parse_bench_args(argc, argv);
  if (sizes.empty()) sizes = quick ? std::vector<int>{1024} : std::vector<int>{1024, 16384};
  const int reps = quick ? 1 : 3;
  std::printf("GPT-3 175B, tp 8 pp 8 1f1b, batch 1536 x 2048, H100 roofline, alpha-beta communication\n");
  std::printf("%6s  %-26s %3s %9s %8s %10s %10s\n", "GPUs", "simulation", "rep", "cpu_s", "rss_MB", "tasks", "events");
  for (int gpus : sizes) {
    forked(gpus, false, reps);
    forked(gpus, true, reps);
  }
  std::fflush(stdout);
  if (fork() == 0) {
    enumerate_case();
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  wait(&status);
  return 0;
}
