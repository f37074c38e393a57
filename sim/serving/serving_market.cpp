#include "sim/serving/serving_market.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/fleet/instance_prices.hpp"

namespace cs::serving {

fleet::PerMarket<double> replica_prices(std::string_view instance, int gpus) {
  const fleet::InstancePriceCatalog& catalog = fleet::InstancePriceCatalog::builtin();
  const fleet::InstanceType* type = catalog.find(instance);
  if (!type) throw std::out_of_range("replica_prices: unknown instance " + std::string(instance));
  fleet::PerMarket<double> prices = catalog.usd_per_hour(instance);
  const double share = static_cast<double>(gpus) / static_cast<double>(std::max(1, type->gpus));
  for (const fleet::Market m : fleet::kAllMarkets) prices[m] *= share;
  return prices;
}

fleet::FailureConfig no_failures() {
  fleet::FailureConfig f;
  f.node_mtbf_s = std::numeric_limits<double>::infinity();
  f.causes.clear();
  return f;
}

void validate_market(const MarketSpec& spec) {
  if (!(spec.spot_share >= 0 && spec.spot_share <= 1))
    throw std::invalid_argument("fleet.market: the spot share must be in [0, 1]");
  if (spec.reserved_replicas < 0) throw std::invalid_argument("fleet.reserved: must be >= 0 replicas");
  if (spec.ownership) {
    spec.ownership->validate();
    if (spec.reserved_replicas > 0 || spec.spot_share > 0 || spec.owned_replicas < 0 || !(spec.node_share > 0))
      throw std::invalid_argument("fleet.ownership: an owned pool rents no spot or reserved replicas");
  }
  for (const fleet::Market m : fleet::kAllMarkets)
    if (!(spec.usd_per_hour[m] >= 0) || !std::isfinite(spec.usd_per_hour[m]))
      throw std::invalid_argument("fleet.prices." + std::string(fleet::to_string(m)) + ": must be a finite price >= 0");
  if (spec.serverless) {
    const ServerlessSpec& sl = *spec.serverless;
    if (spec.ownership || spec.reserved_replicas > 0 || spec.spot_share > 0)
      throw std::invalid_argument("fleet.market: a serverless pool rents no spot or reserved replicas and owns none");
    if (!(sl.idle_timeout_s >= 0)) throw std::invalid_argument("fleet.serverless.idle_timeout: must be >= 0");
    if (sl.min_replicas < 0 || sl.max_replicas < 1 || sl.min_replicas > sl.max_replicas)
      throw std::invalid_argument("fleet.serverless: expected 0 <= min <= max and max >= 1");
    if (sl.requests_per_replica < 1) throw std::invalid_argument("fleet.serverless: a replica takes at least 1 request");
    if (!(spec.usd_per_hour[fleet::Market::serverless] > 0))
      throw std::invalid_argument("fleet.serverless.price: must be > 0");
  }
  if (!(spec.fallback_after_s >= 0))
    throw std::invalid_argument("fleet.interruptions.fallback_after: must be >= 0");
  spec.reclaims.validate("fleet.interruptions");
  spec.failures.validate("fleet.failures");
}

double MarketSpec::price_per_hour(fleet::Market m) const {
  return ownership ? owned_billing()->per_instance.total() : usd_per_hour[m];
}

std::optional<fleet::OwnedBilling> MarketSpec::owned_billing() const {
  if (!ownership) return std::nullopt;
  return fleet::OwnedBilling{fleet::owned_node_rates(*ownership).scaled(node_share), fleet::fabric_usd_per_hour(*ownership)};
}

fleet::PerMarket<int> MarketSpec::committed() const {
  fleet::PerMarket<int> c;
  if (ownership) c[fleet::Market::on_demand] = owned_replicas;
  else c[fleet::Market::reserved] = reserved_replicas;
  return c;
}

fleet::Market market_for_launch(const MarketSpec& spec, const fleet::PerMarket<int>& active) {
  int total = 0;
  for (const fleet::Market m : fleet::kAllMarkets) total += active[m];
  const auto below_share = [&](fleet::Market m, double share) {
    return share > 0 && active[m] + 1 <= share * (total + 1) + 1e-9;
  };
  if (spec.serverless) return fleet::Market::serverless;
  if (active[fleet::Market::reserved] < spec.reserved_replicas) return fleet::Market::reserved;
  if (below_share(fleet::Market::spot, spec.spot_share)) return fleet::Market::spot;
  return fleet::Market::on_demand;
}

}  // namespace cs::serving
