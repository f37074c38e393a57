// Serving workloads through the scenario path (file -> parse_config -> run_scenario -> summary):
// closed-form queueing results (Erlang C, Pollaczek-Khinchine), the autoscaler's bounds, cost
// = replica-hours x the catalog's price, spot reclaims against rate x exposed replica-hours.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../serving/serving_test_support.hpp"
#include "sim/fleet/instance_prices.hpp"
#include "sim/report/serving_report.hpp"
#include "sim/scenario/load.hpp"
#include "sim/world/run.hpp"
#include "world_test_support.hpp"

using namespace cs::scenario;
using json = nlohmann::json;
using cs::world::test::load;

namespace {

const std::string kErlangC = CS_SOURCE_DIR "/scenarios/serving_mmc_erlang_c.json";
const std::string kDiurnalHpa = CS_SOURCE_DIR "/scenarios/serving_llm_diurnal_hpa.json";

double mean_of(const json& v) { return v.is_object() ? v["mean"].get<double>() : v.get<double>(); }
double ci95_of(const json& v) { return v.is_object() ? v["ci95"].get<double>() : 0.0; }

// Each sample of `series` in a "series,time_s,value" CSV.
std::vector<double> series_values(const std::string& csv, const std::string& series) {
  std::vector<double> out;
  std::istringstream in(csv);
  std::string line;
  const std::string prefix = series + ",";
  while (std::getline(in, line))
    if (line.rfind(prefix, 0) == 0) out.push_back(std::stod(line.substr(line.rfind(',') + 1)));
  return out;
}

// The catalog's on-demand price of one GPU of aws.p5.48xlarge (USD per hour).
double p5_price_per_gpu_hour(cs::fleet::Market market) {
  const auto& catalog = cs::fleet::InstancePriceCatalog::builtin();
  return catalog.usd_per_hour("aws.p5.48xlarge")[market] / catalog.find("aws.p5.48xlarge")->gpus;
}

}  // namespace

// [heavy]: statistics over the file's replications (the sanitized ctest leaves it out; "a fixed
// fleet costs its replica-hours" runs the same file through the same path).
TEST_CASE("the M/M/c scenario file matches Erlang C's mean wait", "[serving][scenario][heavy]") {
  const Config config = load(kErlangC);
  const json s = cs::world::run_scenario(config).summary;
  const json& b = s["serving"];
  // Exactly the contract's keys at the top of the block (a plain server's cost per million
  // requests among them); the breakdowns nested.
  std::set<std::string> keys;
  for (const auto& [k, v] : b.items())
    if (!v.is_object() || v.contains("mean")) keys.insert(k);
  CHECK(keys == std::set<std::string>{"requests", "completed", "dropped", "latency_mean_s", "latency_p50_s",
                                      "latency_p95_s", "latency_p99_s", "wait_mean_s", "slo_attainment",
                                      "replicas_mean", "replicas_max", "cost_usd",
                                      "cost_per_million_requests_usd"});
  // The file's numbers: 64/s, 100 ms, 8 replicas of one slot.
  const double lambda = 64.0, mu = 10.0;
  const double theory = cs::serving::test::mmc_mean_wait(8, lambda, mu);
  CHECK(theory == Approx(0.02860).epsilon(1e-3));  // the description's figure
  const double wait = mean_of(b["wait_mean_s"]);
  INFO("simulated " << wait << " +- " << ci95_of(b["wait_mean_s"]) << ", Erlang C " << theory);
  CHECK(std::fabs(wait - theory) < 2.0 * ci95_of(b["wait_mean_s"]));
  CHECK(ci95_of(b["wait_mean_s"]) < 0.05 * theory);  // the test is sharp
  CHECK(mean_of(b["latency_mean_s"]) == Approx(theory + 1.0 / mu).epsilon(0.02));
  // Requests counted after the 10-minute warm-up: about 64/s x 2 h.
  CHECK(mean_of(b["requests"]) == Approx(lambda * 7200).epsilon(0.01));
  CHECK(mean_of(b["dropped"]) == 0);
}

