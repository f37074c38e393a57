// The fleet's building blocks against closed forms: price catalog, storage transfers,
// checkpoint costs, Young/Daly, hour-of-day rates, traces, the cost
// ledger, and the validation of configurations.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "fleet_test_support.hpp"
#include "sim/engine/random.hpp"
#include "sim/fleet/checkpoint.hpp"
#include "sim/fleet/cost_ledger.hpp"
#include "sim/fleet/event_trace.hpp"
#include "sim/fleet/hourly_rate.hpp"
#include "sim/fleet/instance_prices.hpp"
#include "sim/fleet/storage.hpp"
#include "sim/fleet/training_run_config.hpp"

using namespace cs::fleet;

TEST_CASE("The built-in price catalog has a sourced on-demand price for every instance",
          "[fleet][prices]") {
  const InstancePriceCatalog& c = InstancePriceCatalog::builtin();
  REQUIRE(!c.names().empty());
  for (const std::string& name : c.names()) {
    const InstanceType* t = c.find(name);
    REQUIRE(t != nullptr);
    CHECK(t->gpus >= 1);
    for (const Market m : kInstanceMarkets) {
      const PriceQuote q = c.price(name, m);
      CHECK(q.usd_per_hour > 0.0);
      CHECK(!q.source.empty());
    }
    CHECK_FALSE(c.price(name, Market::on_demand).derived);
  }
  // aws.p5.48xlarge lists on-demand and reserved; spot is derived with the default discount.
  const PriceQuote spot = c.price("aws.p5.48xlarge", Market::spot);
  CHECK(spot.derived);
  CHECK(spot.usd_per_hour == Approx(98.32 * (1 - c.default_discount(Market::spot))));
  CHECK(c.price("aws.p5.48xlarge", Market::reserved).usd_per_hour == 52.0);
  CHECK_THROWS_AS(c.price("aws.nothing", Market::spot), std::out_of_range);
  CHECK_THROWS_AS(c.price("aws.p5.48xlarge", Market::serverless), std::invalid_argument);
  CHECK(c.usd_per_hour("aws.p5.48xlarge")[Market::serverless] == 0.0);
}

TEST_CASE("The catalog's accelerators per instance, per-chip TPU prices and markets not sold", "[fleet][prices]") {
  const InstancePriceCatalog& c = InstancePriceCatalog::builtin();
  // Accelerator names the compute catalog of this build may lack parse all the same.
  CHECK(c.find("aws.trn1.32xlarge")->gpu == "Trainium1");
  CHECK(c.find("aws.trn1.32xlarge")->gpus == 16);
  CHECK(c.find("aws.inf2.48xlarge")->gpus == 12);
  CHECK(c.find("aws.p5.48xlarge")->gpus == 8);
  for (const char* tpu : {"gcp.tpu-v4", "gcp.tpu-v5e", "gcp.tpu-v5p", "gcp.tpu-v6e"}) {
    CAPTURE(tpu);
    CHECK(c.find(tpu)->gpus == 1);  // priced per chip-hour
    // The 3-year commitment is cheaper than the 1-year one, both cheaper than on demand.
    const std::string three = std::string(tpu) + ".cud_3y";
    CHECK(c.price(three, Market::reserved).usd_per_hour < c.price(tpu, Market::reserved).usd_per_hour);
    CHECK(c.price(tpu, Market::reserved).usd_per_hour < c.price(tpu, Market::on_demand).usd_per_hour);
    CHECK(c.price(three, Market::on_demand).usd_per_hour == c.price(tpu, Market::on_demand).usd_per_hour);
    // Spot is Google's listed SKU price (not the default discount), below the 1-year commitment.
    CHECK_FALSE(c.price(tpu, Market::spot).derived);
    CHECK(c.price(tpu, Market::spot).usd_per_hour < c.price(tpu, Market::reserved).usd_per_hour);
    CHECK(c.price(three, Market::spot).usd_per_hour == c.price(tpu, Market::spot).usd_per_hour);
  }
  CHECK(c.price("gcp.tpu-v5e", Market::on_demand).usd_per_hour == 1.20);
  CHECK(c.price("gcp.a3-highgpu-8g", Market::spot).usd_per_hour == 52.57);
  CHECK_FALSE(c.price("gcp.a3-highgpu-8g", Market::spot).derived);
  const InstanceType* trn2 = c.find("aws.trn2.48xlarge");
  CHECK_FALSE(trn2->sold_in(Market::spot));
  CHECK(trn2->sold_in(Market::on_demand));
  CHECK(trn2->not_sold[Market::spot].find("Capacity Blocks") != std::string::npos);
  CHECK(c.find("aws.p5.48xlarge")->sold_in(Market::spot));
}

