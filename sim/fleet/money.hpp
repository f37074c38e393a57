#pragma once
// What a fleet cost, as a planner reads it: the total, the share of each market (rented) or of
// each term of ownership (owned: amortization, maintenance, energy, hosting, network), and the
// energy an owned fleet drew. Shared by training runs, serving pools and job clusters.
//
// A rented fleet's bill is its ledger's (cost_ledger.hpp): billed instance-hours x the
// market's price, reserved capacity billed every hour whether held or not. An owned fleet's
// accounts are priced at OwnedNodeRates::total() per instance and commit to every owned
// instance, so its bill splits exactly into the terms of ownership.hpp: each term is the billed
// instance-hours x the term's rate; the network term is the fabric's hourly cost x the hours
// of the run.
// Units: USD, kWh, hours.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/time.hpp"
#include "sim/fleet/cost_ledger.hpp"
#include "sim/fleet/market.hpp"
#include "sim/fleet/ownership.hpp"

namespace cs::fleet {

// How an owned fleet's instances are billed: the rates of one instance (a node, or a serving
// replica's share of one) and the fabric's cost per hour of the run.
struct OwnedBilling {
  OwnedNodeRates per_instance;
  double network_usd_per_hour = 0.0;
};

struct Money {
  double cost_usd = 0.0;
  PerMarket<double> usd_by_market;  // rented markets (all 0 for an owned fleet)
  bool owned = false;
  double owned_usd = 0.0;  // = cost_usd when owned
  // Terms of an owned fleet's bill (USD); they add up to owned_usd.
  double amortization = 0.0, maintenance = 0.0, energy = 0.0, hosting = 0.0, network = 0.0;
  double energy_kwh = 0.0;  // facility energy of the owned nodes (IT power x PUE)

  Money& operator+=(const Money& other);
  // The summary's money numbers, named "<group>.<name>": cost_usd_by_market.<market> (and
  // .owned for an owned fleet), cost_breakdown_usd.<term> (owned: amortization, maintenance,
  // energy, hosting, network; rented: one per market), and energy_kwh for an owned fleet.
  std::vector<std::pair<std::string, double>> summary_numbers() const;
};

// The bill of `ledger` at time t, for a run of run_hours (the fabric's term).
Money money(const CostLedger& ledger, engine::Time t, const std::optional<OwnedBilling>& owned,
            double run_hours);

}  // namespace cs::fleet
