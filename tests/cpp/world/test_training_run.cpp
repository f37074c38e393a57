// Running training_run scenarios: the hand-worked scenario's numbers, the summary's keys,
// replications in parallel (identical for any thread count, mean and CI of the single runs),
// the time series, run.until; a step simulated from workload.training with the model's checkpoint.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "sim/engine/statistics.hpp"
#include "sim/scenario/load.hpp"
#include "sim/world/run.hpp"
#include "world_test_support.hpp"

using namespace cs::scenario;
using json = nlohmann::json;
using cs::world::test::load;

namespace {

const std::string kByHand = CS_SOURCE_DIR "/scenarios/training_run_by_hand.json";

// The summary minus the machine's wall time (the top level's; training_run.wall_time_s is
// simulated).
json without_wall_time(json s) {
  s.erase("wall_time_s");
  return s;
}

}  // namespace

TEST_CASE("the hand-worked training run gives the numbers in its description", "[training_run]") {
  const cs::world::RunOutput out = cs::world::run_scenario(load(kByHand));
  const json& s = out.summary;
  CHECK(s["sim_time_s"] == 9300.0);  // the clock stops when the job is done
  CHECK_FALSE(s.contains("network"));
  CHECK_FALSE(s.contains("links"));
  const json& t = s["training_run"];
  // Exactly the contract's keys, and the breakdowns nested under their groups.
  std::set<std::string> keys;
  for (const auto& [k, v] : t.items())
    if (!v.is_object()) keys.insert(k);
  CHECK(keys == std::set<std::string>{"wall_time_s", "goodput", "interruptions", "failures", "checkpoints",
                                      "lost_work_s", "restore_time_s", "cost_usd"});
  for (const char* group : {"job", "checkpoint", "fleet", "time_in_state_s", "cost_usd_by_market", "node_hours_by_market"})
    CHECK(t[group].is_object());
  // starting 0-120, running 120-1920, checkpoint -1980, failure at 3000 (1020 s lost), waiting
  // for the replacement -3600, restoring -3720, then 3 more checkpoints of 60 s: 9300 s.
  CHECK(t["wall_time_s"] == 9300);
  CHECK(t["goodput"].get<double>() == Approx(7200.0 / 9300.0));
  CHECK(t["interruptions"] == 0);
  CHECK(t["failures"] == 1);
  CHECK(t["checkpoints"] == 4);
  CHECK(t["lost_work_s"] == 1020);
  CHECK(t["restore_time_s"] == 120);
  CHECK(t["cost_usd"].get<double>() == Approx((4 * 9300.0 - 600.0) / 3600.0 * 98.32));
  CHECK(t["time_in_state_s"]["waiting"] == 600);
  CHECK(t["time_in_state_s"]["checkpointing"] == 240);
  CHECK(t["job"]["completed"] == 1);
  CHECK(t["fleet"]["job_mtbf_s"].is_null());  // no random failures: an infinite MTBF
  // The job's time series, recorded at every change.
  CHECK_THAT(out.timeseries_csv, Catch::Contains("training_run.state,9300,6"));  // done
  CHECK_THAT(out.timeseries_csv, Catch::Contains("training_run.nodes.on_demand,3000,3"));
  CHECK_THAT(out.timeseries_csv, Catch::Contains("training_run.cost_usd,"));
}

TEST_CASE("run.until stops a training run that is not done", "[training_run]") {
  const json t = cs::world::run_scenario(load(kByHand, {"run.until=1h"})).summary;
  CHECK(t["sim_time_s"] == 3600.0);
  CHECK(t["training_run"]["wall_time_s"] == 3600);
  CHECK(t["training_run"]["job"]["completed"] == 0);
  CHECK(t["training_run"]["job"]["useful_time_s"] == 1800);  // the checkpointed work
}

TEST_CASE("replications run in parallel: identical for any thread count, mean and CI of the single runs",
          "[training_run]") {
  const std::vector<std::string> sets = {"fleet.failures.node_mtbf=20h", "fleet.nodes=16", "run.replications=6",
                                         "seed=11"};
  const Config config = load(kByHand, sets);
  cs::world::RunOptions serial, two, any;
  serial.threads = 1;
  two.threads = 2;
  const json a = without_wall_time(cs::world::run_scenario(config, serial).summary);
  CHECK(a == without_wall_time(cs::world::run_scenario(config, two).summary));
  CHECK(a == without_wall_time(cs::world::run_scenario(config, any).summary));
  CHECK(a["replications"] == 6);
  std::vector<double> wall, failures;
  for (int r = 0; r < 6; ++r) {
    Config one = config;
    one.run.replications = 1;
    one.seed = 11 + r;
    const json t = cs::world::run_scenario(one).summary["training_run"];
    wall.push_back(t["wall_time_s"].get<double>());
    failures.push_back(t["failures"].get<double>());
  }
  const auto w = cs::engine::mean_ci95(wall);
  CHECK(a["training_run"]["wall_time_s"]["mean"].get<double>() == Approx(w.mean));
  CHECK(a["training_run"]["wall_time_s"]["ci95"].get<double>() == Approx(w.ci95));
  CHECK(w.ci95 > 0.0);  // the replications differ
  CHECK(a["training_run"]["failures"]["mean"].get<double>() == Approx(cs::engine::mean(failures)));
}