TEST_CASE("Price overrides and parse errors", "[fleet][prices]") {
  InstancePriceCatalog c = InstancePriceCatalog::builtin();
  c.set_price("aws.p5.48xlarge", Market::spot, 30.0);
  CHECK(c.price("aws.p5.48xlarge", Market::spot).usd_per_hour == 30.0);
  CHECK(c.price("aws.p5.48xlarge", Market::spot).source == "override");
  c.set_default_discount(Market::spot, 0.5);
  CHECK(c.price("aws.p4d.24xlarge", Market::spot).usd_per_hour == Approx(32.77 / 2));
  c.set_price("my.node", Market::on_demand, 12.0, "our quote");
  CHECK(c.usd_per_hour("my.node")[Market::reserved] == Approx(12.0 * (1 - 0.4)));

  const auto error = [](const char* text) {
    try {
      InstancePriceCatalog::parse(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("{") .find("not valid JSON") != std::string::npos);
  CHECK(error(R"({"instances": {"x": {"provider": "p", "gpu": "g", "gpus": 8, "region": "r",
      "usd_per_hour": {"on_demand": {"usd": -1, "source": "s"}}}}})")
            .find("instance_prices.instances.x.usd_per_hour.on_demand.usd") != std::string::npos);
  CHECK(error(R"({"instances": {"x": {"provider": "p", "gpu": "g", "gpus": 8, "region": "r",
      "usd_per_hour": {"preemptible": {"usd": 1, "source": "s"}}}}})")
            .find("a market") != std::string::npos);
  // A price in a market the instance is not sold in, and on demand declared not sold.
  CHECK(error(R"({"instances": {"x": {"provider": "p", "gpu": "g", "gpus": 1, "region": "r",
      "not_sold": {"spot": "why"},
      "usd_per_hour": {"on_demand": {"usd": 1, "source": "s"}, "spot": {"usd": 1, "source": "s"}}}}})")
            .find("instance_prices.instances.x.usd_per_hour.spot: expected no price") != std::string::npos);
  CHECK(error(R"({"instances": {"x": {"provider": "p", "gpu": "g", "gpus": 1, "region": "r",
      "not_sold": {"on_demand": "why"}, "usd_per_hour": {"on_demand": {"usd": 1, "source": "s"}}}}})")
            .find("instance_prices.instances.x.not_sold.on_demand") != std::string::npos);
}

TEST_CASE("Storage transfers: per-node limits, the tier's cap, retrieval", "[fleet][storage]") {
  const StorageTier pfs = *storage_tier("parallel_fs");
  // 12.5 GB/s per node, 250 GB/s in all, 2 s latency.
  CHECK(pfs.write_time_s(1e12, 1) == Approx(2 + 1e12 / 12.5e9));
  CHECK(pfs.write_time_s(1e12, 10) == Approx(2 + 1e12 / 125e9));
  CHECK(pfs.write_time_s(1e12, 1000) == Approx(2 + 1e12 / 250e9));  // the tier's cap
  CHECK(pfs.write_time_s(0.0, 8) == 0.0);
  const StorageTier nvme = *storage_tier("local_nvme");
  CHECK(nvme.node_local);
  CHECK(nvme.write_time_s(1e12, 1000) == Approx(0.5 + 1e12 / (1000 * 10e9)));  // no cap
  const StorageTier archive = *storage_tier("archive");
  CHECK(archive.read_time_s(1e12, 100) == Approx(12 * 3600.0 + 5 + 1e12 / (100 * 10e9)));
  CHECK_FALSE(storage_tier("tape").has_value());
  CHECK(storage_tier_names().size() == 4);
  for (const std::string& n : storage_tier_names()) CHECK(!storage_tier(n)->source.empty());
}

TEST_CASE("Checkpoint costs: sharded vs rank 0, sync vs async", "[fleet][checkpoint]") {
  CheckpointConfig c;
  c.size_bytes = 2e12;
  c.storage = StorageTier{"t", 10e9, 20e9, 400e9, 400e9, 0.0, 0.0, false, "test"};
  // Sharded on 16 nodes: min(16 x 10, 400) GB/s = 160 GB/s -> 12.5 s.
  CHECK(c.write_s(16) == Approx(12.5));
  CHECK(c.read_s(16) == Approx(2e12 / 320e9));
  CHECK(c.blocking_s(16) == Approx(12.5));
  CHECK(c.snapshot_s(16) == 0.0);
  // Rank 0: one node's 10 GB/s -> 200 s.
  c.pattern = WritePattern::rank0;
  CHECK(c.write_s(16) == Approx(200));
  c.pattern = WritePattern::sharded;
  c.mode = CheckpointMode::async;
  // Snapshot: 2e12 / (16 x 100 GB/s) = 1.25 s blocks the job; durable after 1.25 + 12.5.
  CHECK(c.blocking_s(16) == Approx(1.25));
  CHECK(c.durable_s(16) == Approx(13.75));
  c.write_time_s = 30.0;
  CHECK(c.write_s(16) == 30.0);
}

