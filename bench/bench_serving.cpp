// Serving fleets: how fast the simulator runs them.
//   1. Plain servers: 64 replicas x 4 slots at 80% utilization (Poisson arrivals, exponential
//      service), per load balancer; figure: simulated requests per second of CPU time.
//   2. One simulated day of LLM traffic at a mean of 1,000 requests/s (Llama-3-8B on H100s,
//      lognormal prompts of mean 1,000 and outputs of mean 200 tokens, chunked-prefill
//      continuous batching, HPA on concurrency 64 per replica, power-of-two balancing), once
//      with steady Poisson arrivals and once with a diurnal wave (peak 1.5x the mean); figure:
//      CPU seconds for the day.
//   3. An LLM fleet as `clustersim run` runs it, through the scenario layer (which gives a
//      tensor-parallel replica its all-reduce costs on the node's fabric): Llama 3 70B on 4
//      H100s per replica, scenarios/serving_llm_diurnal_hpa.json's day of diurnal chat traffic
//      at a mean of 116 requests/s (10.0 M requests), the HPA on 16 concurrent requests per
//      replica between 2 and 200; figure: simulated requests per second of CPU time (issue
//      29's goal: 1 M; one thread, so a second of CPU is a second of wall on an idle core).
// Each figure is the median of the repetitions (3; 1 with --quick, whose LLM runs cover 2
// hours instead of a day). Times are the process's CPU time (the machine is shared).
// --only NAME runs one case: plain, llm_day or llm_70b_tp4 (a profile of one case, or a
// comparison of two builds, without the ten minutes of the others).
//
// Usage: bench_serving [--quick] [--only plain|llm_day|llm_70b_tp4]
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_util.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/scenario/load.hpp"
#include "sim/serving/serving_fleet.hpp"
#include "sim/world/run.hpp"

