// Money as a planner reads it: reserved capacity billed every hour of the run whether used or
// not, owned nodes priced term by term (ownership.hpp's formula, worked by hand), the fabric
// amortized with them, and the breakdown adding up to the total.
#include <catch2/catch.hpp>

#include <cmath>

#include "fleet_test_support.hpp"
#include "sim/fleet/cost_ledger.hpp"
#include "sim/fleet/money.hpp"
#include "sim/fleet/ownership.hpp"
#include "sim/fleet/training_run.hpp"

using namespace cs::fleet;
using cs::fleet::test::kHour;
using cs::fleet::test::quiet_config;

namespace {

// An 8-GPU H100 server bought for $250k, amortized over 4 years, 10% a year of maintenance,
// 10.2 kW at load in a PUE 1.5 hall at $0.10/kWh, hosted at $150 per kW-month.
OwnershipConfig dgx_owned() {
  OwnershipConfig o;
  o.node_price_usd = 250000.0;
  o.years = 4.0;
  o.maintenance = 0.1;
  o.power_w = 10200.0;
  o.pue = 1.5;
  o.energy_usd_per_kwh = 0.10;
  o.hosting_usd_per_kw_month = 150.0;
  return o;
}

double breakdown_sum(const Money& m) { return m.amortization + m.maintenance + m.energy + m.hosting + m.network; }

}  // namespace

TEST_CASE("An owned node's hourly cost, term by term, by hand", "[fleet][money]") {
  const OwnedNodeRates r = owned_node_rates(dgx_owned());
  CHECK(r.amortization == Approx(250000.0 / (4 * 8760.0)));  // $7.135/h
  CHECK(r.maintenance == Approx(25000.0 / 8760.0));          // $2.854/h
  CHECK(r.energy == Approx(10.2 * 1.5 * 0.10));               // $1.530/h
  CHECK(r.hosting == Approx(10.2 * 150.0 * 12 / 8760.0));     // $2.096/h
  CHECK(r.total() == Approx(7.1347 + 2.8539 + 1.53 + 2.0959).epsilon(1e-4));
  CHECK(r.facility_kw == Approx(15.3));
  const OwnedNodeRates half = r.scaled(0.5);
  CHECK(half.total() == Approx(r.total() / 2));
  OwnershipConfig with_fabric = dgx_owned();
  with_fabric.fabric_usd = 1.0e6;
  CHECK(fabric_usd_per_hour(with_fabric) == Approx(1.0e6 / (4 * 8760.0)));
}

TEST_CASE("data/ownership.json prices MI300X nodes and sells no TPU, Trainium or Inferentia",
          "[fleet][money]") {
  const OwnershipDefaults& d = OwnershipDefaults::builtin();
  CHECK(d.node_price_usd("MI300X", 8) == Approx(175000.0));  // an estimate, with its source there
  CHECK(d.node_price_usd("MI300X", 4) == Approx(87500.0));
  CHECK_FALSE(d.not_sold("H100-SXM").has_value());
  CHECK_FALSE(d.not_sold("MI300X").has_value());
  for (const char* gpu : {"TPU-v4", "TPU-v5e", "TPU-v5p", "TPU-v6e", "Trainium1", "Trainium2", "Inferentia2"}) {
    CAPTURE(gpu);
    REQUIRE(d.not_sold(gpu).has_value());
    CHECK(d.not_sold(gpu)->find("does not sell") != std::string::npos);
    CHECK_FALSE(d.node_price_usd(gpu, 8).has_value());
  }
}