TEST_CASE("Young/Daly interval and Daly's expected completion time", "[fleet][checkpoint]") {
  // Small C/M: Young's sqrt(2 C M) to first order.
  CHECK(young_daly_interval_s(1.0, 1e6) == Approx(std::sqrt(2e6)).epsilon(1e-3));
  // Daly's higher-order form, evaluated by hand for C = 60, M = 3600: x = 1/120,
  // sqrt(432000) x (1 + sqrt(x)/3 + x/9) - 60 = 617.9.
  const double x = 60.0 / 7200.0;
  CHECK(young_daly_interval_s(60, 3600) ==
        Approx(std::sqrt(432000.0) * (1 + std::sqrt(x) / 3 + x / 9) - 60));
  CHECK(young_daly_interval_s(8000, 3600) == 3600);  // C >= 2M: tau = M
  CHECK(std::isinf(young_daly_interval_s(60, std::numeric_limits<double>::infinity())));
  // T = M e^(R/M) (e^((tau+C)/M) - 1) W / tau.
  CHECK(daly_expected_wall_time_s(1000, 100, 10, 500, 20) ==
        Approx(500 * std::exp(20.0 / 500) * std::expm1(110.0 / 500) * 10));
  // No failures in the limit: W (tau + C) / tau.
  CHECK(daly_expected_wall_time_s(1000, 100, 10, 1e12) == Approx(1100).epsilon(1e-6));
}

TEST_CASE("The auto interval uses the run's interruption rate", "[fleet][checkpoint]") {
  TrainingRunConfig c = test::quiet_config(100, 1e6, 1.0, 30.0);
  c.checkpoint.interval_s.reset();
  c.failures.node_mtbf_s = 100 * 3600.0;  // 1 per hour for 100 nodes
  c.spot_share = 0.5;
  c.reclaims.rate.base_per_s = 0.02 / 3600.0;  // 50 spot nodes: 1 per hour
  CHECK(c.interruption_rate_per_s() == Approx(2.0 / 3600.0));
  CHECK(c.checkpoint_interval_s() == std::round(young_daly_interval_s(30.0, 1800.0)));
  // With emergency checkpoints, a reclaim whose notice (120 s) holds the 30 s write loses no
  // work: Young/Daly's M is the failures' alone.
  c.checkpoint.emergency_on_notice = true;
  c.reclaims.warning_s = 120.0;
  CHECK(c.notice_saves_work());
  CHECK(c.work_losing_rate_per_s() == Approx(1.0 / 3600.0));
  CHECK(c.checkpoint_interval_s() == std::round(young_daly_interval_s(30.0, 3600.0)));
  // A notice shorter than the write saves nothing: every interruption counts again.
  c.reclaims.warning_s = 20.0;
  CHECK_FALSE(c.notice_saves_work());
  CHECK(c.checkpoint_interval_s() == std::round(young_daly_interval_s(30.0, 1800.0)));
  // Async: never shorter than a background write.
  c.checkpoint.mode = CheckpointMode::async;
  c.checkpoint.size_bytes = 1e9;
  c.checkpoint.write_time_s = 5000.0;
  CHECK(c.checkpoint_interval_s() == 5000.0);
  // No interruptions at all: only the final checkpoint.
  TrainingRunConfig none = test::quiet_config(4, 100, 1.0, 1.0);
  none.checkpoint.interval_s.reset();
  CHECK(std::isinf(none.checkpoint_interval_s()));
  // The Llama 3 default: 2,048 nodes are interrupted every 3.1 h.
  TrainingRunConfig llama;
  llama.nodes = 2048;
  CHECK(1.0 / llama.interruption_rate_per_s() / 3600.0 == Approx(54.0 * 24 / 419).epsilon(1e-9));
}