namespace {

using namespace cs::serving;
using cs::bench::median;
namespace work = cs::work;

struct Timed {
  ServingResult result;
  double cpu_s;
};

Timed run(const ServingConfig& config, uint64_t seed) {
  const double start = cs::bench::process_cpu_s();
  ServingResult r = run_serving(config, seed);
  return {r, cs::bench::process_cpu_s() - start};
}

ServingConfig plain(BalancePolicy balance, double until_s) {
  ServingConfig c;
  const int replicas = 64, slots = 4;
  const double service_s = 0.05;
  c.arrivals.rate_per_s = 0.8 * replicas * slots / service_s;  // 4,096 requests/s
  c.request.service_time = work::Distribution::exponential(service_s);
  c.replica.kind = ReplicaKind::server;
  c.replica.server.concurrency = slots;
  c.fleet.autoscaler.policy = ScalingPolicy::fixed;
  c.fleet.autoscaler.replicas = replicas;
  c.fleet.pool.balance = balance;
  c.fleet.pool.cold_start = ColdStartSpec::none();
  c.until_s = until_s;
  c.timeseries_interval_s = 60;
  return c;
}

ServingConfig llm_day(bool diurnal, double until_s) {
  ServingConfig c;
  c.arrivals.rate_per_s = 1000;
  if (diurnal) {
    c.arrivals.process = work::ArrivalProcess::diurnal;
    c.arrivals.diurnal.peak_to_mean = 1.5;
  }
  c.request.prompt_tokens = work::Distribution::lognormal(1000, 1.0);
  c.request.output_tokens = work::Distribution::lognormal(200, 1.0);
  c.request.max_prompt_tokens = 8192;
  c.request.max_output_tokens = 2048;
  c.replica.kind = ReplicaKind::llm;  // defaults: Llama-3-8B, one H100, chunked prefill
  AutoscalerSpec& a = c.fleet.autoscaler;
  a.policy = ScalingPolicy::hpa;
  a.metric = MetricKind::concurrency;
  a.target = 64;
  a.min_replicas = 1;
  a.max_replicas = 200;
  a.replicas = 60;
  c.fleet.pool.balance = BalancePolicy::power_of_two;  // Envoy's least-request
  c.slo.latency_s = 30;
  c.slo.ttft_s = 1;
  c.until_s = until_s;
  c.timeseries_interval_s = 60;
  return c;
}

// Case 3's scenario: the shipped diurnal HPA day, grown to a 70B model on TP4 replicas.
nlohmann::json llm_70b_tp4_doc(double until_s) {
  nlohmann::json doc =
      cs::scenario::read_scenario_file(std::string(CS_SOURCE_DIR) + "/scenarios/serving_llm_diurnal_hpa.json");
  nlohmann::json& w = doc["workload"];
  w["model"] = {{"preset", "llama3-70b"}};
  w["replica"]["gpus"] = 4;
  w["arrivals"]["rate"] = "116/s";
  doc["fleet"]["autoscaler"]["max"] = 200;
  doc["fleet"]["autoscaler"]["replicas"] = 40;
  doc["run"]["until"] = until_s;
  return doc;
}

void llm_70b_tp4(double until_s, int reps) {
  const cs::scenario::Config config = cs::scenario::parse_config(llm_70b_tp4_doc(until_s));
  std::vector<double> cpu, wall;
  nlohmann::json serving;
  for (int r = 0; r < reps; ++r) {
    const double cpu0 = cs::bench::thread_cpu_s(), wall0 = cs::bench::wall_s();
    serving = cs::world::run_scenario(config).summary["serving"];
    cpu.push_back(cs::bench::thread_cpu_s() - cpu0);
    wall.push_back(cs::bench::wall_s() - wall0);
  }
  const double requests = serving["requests"].get<double>();
  const double rate = requests / median(cpu);
  std::printf("%12.0f %9.2f %9.2f %10.3e %9.1f %9.3f %9.4f %9.2f %8.2fx\n", requests, median(cpu), median(wall), rate,
              serving["replicas_mean"].get<double>(), serving["ttft"]["p99_s"].get<double>(),
              serving["tpot"]["p50_s"].get<double>(), serving["latency"]["p99_s"].get<double>(), rate / 1e6);
  cs::bench::figure("serving/llm_70b_tp4_hpa/requests_per_cpu_s", rate, "requests/s", cs::bench::Better::higher);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--only plain|llm_day|llm_70b_tp4]\n", argv[0]);
      return 2;
    }
  }
  if (!only.empty() && only != "plain" && only != "llm_day" && only != "llm_70b_tp4") {
    std::fprintf(stderr, "%s: --only takes plain, llm_day or llm_70b_tp4, not '%s'\n", argv[0], only.c_str());
    return 2;
  }
  const auto runs = [&only](const char* name) { return only.empty() || only == name; };
  const int reps = quick ? 1 : 3;
  const double day = quick ? 7200 : 86400;

  if (runs("plain")) {
    std::printf("plain servers: 64 replicas x 4 slots, 80%% utilization; median of %d\n", reps);
    std::printf("%-22s %12s %14s %10s\n", "balancer", "requests", "requests/s", "vs 3e6");
    for (const BalancePolicy balance : {BalancePolicy::round_robin, BalancePolicy::power_of_two,
                                        BalancePolicy::least_outstanding,
                                        BalancePolicy::join_shortest_queue,
                                        BalancePolicy::central_queue}) {
      std::vector<double> rates;
      uint64_t requests = 0;
      for (int r = 0; r < reps; ++r) {
        const Timed t = run(plain(balance, quick ? 600 : 3600), static_cast<uint64_t>(r + 1));
        requests = t.result.requests;
        rates.push_back(static_cast<double>(t.result.requests) / t.cpu_s);
      }
      const double rate = median(rates);
      std::printf("%-22s %12lu %14.3e %9.2fx\n", std::string(to_string(balance)).c_str(),
                  static_cast<unsigned long>(requests), rate, rate / 3e6);
    }
  }

  if (runs("llm_day")) {
    std::printf("\nLLM serving: %.0f s at a mean of 1,000 requests/s, HPA; median of %d\n", day, reps);
    std::printf("%-10s %12s %9s %10s %9s %9s %9s %9s %9s\n", "arrivals", "requests", "cpu_s",
                "req/cpu_s", "replicas", "ttft_p99", "tpot_p50", "lat_p99", "vs 60 s");
    for (const bool diurnal : {false, true}) {
      std::vector<double> seconds;
      ServingResult last;
      for (int r = 0; r < reps; ++r) {
        const Timed t = run(llm_day(diurnal, day), static_cast<uint64_t>(r + 1));
        seconds.push_back(t.cpu_s);
        last = t.result;
      }
      const double cpu = median(seconds);
      std::printf("%-10s %12lu %9.2f %10.3e %9.1f %9.3f %9.4f %9.2f %8.2fx\n",
                  diurnal ? "diurnal" : "poisson", static_cast<unsigned long>(last.requests), cpu,
                  static_cast<double>(last.requests) / cpu, last.replicas_mean, last.ttft.p99_s,
                  last.tpot.p50_s, last.latency_p99_s, cpu / 60.0);
    }
  }

  if (runs("llm_70b_tp4")) {
    std::printf("\nLLM fleet: Llama 3 70B, TP4 replicas, HPA, %.0f s of diurnal traffic at a mean of 116 "
                "requests/s; median of %d\n", day, reps);
    std::printf("%12s %9s %9s %10s %9s %9s %9s %9s %9s\n", "requests", "cpu_s", "wall_s", "req/cpu_s", "replicas",
                "ttft_p99", "tpot_p50", "lat_p99", "vs 1e6");
    llm_70b_tp4(day, reps);
  }
  return 0;
}
