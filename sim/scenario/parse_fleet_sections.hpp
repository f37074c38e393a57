#pragma once
// Internal: the fleet section's keys that training runs and serving fleets share
// (parse_fleet.cpp), and the serving workload and fleet (parse_serving*.cpp). Each reads its
// part of the (schema-valid, number-normalized) document and reports errors at their paths.
#include <string>

#include "sim/fleet/failures.hpp"
#include "sim/fleet/instance_prices.hpp"
#include "sim/fleet/market.hpp"
#include "sim/fleet/spot_reclaims.hpp"
#include "sim/scenario/config.hpp"
#include "sim/scenario/parse_util.hpp"

namespace cs::serving {
struct PoolSpec;
}

namespace cs::scenario::detail {

// fleet.market: shares of the fleet per market (on demand takes the rest).
struct MarketShares {
  double spot = 0.0;
  double reserved = 0.0;
  bool serverless = false;  // "serverless": a serving fleet's, per GPU-second (parse_serverless.cpp)
};
MarketShares parse_market(const json& fleet);

// fleet.instance: a price catalog entry (data/instance_prices.json), `default_name` when
// absent. Errors: an unknown name, a given instance whose accelerator is not hardware.gpu (at
// fleet.instance, naming the instance that has it), and a market in `buys` the instance is not
// sold in (at fleet.market or fleet.reserved, naming the nearest valid choice).
const fleet::InstanceType& parse_instance(const json& fleet, const Config& config, const std::string& default_name,
                                          const fleet::PerMarket<bool>& buys);
// The catalog's first instance (by name) whose accelerator is `gpu`, or "" when none has it.
std::string instance_with_gpu(const std::string& gpu);
// fleet.prices: each market given replaces its entry of `usd_per_hour` (USD per hour of the
// fleet's unit: a node for a training run, a replica for a serving fleet).
void parse_price_overrides(const json& fleet, fleet::PerMarket<double>& usd_per_hour);
// Spot and reserved prices neither in `usd_per_hour` (> 0) nor given in fleet.prices: on
// demand less the price catalog's default discount of that market.
void derive_unpriced_markets(const json& fleet, fleet::PerMarket<double>& usd_per_hour);
// fleet.interruptions and fleet.failures into the fleet library's configurations.
void parse_interruptions(const json& fleet, fleet::SpotReclaimConfig& reclaims, double& fallback_after_s);
void parse_failures(const json& fleet, fleet::FailureConfig& failures);

// fleet.serverless and the serverless market's rules (parse_serverless.cpp), after the pool's
// cold start: a serverless pool's price, scaling and the provider's cold start defaults. An
// error when fleet.serverless is given without the market.
void parse_serverless(const json& fleet, const MarketShares& shares, const Config& config, serving::PoolSpec& pool);
// The keys a serverless pool does not take (autoscaler, reserved, prices, instance,
// interruptions) and disaggregated serving: errors at their paths, before anything is parsed.
void check_serverless_keys(const json& fleet, const Config& config);

// workload.* of a serving workload (parse_serving.cpp), after hardware and topology.
void parse_serving_workload(const json& workload, const std::string& at, Config& config);
// fleet.* of a serving workload and the run keys it uses (parse_serving_fleet.cpp), after run.
void parse_serving_fleet(const json& doc, Config& config);

}  // namespace cs::scenario::detail
