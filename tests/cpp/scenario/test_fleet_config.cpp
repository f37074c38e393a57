// training_run workloads and the fleet section: defaults, conversions into cs::fleet's
// TrainingRunConfig, and every class of input error at its JSON path.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <utility>

#include "sim/compute/gpu_catalog.hpp"
#include "sim/fleet/instance_prices.hpp"
#include "sim/scenario/load.hpp"
#include "sim/world/run.hpp"

using namespace cs::scenario;
using cs::sources::Distribution;
using cs::fleet::Market;
using json = nlohmann::json;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using Sets = std::initializer_list<std::pair<const char*, json>>;

// A minimal training_run, changed at the given paths (a null value removes the key).
json doc_with(Sets sets) {
  json doc = json::parse(R"({"workload": {"kind": "training_run", "step_time": "10s", "steps": 1000},
                             "fleet": {"nodes": 8, "checkpoint": {"write_time": "30s"}}})");
  for (const auto& [path, value] : sets) {
    if (!value.is_null()) {
      set_path(doc, path, value);
      continue;
    }
    std::string pointer = std::string("/") + path;
    for (char& ch : pointer) ch = ch == '.' ? '/' : ch;
    const json::json_pointer p(pointer);
    doc.at(p.parent_pointer()).erase(p.back());
  }
  return doc;
}

cs::fleet::TrainingRunConfig run_config(Sets sets = {}) { return parse_config(doc_with(sets)).training_run; }

InputError error_with(Sets sets) {
  try {
    parse_config(doc_with(sets));
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no error");
  throw;  // unreachable
}

}  // namespace

TEST_CASE("a training_run takes the fleet library's defaults", "[fleet_config]") {
  const Config config = parse_config(doc_with({}));
  CHECK(config.workload == WorkloadKind::training_run);
  const auto& c = config.training_run;
  CHECK(c.step_time_s == 10.0);
  CHECK(c.steps == 1000.0);
  CHECK(c.nodes == 8);
  CHECK(c.spot_share == 0.0);
  CHECK(c.reserved_share == 0.0);
  const auto catalog = cs::fleet::InstancePriceCatalog::builtin().usd_per_hour("aws.p5.48xlarge");
  for (const Market m : cs::fleet::kAllMarkets) CHECK(c.usd_per_node_hour[m] == catalog[m]);
  CHECK(c.usd_per_node_hour[Market::on_demand] == 98.32);
  const cs::fleet::TrainingRunConfig library;  // the library's own defaults
  CHECK(c.failures.node_mtbf_s == library.failures.node_mtbf_s);
  CHECK(c.failures.causes.size() == library.failures.causes.size());
  CHECK(c.reclaims.rate.base_per_s == library.reclaims.rate.base_per_s);
  CHECK(c.reclaims.warning_s == 120.0);
  CHECK(c.fallback_after_s == kInf);
  CHECK_FALSE(c.checkpoint.interval_s.has_value());  // auto: Young/Daly
  CHECK(c.checkpoint.write_time_s == 30.0);
  CHECK(c.checkpoint.mode == cs::fleet::CheckpointMode::sync);
  CHECK(c.checkpoint.storage.name == "parallel_fs");
  CHECK_FALSE(c.restore.time_s.has_value());
  CHECK(c.restore.detection_s == library.restore.detection_s);
  CHECK(c.provisioning[Market::spot].expected() == 300.0);
  CHECK(c.max_wall_time_s == library.max_wall_time_s);
  CHECK_FALSE(c.elastic.enabled);
  CHECK_NOTHROW(cs::world::check_buildable(config));  // no topology to build
}

