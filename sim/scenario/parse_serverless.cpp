// fleet.market "serverless" of a serving workload: fleet.serverless (provider, price,
// idle_timeout, min, max) into the pool's market, the provider's cold start defaults, and the
// keys a serverless pool does not take.
#include <string>

#include "sim/fleet/serverless_prices.hpp"
#include "sim/scenario/parse_fleet_sections.hpp"
#include "sim/scenario/suggest.hpp"
#include "sim/serving/replica_pool.hpp"

namespace cs::scenario::detail {
namespace {

constexpr double kSecondsPerHour = 3600.0;
constexpr int kMaxServerlessReplicas = 100'000;

// The provider that sells hardware.gpu: the one given, else modal, else the first that does.
const fleet::ServerlessProvider& provider_for(const json& sl, const Config& config, bool price_given) {
  const auto& catalog = fleet::ServerlessCatalog::builtin();
  const std::string at = join_path(kFleet, "serverless");
  const std::vector<std::string> selling = catalog.selling(config.gpu.name);
  const std::string fallback = selling.empty() ? "modal" : selling.front();
  const std::string name = get_string(sl, "provider", at, member(sl, "provider") || !catalog.find("modal") ||
                                                                   !catalog.find("modal")->price(config.gpu.name)
                                                               ? fallback
                                                               : "modal");
  const fleet::ServerlessProvider* p = catalog.find(name);
  if (!p)
    throw InputError(join_path(at, "provider"), "one of " + quoted_list(catalog.names()) + "; got \"" + name + "\"",
                     nearest(name, catalog.names()) ? did_you_mean(name, catalog.names()) : "");
  if (!p->price(config.gpu.name) && !price_given)
    throw InputError(member(sl, "provider") ? join_path(at, "provider") : join_path(kFleet, "market"),
                     name + " sells no serverless " + config.gpu.name + " GPUs (hardware.gpu)",
                     selling.empty() ? "no provider in the serverless catalog sells " + config.gpu.name +
                                           ": buy it \"on_demand\", or give fleet.serverless.price"
                                     : "use provider \"" + selling.front() + "\", or give fleet.serverless.price");
  return *p;
}

}  // namespace

void check_serverless_keys(const json& f, const Config& config) {
  // What a serverless platform decides, or does not sell.
  const std::pair<const char*, const char*> not_taken[] = {
      {"autoscaler", "the platform scales by requests: give fleet.serverless.min and max"},
      {"reserved", "a serverless pool commits nothing: give fleet.serverless.min (replicas kept warm)"},
      {"prices", "a serverless GPU's price is fleet.serverless.price, per GPU-second"},
      {"instance", "a serverless pool buys GPUs from fleet.serverless.provider, not an instance"},
      {"interruptions", "serverless replicas are never reclaimed"},
      {"prefill_autoscaler", "a serverless pool serves unified replicas"},
  };
  for (const auto& [key, why] : not_taken)
    if (member(f, key)) throw InputError(join_path(kFleet, key), std::string("not with fleet.market \"serverless\": ") + why);
  if (config.serving.disaggregated.enabled)
    throw InputError(join_path(kFleet, "market"), "a serverless pool serves unified replicas, not disaggregated prefill and decode",
                     "leave out workload.disaggregated, or buy on_demand");
}

void parse_serverless(const json& f, const MarketShares& shares, const Config& config, serving::PoolSpec& pool) {
  const std::string at = join_path(kFleet, "serverless");
  if (!shares.serverless) {
    if (member(f, "serverless"))
      throw InputError(at, "applies to a serverless pool", "set fleet.market to \"serverless\", or leave this out");
    return;
  }
  const json& sl = object_or_empty(f, "serverless", kFleet);
  const fleet::ServerlessProvider& p = provider_for(sl, config, member(sl, "price") != nullptr);
  serving::ServerlessSpec spec;
  spec.idle_timeout_s = get_quantity(sl, "idle_timeout", at, QuantityKind::time, Sign::non_negative, p.idle_timeout_s.value);
  spec.min_replicas = static_cast<int>(get_int(sl, "min", at, 0, 0, kMaxServerlessReplicas));
  spec.max_replicas = static_cast<int>(get_int(sl, "max", at, spec.max_replicas, 1, kMaxServerlessReplicas));
  if (spec.min_replicas > spec.max_replicas)
    throw InputError(join_path(at, "min"), "at most max (" + std::to_string(spec.max_replicas) + ")");
  const serving::ReplicaConfig& r = config.serving.replica;
  spec.requests_per_replica = r.kind == serving::ReplicaKind::llm ? r.llm.batching.max_num_seqs : r.server.concurrency;
  const fleet::SourcedValue* listed = p.price(config.gpu.name);
  const double usd_per_gpu_s =
      get_quantity(sl, "price", at, QuantityKind::money_rate, Sign::positive, listed ? listed->value : 0.0);
  pool.market.usd_per_hour[fleet::Market::serverless] = usd_per_gpu_s * kSecondsPerHour * r.gpus();
  pool.market.serverless = spec;
  // The platform's container start and image pull, unless given; the model load stays the
  // replica's (its weights over the storage bandwidth).
  const json& cold = object_or_empty(f, "cold_start", kFleet);
  if (!member(cold, "boot")) pool.cold_start.node_boot = sources::Distribution::constant(p.container_start_s.value);
  if (!member(cold, "image_pull")) pool.cold_start.image_pull = sources::Distribution::constant(p.image_pull_s.value);
}

}  // namespace cs::scenario::detail
