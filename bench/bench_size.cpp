// Sizing an LLM fleet (`clustersim size`, sim/studies/size_search.hpp): the cheapest of
// replicas (the autoscaler's max, 1..24) x GPU type (H100-SXM, A100-40GB) x tensor parallelism
// (1, 2 GPUs per replica) x autoscaler policy (hpa, target_tracking, kpa) that keeps 99% of
// requests within every SLO bound, for a day of diurnal chat traffic: the file
// scenarios/serving_llm_diurnal_hpa.json (Llama 3 8B, peak 1.6x the mean at 14:00) at a mean
// of 20 requests/s, the autoscalers free to go down to one replica, on 2 threads; points near
// the 99% bound confirmed with 3 replications.
// Figures: wall and CPU seconds of the whole search, runs, combinations pruned, the answer.
// The goal: under 60 s on 2 cores. Never fails: speed is not a test.
//
// Usage: bench_size [--quick]   (--quick: the 12 combinations over 2 hours instead of a day)
#include <cstdio>
#include <string>

#include "bench/bench_util.hpp"
#include "sim/scenario/load.hpp"
#include "sim/studies/size_search.hpp"

int main(int argc, char** argv) {
  const auto quick = cs::bench::parse_quick(argc, argv);
  if (!quick) return 2;
  using nlohmann::json;
  json base = cs::scenario::read_scenario_file(std::string(CS_SOURCE_DIR) + "/scenarios/serving_llm_diurnal_hpa.json");
  for (const char* set : {"workload.arrivals.rate=20/s", "fleet.autoscaler.min=1", "fleet.autoscaler.replicas=1",
                          "run.timeseries_interval=0"})
    cs::scenario::apply_override(base, set);
  if (*quick) cs::scenario::apply_override(base, "run.until=2h");
  std::vector<json> replicas;
  for (int r = 1; r <= 24; ++r) replicas.emplace_back(r);
  std::vector<cs::studies::SizeAxis> axes = {
      {"hardware.gpu", {"H100-SXM", "A100-40GB"}},
      {"workload.replica.gpus", {1, 2}},
      {"fleet.autoscaler.policy", {"hpa", "target_tracking", "kpa"}},
      {"fleet.autoscaler.max", replicas},
  };
  cs::studies::SizeOptions options;
  for (const char* r : {"serving.slo_attainment>=0.99", "serving.slo.met>=1"})
    options.requirements.push_back(cs::studies::parse_requirement(r, "require"));
  options.confirm_replications = 3;
  const double wall0 = cs::bench::wall_s(), cpu0 = cs::bench::process_cpu_s();
  const json result = cs::studies::size_search(base, axes, options, 2);
  const double wall = cs::bench::wall_s() - wall0, cpu = cs::bench::process_cpu_s() - cpu0;
  std::printf("size: LLM fleet, %s of diurnal traffic, 24 x 2 x 2 x 3 = 288 points\n", *quick ? "2 h" : "a day");
  std::printf("  wall %.1f s, CPU %.1f s (2 threads; CPU / 2 = %.1f s on 2 idle cores)\n", wall, cpu, cpu / 2);
  std::printf("  %s runs, %s combinations, %s pruned\n", result["runs"].dump().c_str(), result["lines"].dump().c_str(),
              result["lines_pruned"].dump().c_str());
  if (result["best"].is_null()) std::printf("  no point meets the SLO\n");
  else
    std::printf("  best: %s at $%.2f\n", result["best"]["point"].dump().c_str(), result["best"]["objective"].get<double>());
  std::printf("  peak RSS %.0f MB\n", cs::bench::peak_rss_mb());
  return 0;
}