TEST_CASE("Ownership fields out of range name their path", "[fleet][money][validate]") {
  const auto message = [](const OwnershipConfig& o) {
    try {
      o.validate();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(message(dgx_owned()).empty());
  OwnershipConfig bad = dgx_owned();
  bad.pue = 0.9;
  CHECK_THAT(message(bad), Catch::StartsWith("fleet.ownership.pue"));
  bad = dgx_owned();
  bad.years = 0.0;
  CHECK_THAT(message(bad), Catch::StartsWith("fleet.ownership.years"));
  bad = dgx_owned();
  bad.node_price_usd = -1.0;
  CHECK_THAT(message(bad), Catch::StartsWith("fleet.ownership.node_price"));
  bad = dgx_owned();
  bad.energy_usd_per_kwh = std::nan("");
  CHECK_THAT(message(bad), Catch::StartsWith("fleet.ownership.energy_price"));
}

TEST_CASE("The ledger bills a commitment every hour, held or not", "[fleet][money][cost]") {
  CostLedger ledger;
  const auto id = ledger.open("reserved", Market::reserved, 6.0);
  ledger.set_committed(id, 0.0, 4);
  ledger.set_count(id, 0.0, 0);  // nothing held for an hour
  ledger.set_count(id, kHour, 6);  // then more than committed for an hour
  ledger.set_count(id, 2 * kHour, 2);
  ledger.set_committed(id, 3 * kHour, 0);  // the run ends
  CHECK(ledger.instance_seconds(id, 4 * kHour) / kHour == Approx(0 + 6 + 2 + 2));
  CHECK(ledger.billed_seconds(id, 4 * kHour) / kHour == Approx(4 + 6 + 4 + 2));
  CHECK(ledger.usd(id, 4 * kHour) == Approx(16 * 6.0));
  CHECK(ledger.billed_hours(4 * kHour) == Approx(16.0));
}

TEST_CASE("Reserved nodes are billed for the whole run even while failed", "[fleet][money][training_run]") {
  TrainingRunConfig c = quiet_config(10, 200 * kHour, 10 * kHour, 60.0);
  c.reserved_share = 0.4;  // 4 nodes reserved at $6/h, 6 on demand at $10/h
  c.failures.node_mtbf_s = 100 * kHour;
  c.failures.replacement = cs::sources::Distribution::constant(5 * kHour);
  const TrainingRunResult r = run_training(c, 7);
  REQUIRE(r.completed);
  REQUIRE(r.node_failures > 0);
  const double wall_h = r.wall_time_s / kHour;
  CHECK(r.node_hours_by_market[Market::reserved] < 4 * wall_h);  // failed nodes were not held
  CHECK(r.cost_usd_by_market[Market::reserved] == Approx(4 * wall_h * 6.0));
  CHECK(r.cost_usd_by_market[Market::on_demand] == Approx(r.node_hours_by_market[Market::on_demand] * 10.0));
  CHECK(r.cost_usd == Approx(r.cost_usd_by_market[Market::reserved] + r.cost_usd_by_market[Market::on_demand]));
  // Rented: the breakdown is the markets'.
  CHECK_FALSE(r.money.owned);
  double numbers = 0.0;
  for (const auto& [name, usd] : r.money.summary_numbers())
    if (name.rfind("cost_breakdown_usd.", 0) == 0) numbers += usd;
  CHECK(numbers == Approx(r.cost_usd));
}

TEST_CASE("An owned training run costs the formula x nodes x hours, fabric included", "[fleet][money][training_run]") {
  for (const double fabric_usd : {0.0, 3.0e6}) {
    TrainingRunConfig c = quiet_config(16, 100 * kHour, 10 * kHour, 60.0);
    c.tokens_per_step = 4.0e6;
    c.ownership = dgx_owned();
    c.ownership->fabric_usd = fabric_usd;
    c.failures.node_mtbf_s = 200 * kHour;  // failed nodes are still owned: billed
    c.failures.replacement = cs::sources::Distribution::constant(kHour);
    const TrainingRunResult r = run_training(c, 11);
    REQUIRE(r.completed);
    const double wall_h = r.wall_time_s / kHour;
    const OwnedNodeRates rates = owned_node_rates(*c.ownership);
    INFO("fabric $" << fabric_usd << ", wall " << wall_h << " h");
    CHECK(r.money.owned);
    CHECK(r.money.amortization == Approx(16 * wall_h * 250000.0 / (4 * 8760.0)));
    CHECK(r.money.maintenance == Approx(16 * wall_h * 25000.0 / 8760.0));
    CHECK(r.money.energy == Approx(16 * wall_h * 10.2 * 1.5 * 0.10));
    CHECK(r.money.hosting == Approx(16 * wall_h * 10.2 * 150.0 * 12 / 8760.0));
    CHECK(r.money.network == Approx(wall_h * fabric_usd / (4 * 8760.0)).margin(1e-9));
    CHECK(r.money.energy_kwh == Approx(16 * wall_h * 15.3));
    CHECK(r.cost_usd == Approx(16 * wall_h * rates.total() + wall_h * fabric_usd / (4 * 8760.0)));
    CHECK(breakdown_sum(r.money) == Approx(r.cost_usd));
    // 100 h of 1 s steps, 4M tokens each: 1.44e12 tokens.
    CHECK(r.tokens == Approx(100 * kHour * 4.0e6));
    double per_billion = 0.0;
    for (const auto& [name, v] : r.summary_numbers())
      if (name == "cost_per_billion_tokens_usd") per_billion = v;
    CHECK(per_billion == Approx(r.cost_usd / 1440.0));
  }
}
