// The sizing search (size_search.hpp): its bisection on synthetic summaries, and against the
// closed forms it should rediscover: Erlang C's least replica count for a mean-wait bound, and
// Daly's optimum checkpoint interval.
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "../serving/serving_test_support.hpp"
#include "sim/fleet/checkpoint.hpp"
#include "sim/scenario/input_error.hpp"
#include "sim/scenario/load.hpp"
#include "sim/studies/size_search.hpp"

using cs::scenario::InputError;
using cs::studies::SizeAxis;
using cs::studies::SizeOptions;
using cs::studies::SizeOutcome;
using cs::studies::SizeSearch;
using nlohmann::json;

namespace {

std::vector<json> whole_numbers(int lo, int hi) {
  std::vector<json> v;
  for (int i = lo; i <= hi; ++i) v.emplace_back(i);
  return v;
}

SizeOptions requiring(std::vector<std::string> texts, std::string minimize = "") {
  SizeOptions o;
  for (const auto& t : texts) o.requirements.push_back(cs::studies::parse_requirement(t, "--require"));
  o.minimize = std::move(minimize);
  return o;
}

// Drives a search whose "runs" are a function of the point: replicas r waits 10 / r and costs r.
json synthetic_search(SizeSearch& search, std::size_t& runs, int& most_replications) {
  runs = 0;
  most_replications = 0;
  for (auto batch = search.next(); !batch.empty(); batch = search.next()) {
    std::vector<SizeOutcome> outcomes;
    for (const auto& run : batch) {
      const double r = run.doc["fleet"]["replicas"].get<double>();
      outcomes.push_back({{{"x", {{"wait_s", 10.0 / r}, {"cost_usd", r}}}}, std::nullopt});
      most_replications = std::max(most_replications, run.replications);
      if (run.replications > 1) CHECK(run.doc["run"]["replications"] == run.replications);
    }
    runs += batch.size();
    search.tell(batch, outcomes);
  }
  return search.result();
}

std::string error_of(const json& base, std::vector<SizeAxis> axes, SizeOptions options) {
  try {
    SizeSearch search(base, std::move(axes), std::move(options));
    std::size_t runs = 0;
    int most = 0;
    synthetic_search(search, runs, most);
  } catch (const InputError& e) {
    return e.path() + ": " + e.expected() + (e.hint().empty() ? "" : " | " + e.hint());
  }
  return "accepted";
}

}  // namespace

TEST_CASE("a whole-number range is bisected to the least feasible value", "[size]") {
  const json base = {{"workload", {{"kind", "x"}}}};
  SizeOptions options = requiring({"x.wait_s<=0.37"});
  options.confirm_replications = 1;  // never confirm: count the bisection's runs alone
  SizeSearch search(base, {{"fleet.replicas", whole_numbers(1, 100)}}, options);
  std::size_t runs = 0;
  int most = 0;
  const json result = synthetic_search(search, runs, most);
  // 10 / r <= 0.37 first at r = 28: 1, 2, 4, 8, 16 and 32 (meets), then 24, 28, 26, 27.
  CHECK(result["best"]["point"]["fleet.replicas"] == 28);
  CHECK(result["best"]["objective"] == 28.0);
  CHECK(result["minimize"] == "x.cost_usd");  // the workload's cost by default
  CHECK(result["searched"] == "fleet.replicas");
  CHECK(runs == 10);
  CHECK(search.run_bound() == 14);  // 1, 2, 4, ..., 64 missing, 100 meeting, 6 halvings
  CHECK(most == 1);
}

TEST_CASE("a point within `near` of a bound is run again with more replications", "[size]") {
  const json base = {{"workload", {{"kind", "x"}}}};
  SizeOptions options = requiring({"x.wait_s<=0.3"});
  options.confirm_replications = 6;
  options.near = 0.05;
  SizeSearch search(base, {{"fleet.replicas", whole_numbers(1, 100)}}, options);
  std::size_t runs = 0;
  int most = 0;
  const json result = synthetic_search(search, runs, most);
  CHECK(result["best"]["point"]["fleet.replicas"] == 34);  // 10 / 34 = 0.294, 2% inside the bound
  CHECK(most == 6);
  CHECK(result["best"]["replications"] == 6);
  // Synthetic summaries carry no interval, so the answer cannot say it is sure.
  CHECK(result["best"]["requirements"][0]["sure"].is_null());
}