// [heavy]: 8 replications of 10 h (the sanitized ctest leaves it out; "a fixed fleet costs its
// replica-hours" runs the same file through the same path).
TEST_CASE("M/M/1 and M/D/1 through a scenario file match Pollaczek-Khinchine", "[serving][scenario][heavy]") {
  const bool deterministic = GENERATE(false, true);
  const double lambda = 7.0, mean_s = 0.1;  // rho 0.7
  const Config config = load(kErlangC, {"fleet.autoscaler.replicas=1", "workload.arrivals.rate=\"7/s\"",
                                        std::string("workload.request.service_time.dist=") +
                                            (deterministic ? "constant" : "exponential"),
                                        "run.until=\"10h\"", "run.replications=8"});
  const json b = cs::world::run_scenario(config).summary["serving"];
  const double theory = cs::serving::test::pk_mean_wait(lambda, mean_s, deterministic ? 0.0 : 1.0);
  const double wait = mean_of(b["wait_mean_s"]);
  INFO((deterministic ? "M/D/1" : "M/M/1") << ": simulated " << wait << " +- " << ci95_of(b["wait_mean_s"])
                                           << ", Pollaczek-Khinchine " << theory);
  CHECK(std::fabs(wait - theory) < 2.0 * ci95_of(b["wait_mean_s"]));
  CHECK(ci95_of(b["wait_mean_s"]) < 0.1 * theory);
}

TEST_CASE("a fixed fleet costs its replica-hours at the catalog's price per GPU", "[serving][scenario]") {
  // One replication, 130 min of 8 one-GPU replicas, no cold start: 8 x 130/60 replica-hours.
  const json b = cs::world::run_scenario(load(kErlangC, {"run.replications=1"})).summary["serving"];
  const double hours = 8 * 130.0 / 60.0;
  CHECK(b["replica_hours_by_market"]["on_demand"].get<double>() == Approx(hours));
  const double price = p5_price_per_gpu_hour(cs::fleet::Market::on_demand);
  CHECK(b["cost_usd"].get<double>() == Approx(hours * price));
  CHECK(b["cost_usd_by_market"]["on_demand"].get<double>() == Approx(hours * price));
  CHECK(b["replicas_mean"].get<double>() == Approx(8));
  CHECK(b["replicas_max"].get<double>() == 8);
}

// [heavy]: a Poisson count over 10 replications (under the sanitizers serving/test_fleet.cpp's
// "A fifth of the spot capacity reclaimed at peak" runs reclaims, fallbacks and markets).
TEST_CASE("spot reclaims come at the configured rate per exposed replica-hour, each market billed at its price",
          "[serving][scenario][heavy]") {
  // All 8 replicas on spot, reclaimed at 2 per replica-hour; capacity returns after ~2 min,
  // else on demand after 5 min.
  const double rate_per_hour = 2.0;
  const Config config =
      load(kErlangC, {"fleet.market=\"spot\"", "fleet.interruptions.rate=\"2/h\"",
                      "fleet.interruptions.capacity_return={\"dist\": \"exponential\", \"mean\": \"2min\"}",
                      "fleet.interruptions.fallback_after=\"5min\"", "run.replications=10"});
  const json b = cs::world::run_scenario(config).summary["serving"];
  const json& f = b["fleet"];
  const double exposure = mean_of(f["reclaim_exposure_replica_hours"]);
  const double expected = rate_per_hour * exposure;
  // Poisson: the mean of 10 replications has a standard deviation of sqrt(expected / 10).
  INFO("reclaims " << mean_of(f["reclaims"]) << " over " << exposure << " exposed replica-hours");
  CHECK(std::fabs(mean_of(f["reclaims"]) - expected) < 3.0 * std::sqrt(expected / 10.0));
  CHECK(expected > 20.0);
  CHECK(mean_of(f["fallbacks"]) > 0);
  // Each market's cost is its replica-hours at its price.
  for (const cs::fleet::Market m : {cs::fleet::Market::spot, cs::fleet::Market::on_demand}) {
    const std::string name(cs::fleet::to_string(m));
    CHECK(mean_of(b["cost_usd_by_market"][name]) ==
          Approx(mean_of(b["replica_hours_by_market"][name]) * p5_price_per_gpu_hour(m)));
  }
  CHECK(mean_of(b["replica_hours_by_market"]["spot"]) > 0);
  CHECK(mean_of(b["replica_hours_by_market"]["on_demand"]) > 0);
}

