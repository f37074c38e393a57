// The serving report's SLO lines on made-up summary blocks: which bound missed, replicated
// verdicts, a bound with nothing observed.
#include <string>

#include <catch2/catch.hpp>

#include "sim/report/serving_report.hpp"

using nlohmann::json;

TEST_CASE("the serving report names the bound that missed", "[report][serving]") {
  const json block = json::parse(R"({
    "requests": 100, "completed": 100, "dropped": 0, "slo_attainment": 0.954,
    "slo": {"percentile": 99, "met": 0, "peak_hour": 3, "attainment_peak_hour": 0.9,
            "bounds": {"latency": {"bound_s": 30, "observed_s": 8.9, "met": 1},
                       "ttft": {"bound_s": 0.5, "observed_s": 0.775, "met": 0},
                       "tpot": {"bound_s": 0.1, "observed_s": null, "met": 1}}}})");
  const std::string text = cs::report::serving_text(block);
  CHECK_THAT(text, Catch::Contains("  SLO          95.4% of requests within every bound, 90% in the peak hour (hour 3)\n"));
  CHECK_THAT(text, Catch::Contains("  SLO p99      missed: latency 8.9 s against 30 s (met), TTFT 775 ms against 500 ms "
                                   "(missed), TPOT none observed against 100 ms (met)\n"));
}

TEST_CASE("replicated, the report gives the share of replications that met each bound", "[report][serving]") {
  const json block = json::parse(R"({
    "requests": {"mean": 100, "ci95": 0}, "slo_attainment": {"mean": 0.99, "ci95": 0.001},
    "slo": {"percentile": {"mean": 99, "ci95": 0}, "met": {"mean": 0.4, "ci95": 0.3},
            "peak_hour": {"mean": 1.5, "ci95": 0.5}, "attainment_peak_hour": {"mean": 0.98, "ci95": 0.01},
            "bounds": {"latency": {"bound_s": {"mean": 0.5, "ci95": 0}, "observed_s": {"mean": 0.51, "ci95": 0.01},
                                   "met": {"mean": 0.4, "ci95": 0.3}}}}})");
  const std::string text = cs::report::serving_text(block);
  CHECK_THAT(text, Catch::Contains("in the peak hour\n"));  // no hour: it differs between replications
  CHECK_THAT(text, Catch::Contains("SLO p99      met in 40% of the replications: latency 510"));
  CHECK_THAT(text, Catch::Contains("against 500 ms (met in 40% of the replications)\n"));
}