TEST_CASE("the least value meeting ends a line at once; none meeting, the largest is run", "[size]") {
  const json base = {{"workload", {{"kind", "x"}}}};
  SizeSearch all(base, {{"fleet.replicas", whole_numbers(50, 60)}}, requiring({"x.wait_s<=1"}));
  std::size_t runs = 0;
  int most = 0;
  CHECK(synthetic_search(all, runs, most)["best"]["point"]["fleet.replicas"] == 50);
  CHECK(runs == 1);
  SizeSearch none(base, {{"fleet.replicas", whole_numbers(1, 5)}}, requiring({"x.wait_s<=1"}));
  const json missed = synthetic_search(none, runs, most);
  CHECK(missed["best"].is_null());
  CHECK(runs == 4);  // 1, then 3, 4 and 5 by bisection
  CHECK(missed["points"].back()["point"]["fleet.replicas"] == 5);
  SizeSearch listed(base, {{"fleet.replicas", {json(2), json(40), json(20)}}}, requiring({"x.wait_s<=1"}));
  const json r = synthetic_search(listed, runs, most);
  CHECK(r["searched"].is_null());  // not a consecutive range: every value is tried
  CHECK(runs == 3);
  CHECK(r["best"]["point"]["fleet.replicas"] == 20);
}

TEST_CASE("size refuses an empty space, a space over the run budget and keys the summary lacks", "[size]") {
  const json base = {{"workload", {{"kind", "x"}}}};
  CHECK(error_of(base, {}, requiring({"x.wait_s<=1"})).find("--vary: nothing to vary") == 0);
  CHECK(error_of(base, {{"fleet.replicas", {}}}, requiring({"x.wait_s<=1"})).find("--vary: fleet.replicas has no values") == 0);
  SizeOptions small = requiring({"x.wait_s<=1"});
  small.max_runs = 13;
  const std::string over = error_of(base, {{"fleet.replicas", whole_numbers(1, 100)}}, small);
  CHECK(over.find("--vary: the space may need 14 runs") == 0);
  CHECK(over.find("(--max-runs)") != std::string::npos);
  const std::string typo = error_of(base, {{"fleet.replicas", whole_numbers(1, 10)}}, requiring({"x.wiat_s<=1"}));
  CHECK(typo.find("--require: 'x.wiat_s' names no number of the summary") == 0);
  CHECK(typo.find("did you mean \"x.wait_s\"") != std::string::npos);
  SizeOptions named = requiring({"x.wait_s<=1"}, "x.price");
  named.names = cs::studies::python_size_names();
  CHECK(error_of(base, {{"fleet.replicas", whole_numbers(1, 10)}}, named).find("minimize: 'x.price'") == 0);
  CHECK_THROWS_WITH(cs::studies::parse_requirement("x.wait_s=1", "--require"), Catch::Contains("has no comparison"));
  CHECK_THROWS_WITH(cs::studies::parse_requirement("x.wait_s<=fast", "require"), Catch::Contains("not a finite number"));
  CHECK_THROWS_WITH(cs::studies::integer_range("9..4", "fleet.replicas"), Catch::Contains("empty range"));
  CHECK(!cs::studies::integer_range("4,9", "x"));
  CHECK(cs::studies::integer_range("4..9", "x")->size() == 6);
}

// [heavy]: 4 replications of 40 min at each point, twice (1 and 2 threads) for two bounds, so
// that the answer is sure; the sanitized ctest leaves it out and runs the pruning case below
// (real serving runs through size_search on 2 threads).
TEST_CASE("size finds Erlang C's least replica count for a mean-wait bound", "[size][serving][heavy]") {
  // The M/M/c file (64/s, 100 ms exponential service, one slot per replica), shortened.
  json base = cs::scenario::read_scenario_file(CS_SOURCE_DIR "/scenarios/serving_mmc_erlang_c.json");
  cs::scenario::set_path(base, "run.until", "40min");
  cs::scenario::set_path(base, "run.replications", 4);
  std::vector<SizeAxis> axes = {{"fleet.autoscaler.replicas", whole_numbers(7, 30)}};
  for (const double bound_s : {0.02, 0.006}) {
    // Erlang C: W(8) = 28.6 ms, W(9) = 10.1 ms, W(10) = 3.9 ms.
    int least = 7;
    while (cs::serving::test::mmc_mean_wait(least, 64.0, 10.0) > bound_s) ++least;
    const json one = cs::studies::size_search(base, axes, requiring({"serving.wait_mean_s<=" + std::to_string(bound_s)}), 1);
    const json two = cs::studies::size_search(base, axes, requiring({"serving.wait_mean_s<=" + std::to_string(bound_s)}), 2);
    INFO("bound " << bound_s << " s: Erlang C's least c = " << least);
    CHECK(one["best"]["point"]["fleet.autoscaler.replicas"] == least);
    CHECK(one["best"]["requirements"][0]["sure"] == true);
    CHECK(one["minimize"] == "serving.cost_usd");
    // The same points tried, the same answer, on any number of threads.
    REQUIRE(one["points"].size() == two["points"].size());
    for (std::size_t i = 0; i < one["points"].size(); ++i) {
      CHECK(one["points"][i]["point"] == two["points"][i]["point"]);
      CHECK(one["points"][i]["objective"] == two["points"][i]["objective"]);
    }
    CHECK(one["runs"].get<int>() == 4);  // 7, 8, 10, then 9
  }
}

