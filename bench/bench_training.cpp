// Training steps on the simulated network, through the scenario layer as `clustersim run` and
// `clustersim plan` run them: scenarios/gpt3_175b_1024_h100.json (GPT-3 175B, tp 8, pp 8,
// 1F1B, batch 1536 x 2048, micro-batch 1, bf16, ZeRO-1, sequence parallelism, selective
// recomputation on DGX-like H100 nodes, rail-optimized fat-tree) grown to more GPUs by dp.
//
// Cases, each in its own process (peak RSS its own), thread CPU time, median of 3:
// - one step (parse, topology, network, simulation, summary) on the flow and the analytical
//   model, simulating every replica and with the symmetry shortcut (one replica, the others'
//   traffic mirrored, isolated traffic left out);
// - `clustersim plan` on 1,024 GPUs: every valid plan enumerated, those that fit bounded, the
//   promising screened and the best refined (TBB on all cores; wall and process CPU time), the
//   381 plans of docs/training.md's narrowed search, then every plan.
// Beyond 16,384 GPUs (dp 256 with the batch's 1,536 sequences: 6 micro-batches per replica) the
// global batch grows with dp, 6 micro-batches per replica (65,536 GPUs: dp 1,024, 6,144
// sequences), and only the flow model simulating every replica runs: the headline figure.
// Benchmarks print; they never fail.
// Usage: bench_training [--quick] [GPUs...]   (--quick: one repetition, 1,024 GPUs, no plan)
//        bench_training --plan                  (the narrowed plan search alone: `make bench`)
//        bench_training --plan-full             (the full plan search alone: a minute or two)
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.hpp"
#include "sim/scenario/load.hpp"
#include "sim/studies/plan_search.hpp"
#include "sim/world/run.hpp"