TEST_CASE("fleet values convert to the library's SI units", "[fleet_config]") {
  SECTION("markets and prices: per node-hour in the library, USD per second or \"$/h\" in files") {
    auto c = run_config({{"fleet.market", {{"spot", 0.7}, {"reserved", 0.1}}},
                         {"fleet.prices", {{"spot", "$30/h"}, {"on_demand", 0.02}}}});
    CHECK(c.spot_share == 0.7);
    CHECK(c.reserved_share == 0.1);
    CHECK(c.usd_per_node_hour[Market::spot] == Approx(30.0));
    CHECK(c.usd_per_node_hour[Market::on_demand] == Approx(72.0));  // 0.02 USD/s
    CHECK(c.usd_per_node_hour[Market::reserved] == 52.0);           // the catalog's
    CHECK(run_config({{"fleet.market", "reserved"}}).reserved_share == 1.0);
    CHECK(run_config({{"fleet.market", {{"spot", 0.25}, {"on_demand", 0.75}}}}).spot_share == 0.25);
    c = run_config({{"hardware.gpu", "A100-40GB"}, {"fleet.instance", "aws.p4d.24xlarge"}});
    CHECK(c.usd_per_node_hour[Market::on_demand] == 32.77);
    CHECK(c.usd_per_node_hour[Market::spot] == Approx(32.77 * 0.4));  // the default 60% discount
    // The instance defaults to the catalog's first with hardware.gpu.
    CHECK(run_config({{"hardware.gpu", "A100-40GB"}}).usd_per_node_hour[Market::on_demand] == 32.77);
    // Per accelerator: a node of 4 A100s costs half an 8-GPU instance; a TPU-style instance of
    // one chip would cost the node's chips x the chip price the same way.
    c = run_config({{"hardware.gpu", "A100-40GB"}, {"hardware.node", {{"gpus", 4}}}, {"fleet.instance", "aws.p4d.24xlarge"}});
    CHECK(c.usd_per_node_hour[Market::on_demand] == Approx(32.77 / 2));
    CHECK(c.usd_per_node_hour[Market::reserved] == Approx(32.77 * 0.6 / 2));
  }
  SECTION("reclaims: a rate, an hour-of-day profile, a trace, correlated events") {
    auto c = run_config({{"fleet.interruptions", {{"rate", "0.0036/h"}, {"warning", "gcp"},
                                                  {"correlated", {{"share", 0.25}, {"rate", "0.5/d"}}},
                                                  {"capacity_return", {{"dist", "lognormal"}, {"mean", "10min"}, {"stddev", "5min"}}},
                                                  {"fallback_after", "15min"}}}});
    CHECK(c.reclaims.rate.base_per_s == Approx(1e-6));
    CHECK(c.reclaims.warning_s == 30.0);
    CHECK(c.reclaims.correlated.pool_share == 0.25);
    CHECK(c.reclaims.correlated.events_per_s == Approx(0.5 / 86400));
    CHECK(c.reclaims.capacity_return.kind == Distribution::Kind::lognormal);
    CHECK(c.reclaims.capacity_return.mean == 600.0);
    CHECK(c.reclaims.capacity_return.cv == Approx(0.5));
    CHECK(c.fallback_after_s == 900.0);

    json profile = json::array();
    for (int h = 0; h < 24; ++h) profile.push_back(h < 12 ? "0.001/h" : "0.003/h");
    c = run_config({{"fleet.interruptions.rate", profile}, {"fleet.interruptions.start_hour", 6}});
    CHECK(c.reclaims.rate.mean_per_s() == Approx(0.002 / 3600));
    CHECK(c.reclaims.rate.at(0.0) == Approx(0.001 / 3600));         // 06:00
    CHECK(c.reclaims.rate.at(7 * 3600.0) == Approx(0.003 / 3600));  // 13:00
    CHECK(c.reclaims.rate.start_hour == 6.0);

    c = run_config({{"fleet.interruptions.trace", json::parse(R"([{"time": "1h"}, {"time": "2h", "instances": 3}])")}});
    REQUIRE(c.reclaims.trace.size() == 2);
    CHECK(c.reclaims.trace[1].time_s == 7200.0);
    CHECK(c.reclaims.trace[1].instances == 3);
  }
  SECTION("a trace file, relative to the working directory or absolute") {
    const auto file = std::filesystem::temp_directory_path() / "clustersim_fleet_trace_test.csv";
    std::ofstream(file) << "time_s,instances\n# a comment\n100,1\n250.5,2\n";
    const auto c = run_config({{"fleet.failures.trace", file.string()}});
    REQUIRE(c.failures.trace.size() == 2);
    CHECK(c.failures.trace[1].time_s == 250.5);
    std::ofstream(file) << "time_s,instances\n100,1\n50,1\n";
    const InputError e = error_with({{"fleet.failures.trace", file.string()}});
    CHECK(e.path() == "fleet.failures.trace");
    CHECK_THAT(e.expected(), Catch::Contains("in '" + file.string() + "'"));
    std::filesystem::remove(file);
  }
  SECTION("failures") {
    auto c = run_config({{"fleet.failures", json::parse(R"({"node_mtbf": "1000h", "weibull_shape": 0.8,
        "causes": [{"name": "gpu", "share": 3}, {"name": "nccl", "share": 1, "replaces_node": false}],
        "replacement_delay": {"dist": "exponential", "mean": "1h"},
        "correlated": {"nodes": 4, "mtbf": "100d"}})")}});
    CHECK(c.failures.node_mtbf_s == 3.6e6);
    CHECK(c.failures.weibull_shape == 0.8);
    REQUIRE(c.failures.causes.size() == 2);
    CHECK(c.failures.replacing_share() == 0.75);
    CHECK(c.failures.replacement.kind == Distribution::Kind::exponential);
    CHECK(c.failures.replacement.mean == 3600.0);
    CHECK(c.failures.correlated.domain_nodes == 4);
    CHECK(c.failures.correlated.domain_mtbf_s == 100 * 86400.0);
    CHECK(run_config({{"fleet.failures.node_mtbf", "none"}}).failures.node_mtbf_s == kInf);
    CHECK(run_config({{"fleet.failures.causes", json::array()}}).failures.replacing_share() == 1.0);
  }
  SECTION("checkpoints, storage, restore") {
    auto c = run_config({{"fleet.checkpoint", json::parse(R"({"interval": "30min", "size": "5.67TB", "mode": "async",
        "pattern": "rank0", "storage": {"tier": "object_store", "write_bandwidth": "2GB/s"},
        "snapshot_bandwidth": "50GB/s", "final": false, "emergency": false})")},
                         {"fleet.restore", json::parse(R"({"time": "15min", "detection": "5min", "restart": "90s",
        "restart_per_node": "0.1s", "warmup": "2min", "at_launch": false})")}});
    CHECK(c.checkpoint.interval_s == 1800.0);
    CHECK(c.checkpoint.size_bytes == 5.67e12);
    CHECK_FALSE(c.checkpoint.write_time_s.has_value());
    CHECK(c.checkpoint.mode == cs::fleet::CheckpointMode::async);
    CHECK(c.checkpoint.pattern == cs::fleet::WritePattern::rank0);
    CHECK(c.checkpoint.storage.name == "object_store");
    CHECK(c.checkpoint.storage.write_Bps_per_node == 2e9);
    CHECK(c.checkpoint.storage.read_Bps_per_node == 10e9);  // the tier's
    CHECK(c.checkpoint.write_s(8) == Approx(5.0 + 5.67e12 / 2e9));  // rank 0 alone, plus latency
    CHECK(c.checkpoint.snapshot_Bps_per_node == 50e9);
    CHECK_FALSE(c.checkpoint.final_checkpoint);
    CHECK_FALSE(c.checkpoint.emergency_on_notice);
    CHECK(c.restore.time_s == 900.0);
    CHECK(c.restore.detection_s == 300.0);
    CHECK(c.restore.restart.seconds(10) == Approx(91.0));
    CHECK(c.restore.warmup_s == 120.0);
    CHECK_FALSE(c.restore.launch_overhead_at_start);
    CHECK(run_config({{"fleet.checkpoint.interval", "none"}}).checkpoint_interval_s() == kInf);
    CHECK(run_config({{"fleet.checkpoint.storage", "archive"}}).checkpoint.storage.retrieval_s == 12 * 3600.0);
  }
  SECTION("cold start is boot + image pull, for every market") {
    auto c = run_config({{"fleet.cold_start", {{"boot", "4min"}, {"image_pull", "1min"}}}});
    CHECK(c.provisioning[Market::spot].kind == Distribution::Kind::constant);
    CHECK(c.provisioning[Market::on_demand].mean == 300.0);
    c = run_config({{"fleet.cold_start", {{"boot", {{"dist", "exponential"}, {"mean", "4min"}}}, {"image_pull", "1min"}}}});
    CHECK(c.provisioning[Market::reserved].kind == Distribution::Kind::sum);
    CHECK(c.provisioning[Market::reserved].expected() == 300.0);
  }
  SECTION("elastic, run.until") {
    auto c = run_config({{"fleet.elastic", {{"nodes_per_replica", 2}, {"min_replicas", 3}, {"reconfigure", "1min"}}},
                         {"run", {{"until", "30d"}}}});
    CHECK(c.elastic.enabled);
    CHECK(c.elastic.nodes_per_replica == 2);
    CHECK(c.elastic.min_replicas == 3);
    CHECK(c.elastic.reconfigure_s == 60.0);
    CHECK(c.max_wall_time_s == 30 * 86400.0);
    CHECK(run_config({{"fleet.elastic", true}}).elastic.nodes_per_replica == 1);
    CHECK_FALSE(run_config({{"fleet.elastic", false}}).elastic.enabled);
  }
}

TEST_CASE("training_run and fleet errors name their JSON path", "[fleet_config]") {
  struct Case {
    Sets sets;
    const char* path;
    const char* contains;
  };
  const Case cases[] = {
      {{{"workload.training", {{"model", {{"preset", "llama3-70b"}}}}}}, "workload.step_time", "not both"},
      {{{"workload.step_time", nullptr}}, "workload.step_time", "required"},
      {{{"workload.steps", nullptr}}, "workload.steps", "required"},
      {{{"workload.steps", 1e12}, {"workload.step_time", "1h"}}, "workload.steps", "at most 1e12 s"},
      {{{"workload.background", json::array()}}, "workload.background", "not a training_run"},
      {{{"fleet.nodes", nullptr}}, "fleet.nodes", "required"},
      {{{"fleet.instance", "aws.p5.48xlarg"}}, "fleet.instance", "did you mean \"aws.p5.48xlarge\"?"},
      // An instance of another accelerator: the one with hardware.gpu is the hint.
      {{{"fleet.instance", "gcp.tpu-v5e"}}, "fleet.instance", "holds TPU-v5e accelerators; hardware.gpu is H100-SXM"},
      {{{"fleet.instance", "aws.trn1.32xlarge"}}, "fleet.instance", "use aws.p5.48xlarge"},
      {{{"fleet.market", {{"spot", 0.8}, {"reserved", 0.3}}}}, "fleet.market", "more than 1"},
      {{{"fleet.market", {{"spot", 0.5}, {"on_demand", 0.4}}}}, "fleet.market.on_demand", "add up to 0.9"},
      {{{"fleet.market", "spott"}}, "fleet.market", "did you mean \"spot\"?"},
      {{{"fleet.prices.spot", 39.33}}, "fleet.prices.spot", "\"$39.33/h\""},
      {{{"fleet.interruptions.rate", 0.0003}}, "fleet.interruptions.rate", "\"0.0003/h\""},
      {{{"fleet.interruptions.rate", json::array({"1/h", "2/h"})}}, "fleet.interruptions.rate", "24"},
      {{{"fleet.interruptions.warning", "awz"}}, "fleet.interruptions.warning", "did you mean \"aws\"?"},
      {{{"fleet.interruptions.trace", "/no/such/trace.csv"}}, "fleet.interruptions.trace", "missing"},
      {{{"fleet.interruptions.trace", json::parse(R"([{"time": 10}])")}, {"fleet.interruptions.rate", "1/d"}},
       "fleet.interruptions.trace", "instead of rate"},
      {{{"fleet.failures.trace", json::parse(R"([{"time": 10}, {"time": 5}])")}}, "fleet.failures.trace.1.time", "in order"},
      {{{"fleet.failures.replacement_delay", {{"dist", "lognormal"}, {"mean", "1h"}}}},
       "fleet.failures.replacement_delay", "\"stddev\""},
      {{{"fleet.interruptions.capacity_return", {{"dist", "exponential"}, {"mean", "1h"}, {"shape", 2}}}},
       "fleet.interruptions.capacity_return.shape", "takes no \"shape\""},
      {{{"fleet.cold_start.boot", {{"dist", "uniform"}, {"low", "5min"}, {"high", "1min"}}}}, "fleet.cold_start.boot.high",
       "high >= low"},
      {{{"fleet.failures.causes", "llama"}}, "fleet.failures.causes", "expected \"llama3\""},
      {{{"fleet.failures.node_mtbf", 0}}, "fleet.failures.node_mtbf", "> 0"},
      {{{"fleet.checkpoint", json::object()}}, "fleet.checkpoint", "size"},
      {{{"fleet.checkpoint.interval", "autoo"}}, "fleet.checkpoint.interval", "did you mean \"auto\"?"},
      {{{"fleet.checkpoint.mode", "async"}}, "fleet.checkpoint.size", "async"},
      {{{"fleet.checkpoint.storage", "lustre"}}, "fleet.checkpoint.storage", "parallel_fs"},
      {{{"fleet.cold_start.model_load", "1min"}}, "fleet.cold_start.model_load", "restore"},
      {{{"fleet.elastic", {{"nodes_per_replica", 3}}}}, "fleet.elastic.nodes_per_replica", "divisor"},
      {{{"fleet.autoscaler", {{"policy", "hpa"}}}}, "fleet.autoscaler", "serving"},
      {{{"fleet.nodes", 2048}, {"fleet.market", "spot"}, {"fleet.interruptions.rate", "100/h"}}, "fleet", "interruptions"},
      {{{"fleet.nodes", 2048}, {"fleet.market", "spot"}, {"fleet.interruptions.rate", "100/h"}, {"run.until", "1000d"}},
       "run.until", "interruptions"},
      {{{"workload.step_time", "1ms"}, {"workload.steps", 1e12}, {"fleet.checkpoint.interval", "1ms"}},
       "fleet.checkpoint.interval", "checkpoints"},
  };
  for (const Case& c : cases) {
    const InputError e = error_with(c.sets);
    INFO(e.what());
    CHECK(e.path() == c.path);
    CHECK_THAT(std::string(e.what()), Catch::Contains(c.contains));
  }
  // A fleet section beside another workload is not used by anything yet.
  try {
    parse_config(json::parse(R"({"workload": {"kind": "collective"}, "fleet": {"nodes": 2}})"));
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.path() == "fleet");
    CHECK_THAT(e.expected(), Catch::Contains("training_run"));
  }
}

TEST_CASE("a market an instance is not sold in is an error naming the nearest valid choice", "[fleet_config]") {
  // aws.trn2.48xlarge is sold on demand and in Capacity Blocks, never as spot. Its accelerator
  // (Trainium2) joins the compute catalog with the TPU/Trainium entries: until then the
  // scenario stops at hardware.gpu, with the catalog's names.
  const Sets sets = {{"hardware.gpu", "Trainium2"}, {"hardware.node", {{"gpus", 16}}},
                     {"fleet.instance", "aws.trn2.48xlarge"}, {"fleet.market", {{"spot", 0.5}}}};
  const InputError e = error_with(sets);
  INFO(e.what());
  if (cs::compute::find_gpu("Trainium2") == nullptr) {
    CHECK(e.path() == "hardware.gpu");
    return;
  }
  CHECK(e.path() == "fleet.market");
  CHECK_THAT(std::string(e.what()), Catch::Contains("not sold in the spot market"));
  CHECK_THAT(std::string(e.what()), Catch::Contains("buy it on_demand"));
}