TEST_CASE("the HPA keeps an LLM fleet within [min, max] through a compressed day", "[serving][scenario]") {
  // The diurnal day in 3 hours: the fleet scales up to the peak and back.
  const Config config = load(kDiurnalHpa, {"workload.arrivals.period=\"3h\"", "workload.arrivals.peak_at=\"90min\"",
                                           "run.until=\"3h\"", "run.timeseries_interval=\"1min\""});
  const int min = config.serving.fleet.autoscaler.min_replicas, max = config.serving.fleet.autoscaler.max_replicas;
  const cs::world::RunOutput out = cs::world::run_scenario(config);
  const json& b = out.summary["serving"];
  CHECK(b["replicas_max"].get<double>() <= max);
  CHECK(b["replicas_mean"].get<double>() >= min);
  const std::vector<double> desired = series_values(out.timeseries_csv, "serving.replicas_desired");
  const std::vector<double> ready = series_values(out.timeseries_csv, "serving.replicas_ready");
  REQUIRE(desired.size() >= 170);
  double peak = 0;
  for (const double d : desired) {
    CHECK(d >= min);
    CHECK(d <= max);
    peak = std::max(peak, d);
  }
  for (const double r : ready) CHECK(r <= max);
  CHECK(peak > min);           // it scaled out for the peak
  CHECK(desired.back() < peak);  // and back in after it
  CHECK(b["ttft"]["p50_s"].get<double>() > 0);
  CHECK(b["llm"]["output_tokens_per_s"].get<double>() > 0);
}

TEST_CASE("the SLO is judged on every bound given: a missed TTFT fails it though latency holds", "[serving][scenario][slo]") {
  // A diurnal day compressed into an hour, of 4,000-token prompts on average: the latency p99
  // (about 20 s) is within 30 s, the TTFT p99 (about 1.7 s) above 0.5 s.
  const std::vector<std::string> day = {"workload.arrivals.period=\"1h\"", "workload.arrivals.peak_at=\"30min\"",
                                        "run.until=\"1h\"",
                                        "workload.request.prompt_tokens={\"dist\":\"lognormal\",\"mean\":4000,\"cv\":1}"};
  std::vector<std::string> overrides = day;
  overrides.push_back("workload.slo.ttft=\"500ms\"");
  const json summary = cs::world::run_scenario(load(kDiurnalHpa, overrides)).summary;
  const json& slo = summary["serving"]["slo"];
  const json& bounds = slo["bounds"];
  CHECK(bounds["latency"]["met"] == 1);
  CHECK(bounds["latency"]["observed_s"].get<double>() == Approx(slo["latency_at_percentile_s"].get<double>()));
  CHECK(bounds["ttft"]["bound_s"].get<double>() == Approx(0.5));
  CHECK(bounds["ttft"]["observed_s"].get<double>() > 0.5);
  CHECK(bounds["ttft"]["observed_s"].get<double>() == Approx(summary["serving"]["ttft"]["p99_s"].get<double>()));
  CHECK(bounds["ttft"]["met"] == 0);
  CHECK(bounds["tpot"]["met"] == 1);
  CHECK(slo["met"] == 0);
  const double attainment = summary["serving"]["slo_attainment"].get<double>();
  CHECK(attainment < 0.99);
  CHECK(attainment > 0.9);
  // Per hour of arrival: one hour, the peak.
  REQUIRE(slo["attainment_by_hour"].size() == 1);
  CHECK(slo["peak_hour"] == 0);
  CHECK(slo["attainment_by_hour"][0].get<double>() == Approx(attainment));
  CHECK(slo["attainment_peak_hour"].get<double>() == Approx(attainment));
  // The text report says which bound missed.
  const std::string text = cs::report::serving_text(summary["serving"]);
  CHECK_THAT(text, Catch::Contains("SLO p99      missed:"));
  CHECK_THAT(text, Catch::Contains("against 500 ms (missed)"));
  CHECK_THAT(text, Catch::Contains("against 30 s (met)"));
  CHECK_THAT(text, Catch::Contains("in the peak hour (hour 0)"));

  // A TTFT bound no request can meet: no request within it, the SLO missed.
  overrides = day;
  overrides.push_back("workload.slo.ttft=\"1ms\"");
  const json tight = cs::world::run_scenario(load(kDiurnalHpa, overrides)).summary["serving"];
  CHECK(tight["slo_attainment"].get<double>() == 0.0);
  CHECK(tight["slo"]["met"] == 0);
  CHECK(tight["slo"]["bounds"]["ttft"]["met"] == 0);
  for (const json& hour : tight["slo"]["attainment_by_hour"]) CHECK(hour.get<double>() == 0.0);
}

TEST_CASE("a bound not given is not judged, nor reported", "[serving][scenario][slo]") {
  const json b = cs::world::run_scenario(load(kErlangC, {"run.replications=1", "run.until=\"20min\""})).summary["serving"];
  CHECK(b["slo"]["bounds"].size() == 1);  // latency only: a plain server has no TTFT or TPOT
  CHECK(b["slo"]["bounds"].contains("latency"));
  CHECK(b["slo"]["met"] == b["slo"]["bounds"]["latency"]["met"]);
}
