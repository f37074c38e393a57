#pragma once
// Where a serving pool's replicas are bought and what they cost: the fleet's markets
// (market.hpp), price catalog (instance_prices.hpp), spot reclaim process (spot_reclaims.hpp)
// and failures (failures.hpp), the same model a training run's nodes live in.
//
// Each replica holds one instance of its market's fleet::InstancePool from its launch to its
// stop, so one instance is one replica, priced per replica-hour; the reclaim and failure rates
// apply per replica. A launch goes to the reserved market while fewer than reserved_replicas
// reserved replicas are active, then to spot below spot_share, else on demand
// (market_for_launch). The reserved replicas are committed for the whole run: billed every hour
// whether running or not. An owned pool (owned set) rents nothing: its replicas are priced at
// their share of an owned node (money.hpp) and the owned_replicas it bought are billed every
// hour of the run. A launch finds capacity at once; the replacement of a replica that was
// reclaimed waits for spot capacity to come back (reclaims.capacity_return), or is bought on
// demand after fallback_after_s; the replacement of a failed replica comes after
// failures.replacement.
//
// A serverless pool (serverless set) buys every replica in the serverless market, per second
// at usd_per_hour[serverless] (the provider's price per GPU-second x 3600 x the replica's GPUs),
// from its start to its stop; the platform scales it by requests (serverless_scaling.hpp), not
// an autoscaler; it rents no spot or reserved replicas and owns none.
//
// Prices default to the catalog's aws.p5.48xlarge (8 x H100) per GPU, for a one-GPU replica:
// replica_prices() scales an instance's prices by the replica's share of its GPUs.
// Units: USD per replica-hour, seconds, shares in [0, 1].
#include <limits>
#include <optional>
#include <string_view>

#include "sim/fleet/failures.hpp"
#include "sim/fleet/market.hpp"
#include "sim/fleet/money.hpp"
#include "sim/fleet/spot_reclaims.hpp"

namespace cs::serving {

// USD per replica-hour per market for a replica of `gpus` GPUs on `instance` of the built-in
// catalog: the instance's price x gpus / its GPUs (a market it does not list is derived, as
// the catalog does). Throws std::out_of_range for an unknown instance.
fleet::PerMarket<double> replica_prices(std::string_view instance, int gpus);

// No failures: a serving fleet's default (fleet.failures turns them on).
fleet::FailureConfig no_failures();

// A serverless platform's scaling (serverless_scaling.hpp). Units: seconds, replicas.
struct ServerlessSpec {
  double idle_timeout_s = 60;    // an idle replica stops after this long (Modal's default)
  int min_replicas = 0;          // kept warm, billed, even when idle (Modal min_containers)
  int max_replicas = 100;        // the platform's limit (Modal max_containers, RunPod max workers)
  int requests_per_replica = 1;  // a replica's slots: what one starting replica will take
};

struct MarketSpec {
  fleet::PerMarket<double> usd_per_hour = replica_prices("aws.p5.48xlarge", 1);
  double spot_share = 0;      // of the replicas, in [0, 1]
  int reserved_replicas = 0;  // committed for the whole run, used first
  std::optional<fleet::OwnershipConfig> ownership;  // per node; nullopt: rented
  double node_share = 1;      // of an owned node one replica holds
  int owned_replicas = 0;     // bought (billed every hour) when owned
  fleet::SpotReclaimConfig reclaims;          // of spot replicas (the fleet's defaults)
  fleet::FailureConfig failures = no_failures();
  double fallback_after_s = std::numeric_limits<double>::infinity();  // never, as the fleet's
  std::optional<ServerlessSpec> serverless;   // set: every replica is bought serverless

  // What a replica of market m is billed per hour (the owned rate when owned).
  double price_per_hour(fleet::Market m) const;
  // Per replica: the owned node's rates x node_share, and the fabric's (nullopt: rented).
  std::optional<fleet::OwnedBilling> owned_billing() const;
  // Replicas billed every hour of the run per market, running or not.
  fleet::PerMarket<int> committed() const;
};

// Throws std::invalid_argument naming the field.
void validate_market(const MarketSpec& spec);

// The market of the next launch, given the active replicas per market (serverless for a
// serverless pool; else reserved while below reserved_replicas, then spot while below its share
// of the pool after the launch; on demand otherwise).
fleet::Market market_for_launch(const MarketSpec& spec, const fleet::PerMarket<int>& active);

}  // namespace cs::serving