TEST_CASE("Hour-of-day rate: exact next-event times", "[fleet][hourly_rate]") {
  HourlyRate r;
  r.base_per_s = 1.0 / 3600.0;
  // Constant rate: the next event of n members after u ~ Exp(1) is u / (n rate).
  CHECK(r.next_event(100.0, 4.0, 2.0) == Approx(100.0 + 2.0 * 3600.0 / 4.0));
  // Only hour 5 is open (rate 2/h), start at 03:30: u = 1.5 needs 45 min of hour 5.
  for (double& m : r.multiplier) m = 0.0;
  r.multiplier[5] = 2.0;
  r.start_hour = 3.5;
  CHECK(r.next_event(0.0, 1.0, 1.5) == Approx(1.5 * 3600 + 0.75 * 3600));
  // u = 5 needs two full open hours (a day each) and half of a third.
  CHECK(r.next_event(0.0, 1.0, 5.0) == Approx(1.5 * 3600 + 2 * 86400 + 0.5 * 3600));
  CHECK(r.mean_per_s() == Approx(2.0 / 24 / 3600));
  HourlyRate zero;
  CHECK(std::isinf(zero.next_event(0.0, 10.0, 1.0)));
}

TEST_CASE("Event traces read from CSV", "[fleet][trace]") {
  std::istringstream ok("# reclaims of a spot pool\ntime_s,instances\n10,1\n\n25.5,3\n");
  const EventTrace t = read_event_trace_csv(ok);
  REQUIRE(t.size() == 2);
  CHECK(t[1].time_s == 25.5);
  CHECK(t[1].instances == 3);
  std::istringstream backwards("time_s,instances\n10,1\n5,1\n");
  CHECK_THROWS_AS(read_event_trace_csv(backwards), std::invalid_argument);
  std::istringstream garbage("time_s,instances\nten,1\n");
  CHECK_THROWS_WITH(read_event_trace_csv(garbage), Catch::Contains("line 2"));
}

TEST_CASE("The cost ledger integrates step functions exactly", "[fleet][cost]") {
  CostLedger l;
  const auto a = l.open("a", Market::spot, 3.6);
  const auto b = l.open("b", Market::on_demand, 7.2);
  l.set_count(a, 0.0, 10);
  l.set_count(b, 100.0, 2);
  l.set_count(a, 1000.0, 4);
  // a: 10 x 1000 + 4 x 1000 = 14,000 instance-s at $3.6/h = $14; b: 2 x 1900 at $7.2/h.
  CHECK(l.usd(a, 2000.0) == Approx(14.0));
  CHECK(l.usd(b, 2000.0) == Approx(2 * 1900 / 3600.0 * 7.2));
  CHECK(l.usd_by_market(2000.0)[Market::spot] == Approx(14.0));
  CHECK(l.instance_hours_by_market(2000.0)[Market::on_demand] == Approx(2 * 1900 / 3600.0));
  CHECK(l.count_by_market()[Market::spot] == 4);
  CHECK_THROWS_AS(l.set_count(a, 500.0, 1), std::logic_error);
}

TEST_CASE("Configurations are validated with the field's name", "[fleet][validate]") {
  TrainingRunConfig c = test::quiet_config(8, 100, 10, 1);
  CHECK_NOTHROW(c.validate());
  const auto message = [](TrainingRunConfig bad) {
    try {
      bad.validate();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  TrainingRunConfig bad = c;
  bad.spot_share = 1.5;
  CHECK_THAT(message(bad), Catch::StartsWith("fleet.spot_share"));
  bad = c;
  bad.elastic.enabled = true;
  bad.elastic.nodes_per_replica = 3;
  CHECK_THAT(message(bad), Catch::StartsWith("fleet.elastic.nodes_per_replica"));
  bad = c;
  bad.reclaims.rate.multiplier[7] = -1;
  CHECK_THAT(message(bad), Catch::StartsWith("fleet.interruptions.hourly_profile[7]"));
  bad = c;
  bad.failures.trace = {{5, 1}, {2, 1}};
  CHECK_THAT(message(bad), Catch::StartsWith("fleet.failures.trace[1].time_s"));
  bad = c;
  bad.checkpoint.interval_s = 0.0;
  CHECK_THAT(message(bad), Catch::StartsWith("fleet.checkpoint.interval_s"));
  bad = c;
  bad.step_time_s = 0.0;
  CHECK_THAT(message(bad), Catch::StartsWith("training_run.step_time_s"));
}

TEST_CASE("Markets by name and initial nodes per market", "[fleet][market]") {
  for (const Market m : kAllMarkets) CHECK(parse_market(to_string(m)) == m);
  CHECK_FALSE(parse_market("preemptible").has_value());
  TrainingRunConfig c;
  c.nodes = 10;
  c.spot_share = 0.66;
  c.reserved_share = 0.2;
  const PerMarket<int> n = c.initial_nodes();
  CHECK(n[Market::spot] == 7);
  CHECK(n[Market::reserved] == 2);
  CHECK(n[Market::on_demand] == 1);
}
