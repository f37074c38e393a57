#pragma once
// The nodes a fleet holds and what happens to them: how many, in which markets and at what
// prices, how they fail, how spot capacity is reclaimed and how long a new one takes to come.
// One configuration for every owner of nodes: a long training run (training_run_config.hpp)
// and a shared cluster's job scheduler (jobs_config.hpp) both start from it, and the scenario
// layer fills it with one set of parsers.
//
// Nodes are split between markets by shares: round(spot_share x nodes) spot,
// round(reserved_share x nodes) reserved, the rest on demand (initial_nodes()). Each market is
// one InstancePool (instance_pool.hpp) with these failures and, for spot, these reclaims.
// Reserved nodes are committed for the whole run: billed every hour whether held or not.
// An owned fleet (ownership set) rents nothing: its nodes are all on demand in the model (never
// reclaimed), priced at the ownership rates (ownership.hpp) and committed like reserved ones.
// Units: seconds, USD per node-hour, rates per second.
#include <limits>
#include <optional>

#include "sim/fleet/failures.hpp"
#include "sim/fleet/market.hpp"
#include "sim/fleet/money.hpp"
#include "sim/fleet/ownership.hpp"
#include "sim/fleet/spot_reclaims.hpp"
#include "sim/sources/distribution.hpp"

namespace cs::fleet {

struct FleetConfig {
  int nodes = 1;
  double spot_share = 0.0;      // of the nodes, in the spot market
  double reserved_share = 0.0;  // of the nodes, reserved; the rest on demand
  PerMarket<double> usd_per_node_hour;  // price of one node per market (instance_prices.hpp)

  FailureConfig failures;
  SpotReclaimConfig reclaims;
  // Delay of a new instance per market (the on-demand fallback uses it). Estimate: 5 min to
  // boot a GPU instance with its fabric drivers.
  PerMarket<sources::Distribution> provisioning{
      {sources::Distribution::constant(300.0), sources::Distribution::constant(300.0), sources::Distribution::constant(300.0)}};
  double fallback_after_s = std::numeric_limits<double>::infinity();  // spot -> on demand
  std::optional<OwnershipConfig> ownership;  // owned instead of rented

  // The price a node of market m is billed at (the ownership rate when owned).
  double billed_usd_per_node_hour(Market m) const;
  // Nodes billed every hour of the run per market, held or not: the reserved ones, or every
  // node of an owned fleet.
  PerMarket<int> committed_nodes() const;
  std::optional<OwnedBilling> owned_billing() const;

  // Nodes per market at the start (the shares rounded; on demand takes the remainder).
  PerMarket<int> initial_nodes() const;
  // Interruptions per second of work on all `nodes`: failures (node failures of every cause,
  // failure domains) and reclaims (independent and correlated spot reclaims); their sum.
  double failure_rate_per_s() const;
  double reclaim_rate_per_s() const;
  double interruption_rate_per_s() const { return failure_rate_per_s() + reclaim_rate_per_s(); }
  // Throws std::invalid_argument naming the field ("fleet.<field>") on anything out of range.
  void validate() const;
};

}  // namespace cs::fleet