namespace {

using namespace cs;
using nlohmann::json;

json gpt3_doc(int gpus, const std::string& model, bool one_replica) {
  json doc = scenario::read_scenario_file(std::string(CS_SOURCE_DIR) + "/scenarios/gpt3_175b_1024_h100.json");
  doc["topology"]["nodes"] = gpus / 8;
  if (gpus > 4096) doc["topology"]["tiers"] = 3;
  doc["workload"]["parallel"]["dp"] = gpus / 64;
  doc["workload"]["batch"]["global"] = std::max(1536, 6 * (gpus / 64));
  doc["network"]["model"] = model;
  doc["workload"]["one_replica"] = one_replica;
  return doc;
}

void step_case(int gpus, const std::string& model, bool one_replica, int reps) {
  const json doc = gpt3_doc(gpus, model, one_replica);
  std::vector<double> cpu;
  json summary;
  for (int i = 0; i < reps; ++i) {
    const double t0 = bench::thread_cpu_s();
    summary = cs::world::run_scenario(scenario::parse_config(doc)).summary;
    cpu.push_back(bench::thread_cpu_s() - t0);
  }
  const json& t = summary["training"];
  std::printf("%6d  %-10s %-13s %3d %8.3f %8.0f %9s %9.0f | step %.4f s, %.0f tokens/s, MFU %.3f, bubble %.3f, "
              "exposed tp %.3f pp %.3f dp %.3f s, %.1f GB/GPU\n",
              gpus, model.c_str(), one_replica ? "one replica" : "all replicas", reps, bench::median(cpu),
              bench::peak_rss_mb(), t["simulation"]["tasks"].dump().c_str(), summary["events"].get<double>(),
              t["step_time_s"].get<double>(), t["tokens_per_s"].get<double>(), t["mfu"].get<double>(),
              t["bubble_fraction"].get<double>(), t["breakdown"]["exposed_comm_s"]["tp"].get<double>(),
              t["breakdown"]["exposed_comm_s"]["pp"].get<double>(),
              t["breakdown"]["exposed_comm_s"]["dp"].get<double>(), t["memory_per_gpu_bytes"].get<double>() / 1e9);
  const std::string name =
      "training/gpus_" + std::to_string(gpus) + "/" + model + (one_replica ? "/one_replica" : "/every_replica");
  bench::figure(name, bench::median(cpu), "s", bench::Better::lower);
  bench::figure(name + "/peak_rss", bench::peak_rss_mb(), "MB", bench::Better::lower);
}

double process_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// `clustersim plan` on 1,024 GPUs, every plan or those `only` narrows to (plan_space), with the
// headline figures `make bench` compares: wall and process CPU seconds.
void plan_case(const std::string& model, const std::vector<std::string>& only, const std::string& figure) {
  const auto config = scenario::parse_config(gpt3_doc(1024, model, true));
  cs::studies::PlanSearchOptions o;
  o.jobs = int(std::max(1u, std::thread::hardware_concurrency()));
  o.space = cs::studies::plan_space(only);
  const double cpu0 = process_cpu_s();
  const auto wall0 = std::chrono::steady_clock::now();
  const auto search = cs::studies::search_plans(config, o);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const double cpu = process_cpu_s() - cpu0;
  std::printf("plan GPT-3 175B on 1024 GPUs (%s, %d threads%s): %zu valid plans, %zu dropped (do not fit), %zu ranked, "
              "%zu screened, %zu refined in %.1f s wall, %.1f s CPU, %.0f MB\n",
              model.c_str(), o.jobs, only.empty() ? "" : ", narrowed", search.valid, search.dropped, search.rows.size(),
              search.screened, search.refined, wall, cpu, bench::peak_rss_mb());
  for (std::size_t i = 0; i < std::min<std::size_t>(10, search.rows.size()); ++i)
    std::printf("  #%zu %s\n", i + 1, search.rows[i].dump().c_str());
  bench::figure("training/" + figure + "/wall", wall, "s", bench::Better::lower);
  bench::figure("training/" + figure + "/cpu", cpu, "s", bench::Better::lower);
}

// The narrowed search docs/training.md quotes (381 plans).
const std::vector<std::string> kNarrowPlans = {"schedule=1f1b,interleaved", "zero=1", "recompute=selective",
                                               "micro=1,2"};

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--plan") {  // `make bench`: the narrowed plan search only
    bench::in_child([] { plan_case("flow", kNarrowPlans, "plan_gpt3_1024_narrowed"); });
    return 0;
  }
  if (argc == 2 && std::string(argv[1]) == "--plan-full") {
    bench::in_child([] { plan_case("flow", {}, "plan_gpt3_1024"); });
    return 0;
  }
  const std::optional<bench::BenchArgs> args = bench::parse_bench_args(argc, argv);
  if (!args) return 2;
  auto [quick, sizes] = *args;
  if (sizes.empty()) sizes = quick ? std::vector<int>{1024} : std::vector<int>{1024, 16384};
  const int reps = quick ? 1 : 3;
  std::printf("GPT-3 175B, tp 8 pp 8 1F1B, batch 1536 x 2048, H100 roofline, DGX-like nodes on a rail-optimized "
              "fat-tree\n");
  std::printf("%6s  %-10s %-13s %3s %8s %8s %9s %9s\n", "GPUs", "network", "simulation", "rep", "cpu_s", "rss_MB",
              "tasks", "events");
  for (int gpus : sizes) {
    if (gpus > 16384) {  // the headline: every replica on the flow model (one repetition: a minute)
      bench::in_child([&] { step_case(gpus, "flow", false, 1); });
      continue;
    }
    for (const char* model : {"flow", "analytical"})
      for (bool one : {false, true}) bench::in_child([&] { step_case(gpus, model, one, reps); });
  }
  if (!quick) {
    bench::in_child([] { plan_case("flow", kNarrowPlans, "plan_gpt3_1024_narrowed"); });
    bench::in_child([] { plan_case("flow", {}, "plan_gpt3_1024"); });
  }
  return 0;
}