TEST_CASE("size prunes a combination whose infeasible side costs more than the best found", "[size][serving]") {
  json base = cs::scenario::read_scenario_file(CS_SOURCE_DIR "/scenarios/serving_mmc_erlang_c.json");
  cs::scenario::set_path(base, "run.until", "30min");
  cs::scenario::set_path(base, "run.replications", 2);
  // Twice the service time needs about twice the replicas: that line cannot win.
  const json r = cs::studies::size_search(
      base, {{"workload.request.service_time.mean", {json("100ms"), json("200ms")}},
             {"fleet.autoscaler.replicas", whole_numbers(7, 30)}},
      requiring({"serving.wait_mean_s<=0.006"}), 2);
  CHECK(r["best"]["point"]["workload.request.service_time.mean"] == "100ms");
  CHECK(r["best"]["point"]["fleet.autoscaler.replicas"] == 10);
  CHECK(r["lines"] == 2);
  CHECK(r["lines_pruned"] == 1);
}

TEST_CASE("size over the checkpoint interval finds Daly's optimum", "[size][training_run]") {
  // Daly's setting: 8 nodes failing with MTBF 8 h each (the job every M = 1 h), checkpoints of
  // C = 60 s, no restart cost; W = 20,000 s of work.
  const json base = json::parse(R"({ "name": "daly", "seed": 1,
    "workload": {"kind": "training_run", "step_time": "1s", "steps": 20000},
    "fleet": {"nodes": 8, "market": "on_demand", "failures": {"node_mtbf": "8h", "replacement_delay": "0s"},
      "checkpoint": {"interval": "600s", "write_time": "60s", "mode": "sync"},
      "restore": {"detection": "0s", "restart": "0s", "restart_per_node": 0, "warmup": "0s"}},
    "run": {"replications": 200} })");
  const double tau = std::round(cs::fleet::young_daly_interval_s(60.0, 3600.0));
  std::vector<json> intervals;
  double closed_form_best = 0, least = 1e300;
  for (const double factor : {0.25, 0.5, 1.0, 2.0, 4.0}) {
    intervals.emplace_back(std::round(factor * tau));
    const double t = cs::fleet::daly_expected_wall_time_s(20000.0, std::round(factor * tau), 60.0, 3600.0);
    if (t < least) least = t, closed_form_best = std::round(factor * tau);
  }
  const json r = cs::studies::size_search(base, {{"fleet.checkpoint.interval", intervals}},
                                          requiring({"training_run.goodput>=0.5"}, "training_run.wall_time_s"), 2);
  CHECK(closed_form_best == tau);
  CHECK(r["best"]["point"]["fleet.checkpoint.interval"] == closed_form_best);
  CHECK(r["best"]["objective"].get<double>() == Approx(least).epsilon(0.02));
}

TEST_CASE("an answer whose requirement's interval reaches past the bound is not sure, and says so", "[size]") {
  const json base = {{"workload", {{"kind", "x"}}}, {"run", {{"replications", 3}}}};
  SizeOptions options = requiring({"x.wait_s<=0.37"});
  options.confirm_replications = 3;  // the scenario's own: nothing to confirm with
  SizeSearch search(base, {{"fleet.replicas", whole_numbers(1, 100)}}, options);
  for (auto batch = search.next(); !batch.empty(); batch = search.next()) {
    std::vector<SizeOutcome> outcomes;
    for (const auto& run : batch) {
      const double r = run.doc["fleet"]["replicas"].get<double>();
      outcomes.push_back({{{"replications", 3},
                           {"x", {{"wait_s", {{"mean", 10.0 / r}, {"ci95", 0.05}}}, {"cost_usd", {{"mean", r}, {"ci95", 0.0}}}}}},
                          std::nullopt});
    }
    search.tell(batch, outcomes);
  }
  const json result = search.result();
  CHECK(result["best"]["point"]["fleet.replicas"] == 28);
  CHECK(result["best"]["requirements"][0]["sure"] == false);  // 0.357 + 0.05 > 0.37
  REQUIRE(result["warnings"].size() == 1);
  CHECK(result["warnings"][0].get<std::string>().find("x.wait_s<=0.37: the answer meets it on average") == 0);
  CHECK(cs::studies::size_text(result).find("warning: x.wait_s<=0.37") != std::string::npos);
}
