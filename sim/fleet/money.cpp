#include "sim/fleet/money.hpp"

namespace cs::fleet {

Money& Money::operator+=(const Money& o) {
  cost_usd += o.cost_usd;
  for (const Market m : kAllMarkets) usd_by_market[m] += o.usd_by_market[m];
  owned = owned || o.owned;
  owned_usd += o.owned_usd;
  amortization += o.amortization;
  maintenance += o.maintenance;
  energy += o.energy;
  hosting += o.hosting;
  network += o.network;
  energy_kwh += o.energy_kwh;
  return *this;
}

std::vector<std::pair<std::string, double>> Money::summary_numbers() const {
  std::vector<std::pair<std::string, double>> v;
  for (const Market m : kAllMarkets) v.emplace_back("cost_usd_by_market." + std::string(to_string(m)), usd_by_market[m]);
  if (owned) {
    v.emplace_back("cost_usd_by_market.owned", owned_usd);
    for (const auto& [name, usd] : {std::pair{"amortization", amortization}, {"maintenance", maintenance},
                                    {"energy", energy}, {"hosting", hosting}, {"network", network}})
      v.emplace_back(std::string("cost_breakdown_usd.") + name, usd);
    v.emplace_back("energy_kwh", energy_kwh);
  } else {
    for (const Market m : kAllMarkets) v.emplace_back("cost_breakdown_usd." + std::string(to_string(m)), usd_by_market[m]);
  }
  return v;
}

Money money(const CostLedger& ledger, engine::Time t, const std::optional<OwnedBilling>& owned,
            double run_hours) {
  Money out;
  if (!owned) {
    out.usd_by_market = ledger.usd_by_market(t);
    for (const Market m : kAllMarkets) out.cost_usd += out.usd_by_market[m];
    return out;
  }
  const double hours = ledger.billed_hours(t);
  const OwnedNodeRates& r = owned->per_instance;
  out.owned = true;
  out.amortization = hours * r.amortization;
  out.maintenance = hours * r.maintenance;
  out.energy = hours * r.energy;
  out.hosting = hours * r.hosting;
  out.network = run_hours * owned->network_usd_per_hour;
  out.energy_kwh = hours * r.facility_kw;
  out.owned_usd = out.amortization + out.maintenance + out.energy + out.hosting + out.network;
  out.cost_usd = out.owned_usd;
  return out;
}

}  // namespace cs::fleet
