#include "cli/training_report.hpp"

#include <cstdio>
#include <string>

namespace cs::cli {

using nlohmann::json;

double summary_number(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_object() && v.contains("mean") && v["mean"].is_number()) return v["mean"].get<double>();
  return 0.0;
}

namespace {

double at(const json& obj, const char* key) { return obj.contains(key) ? summary_number(obj[key]) : 0.0; }

std::string text(const json& obj, const char* key) {
  if (!obj.contains(key)) return "";
  return obj[key].is_string() ? obj[key].get<std::string>() : obj[key].dump();
}

void share_line(const char* what, double seconds, double step) {
  std::printf("  %-28s %10.4f s  %5.1f%%\n", what, seconds, step > 0 ? 100 * seconds / step : 0.0);
}

}  // namespace

void print_training(const json& t) {
  const json plan = t.value("plan", json::object());
  const json model = t.value("model", json::object());
  std::printf("training %s on %s GPUs: tp %s pp %s dp %s cp %s ep %s, ZeRO %s, %s", text(model, "name").c_str(),
              text(plan, "gpus").c_str(), text(plan, "tp").c_str(), text(plan, "pp").c_str(), text(plan, "dp").c_str(),
              text(plan, "cp").c_str(), text(plan, "ep").c_str(), text(plan, "zero").c_str(),
              text(plan, "schedule").c_str());
  if (at(plan, "virtual_stages") > 1) std::printf(" x%s", text(plan, "virtual_stages").c_str());
  std::printf(", %s micro-batches of %s, %s, recompute %s%s%s\n", text(plan, "micro_batches").c_str(),
              text(plan, "micro_batch").c_str(), text(plan, "precision").c_str(), text(plan, "recompute").c_str(),
              text(plan, "sequence_parallel") == "true" ? ", sequence parallel" : "",
              text(plan, "offload") == "optimizer" ? ", optimizer offloaded to the CPU" : "");
  const double step = at(t, "step_time_s");
  std::printf("step %.4f s, %.0f tokens/s, %.1f TFLOP/s per GPU (model %.1f), MFU %.3f, bubble %.3f\n", step,
              at(t, "tokens_per_s"), at(t, "tflops_per_gpu"), at(t, "model_tflops_per_gpu"), at(t, "mfu"),
              at(t, "bubble_fraction"));
  if (t.contains("breakdown")) {
    const json& b = t["breakdown"];
    std::printf("where a GPU's step goes:\n");
    share_line("compute (fwd, bwd, recompute)", at(b, "compute_s"), step);
    if (at(b, "slowdown_s") > 1e-6 * step) share_line("  of which slowed by comm", at(b, "slowdown_s"), step);
    share_line("optimizer", at(b, "optimizer_s"), step);
    const json exposed = b.value("exposed_comm_s", json::object());
    for (const auto& [group, seconds] : exposed.items())
      if (summary_number(seconds) > 0) share_line(("exposed " + group + " communication").c_str(), summary_number(seconds), step);
    share_line("pipeline bubble", at(b, "bubble_s"), step);
  }
  if (t.contains("memory")) {
    const json& m = t["memory"];
    // Within the capacity but not its headroom says so: the plan is refused all the same.
    const bool fits = text(t, "fits") == "true", in_headroom = !fits && at(m, "per_gpu_bytes") <= at(m, "capacity_bytes");
    char verdict[96];
    std::snprintf(verdict, sizeof verdict, fits ? "fits" : in_headroom ? "does NOT fit: inside the %g%% headroom" : "does NOT fit",
                  100 * at(m, "headroom"));
    std::printf("memory per GPU: %.2f GB of %.2f GB (%s), worst stage %s", at(m, "per_gpu_bytes") / 1e9,
                at(m, "capacity_bytes") / 1e9, verdict, text(m, "worst_stage").c_str());
    if (at(m, "host_per_node_bytes") > 0) std::printf("; host %.2f GB per node", at(m, "host_per_node_bytes") / 1e9);
    std::printf("\n");
    const json stages = m.value("per_stage", json::array());
    const std::size_t worst = std::size_t(at(m, "worst_stage"));
    if (worst < stages.size()) {
      const json& s = stages[worst];
      std::printf("  parameters %.2f, gradients %.2f, optimizer %.2f, activations %.2f (%s micro-batches), "
                  "ZeRO buffers %.2f, logits %.2f, recompute %.2f, overhead %.2f GB\n",
                  at(s, "parameters_bytes") / 1e9, at(s, "gradients_bytes") / 1e9, at(s, "optimizer_bytes") / 1e9,
                  at(s, "activations_bytes") / 1e9, text(s, "in_flight_micro_batches").c_str(),
                  at(s, "zero_buffers_bytes") / 1e9, at(s, "logits_bytes") / 1e9, at(s, "recompute_bytes") / 1e9,
                  at(s, "overhead_bytes") / 1e9);
    }
  }
  if (t.contains("simulation")) {
    const json& s = t["simulation"];
    std::printf("simulated %s of %s data-parallel replicas (%s tasks)%s\n", text(s, "replicas_simulated").c_str(),
                text(s, "replicas").c_str(), text(s, "tasks").c_str(),
                text(s, "one_replica") == "true"
                    ? (text(s, "one_replica_exact") == "true" ? ": exact here" : ": assumed symmetric")
                    : "");
  }
}

void print_plans(const json& search) {
  std::printf("%s on %s x %s, global batch %s: %s valid plans, %s do not fit (dropped; %s of them within the GPU's "
              "memory but not its %g%% headroom), %s ranked (bounded without a simulation; %s screened without "
              "contention; the best %s whole on the network)\n",
              text(search, "model").c_str(), text(search, "gpus").c_str(), text(search, "gpu").c_str(),
              text(search, "global_batch").c_str(), text(search, "plans_valid").c_str(),
              text(search, "plans_dropped").c_str(), text(search, "plans_dropped_in_headroom").c_str(),
              100 * at(search, "memory_headroom"), text(search, "plans_simulated").c_str(),
              text(search, "plans_screened").c_str(), text(search, "plans_refined").c_str());
  std::printf("%5s %12s %9s %6s %7s %6s %4s %4s %4s %4s %4s %3s %-11s %3s %5s %-9s %8s %s\n", "rank", "tokens/s",
              "step_s", "MFU", "bubble", "mem_GB", "tp", "pp", "dp", "cp", "ep", "Z", "schedule", "v", "micro",
              "recompute", "exp_comm", "simulation");
  const json plans = search.value("plans", json::array());
  for (const auto& r : plans)
    std::printf("%5s %12.0f %9.4f %6.3f %7.3f %6.1f %4s %4s %4s %4s %4s %3s %-11s %3s %5s %-9s %8.4f %s\n",
                text(r, "rank").c_str(), at(r, "tokens_per_s"), at(r, "step_time_s"), at(r, "mfu"),
                at(r, "bubble_fraction"), at(r, "memory_per_gpu_bytes") / 1e9, text(r, "tp").c_str(),
                text(r, "pp").c_str(), text(r, "dp").c_str(), text(r, "cp").c_str(), text(r, "ep").c_str(),
                text(r, "zero").c_str(), text(r, "schedule").c_str(), text(r, "virtual_stages").c_str(),
                text(r, "micro_batch").c_str(), text(r, "recompute").c_str(), at(r, "exposed_comm_s"),
                text(r, "simulation").c_str());
}

}  // namespace cs::cli