TEST_CASE("replications of collectives run in parallel too, the same for any thread count", "[training_run]") {
  const Config config =
      load(CS_SOURCE_DIR "/scenarios/fat_tree_permutation.json", {"network.routing=ecmp", "run.replications=4"});
  cs::world::RunOptions serial, two;
  serial.threads = 1;
  two.threads = 2;
  const json a = without_wall_time(cs::world::run_scenario(config, serial).summary);
  CHECK(a == without_wall_time(cs::world::run_scenario(config, two).summary));
  CHECK(a["traffic"]["makespan_s"].contains("ci95"));
}

namespace {

const std::string kSimulatedStep = CS_SOURCE_DIR "/scenarios/training_run_gpt3_simulated_step.json";

// The training run's file as a "training" scenario: the same cluster, network and workload.
json as_training_scenario(json doc) {
  json training = doc["workload"]["training"];
  training["kind"] = "training";
  doc["workload"] = training;
  doc.erase("fleet");
  doc.erase("run");
  return doc;
}

// The file's plan (tp 8, pp 8) on 16 of its 128 nodes: dp 2 and 64 sequences a step, enough
// micro-batches to fill the 8 stages (the no-fit case's memory is the whole file's, 87.9 GB a
// GPU). What these cases assert holds at any size; the whole file runs in tests/python's
// golden comparison.
json on_16_nodes(json doc) {
  doc["topology"]["nodes"] = 16;
  doc["fleet"]["nodes"] = 16;
  doc["workload"]["training"]["parallel"]["dp"] = 2;
  doc["workload"]["training"]["batch"]["global"] = 64;
  return doc;
}

}  // namespace

TEST_CASE("a training run's step simulated from workload.training is the training scenario's step",
          "[training_run][training]") {
  json doc = on_16_nodes(read_scenario_file(kSimulatedStep));
  doc["workload"]["training"]["model"]["layers"] = 8;  // one a stage
  doc["run"]["replications"] = 2;
  const json run = cs::world::run_scenario(parse_config(doc)).summary;
  const json step = cs::world::run_scenario(parse_config(as_training_scenario(doc))).summary["training"];
  const json& r = run["training_run"];
  REQUIRE(r.contains("step"));
  CHECK(r["step"]["step_time_s"] == step["step_time_s"]);
  CHECK(r["step"]["mfu"] == step["mfu"]);
  // The work the job keeps is steps x the simulated step.
  const double steps = doc["workload"]["steps"].get<double>();
  CHECK(r["job"]["useful_time_s"]["mean"].get<double>() == Approx(steps * step["step_time_s"].get<double>()));
  // Without a size or a write time the checkpoint is the model's, 14 bytes per parameter: the
  // same write time as giving that size.
  const double params = step["model"]["parameters"].get<double>();
  CHECK(r["step"]["model_checkpoint_bytes"].get<double>() == Approx(14 * params));
  json sized = doc;
  sized["fleet"]["checkpoint"]["size"] = 14 * params;
  const json r2 = cs::world::run_scenario(parse_config(sized)).summary["training_run"];
  CHECK(r2["checkpoint"]["write_s"]["mean"] == r["checkpoint"]["write_s"]["mean"]);
  CHECK(r2["wall_time_s"] == r["wall_time_s"]);
}

TEST_CASE("a training run refuses a plan that does not fit, and a topology that is not its nodes", "[training_run]") {
  json doc = on_16_nodes(read_scenario_file(kSimulatedStep));
  json no_fit = doc;
  no_fit["workload"]["training"]["parallel"]["zero"] = 0;
  no_fit["workload"]["training"]["recompute"] = "none";
  no_fit["workload"]["training"]["batch"]["micro"] = 4;
  try {
    cs::world::run_scenario(parse_config(no_fit));
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.path() == "workload.training.parallel");
    CHECK_THAT(std::string(e.what()), Catch::Contains("does not fit"));
  }
  json mismatch = doc;
  mismatch["topology"]["nodes"] = 8;
  try {
    parse_config(mismatch);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.path() == "topology.nodes");
  }
}
