#include "sim/fleet/fleet_config.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace cs::fleet {

PerMarket<int> FleetConfig::initial_nodes() const {
  PerMarket<int> n;
  n[Market::spot] = static_cast<int>(std::lround(spot_share * nodes));
  n[Market::reserved] = std::min(static_cast<int>(std::lround(reserved_share * nodes)),
                                 nodes - n[Market::spot]);
  n[Market::on_demand] = nodes - n[Market::spot] - n[Market::reserved];
  return n;
}

double FleetConfig::billed_usd_per_node_hour(Market m) const {
  return ownership ? owned_node_rates(*ownership).total() : usd_per_node_hour[m];
}

PerMarket<int> FleetConfig::committed_nodes() const {
  const PerMarket<int> initial = initial_nodes();
  if (ownership) return initial;
  PerMarket<int> c;
  c[Market::reserved] = initial[Market::reserved];
  return c;
}

std::optional<OwnedBilling> FleetConfig::owned_billing() const {
  if (!ownership) return std::nullopt;
  return OwnedBilling{owned_node_rates(*ownership), fabric_usd_per_hour(*ownership)};
}

double FleetConfig::failure_rate_per_s() const {
  double rate = 0.0;
  if (std::isfinite(failures.node_mtbf_s)) rate += nodes / failures.node_mtbf_s;
  const CorrelatedFailures& cf = failures.correlated;
  if (cf.domain_nodes > 0 && std::isfinite(cf.domain_mtbf_s)) {
    // Domains per market pool (a pool's slots are numbered from 0), each failing at 1 / mtbf.
    for (const Market m : kAllMarkets) {
      const int n = initial_nodes()[m];
      rate += std::ceil(static_cast<double>(n) / cf.domain_nodes) / cf.domain_mtbf_s;
    }
  }
  return rate;
}

double FleetConfig::reclaim_rate_per_s() const {
  double rate = 0.0;
  const int spot = initial_nodes()[Market::spot];
  if (spot > 0 && reclaims.trace.empty()) {
    rate += spot * reclaims.rate.mean_per_s();
    if (reclaims.correlated.pool_share > 0.0) rate += reclaims.correlated.events_per_s;
  }
  return rate;
}

void FleetConfig::validate() const {
  const auto require = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(what);
  };
  require(nodes >= 1, "fleet.nodes: expected at least 1");
  require(spot_share >= 0.0 && spot_share <= 1.0, "fleet.spot_share: expected a share in [0, 1]");
  require(reserved_share >= 0.0 && reserved_share <= 1.0 - spot_share,
          "fleet.reserved_share: expected a share in [0, 1 - spot_share]");
  for (const Market m : kAllMarkets)
    require(usd_per_node_hour[m] >= 0.0 && std::isfinite(usd_per_node_hour[m]),
            "fleet.prices." + std::string(to_string(m)) + ": expected a finite price >= 0");
  failures.validate("fleet.failures");
  reclaims.validate("fleet.interruptions");
  for (const Market m : kAllMarkets)
    provisioning[m].validate("fleet.provisioning." + std::string(to_string(m)));
  require(fallback_after_s >= 0.0, "fleet.fallback_after_s: expected a time >= 0 (inf: never)");
  if (ownership) {
    ownership->validate();
    require(spot_share == 0.0 && reserved_share == 0.0,
            "fleet.ownership: an owned fleet rents no spot or reserved nodes");
  }
}

}  // namespace cs::fleet
