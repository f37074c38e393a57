// The fleet section of a serving workload (autoscaler, cold_start, instance, market, prices,
// interruptions, failures, balancer and the balancer queue's limits) and the run keys it uses,
// into cs::serving::ServingConfig. The market, price, interruption and failure keys are read by
// the parsers training runs use (parse_fleet.cpp): one fleet model for both.
#include <cmath>
#include <limits>
#include <stdexcept>

#include "sim/fleet/instance_prices.hpp"
#include "sim/scenario/parse_autoscaler.hpp"
#include "sim/scenario/parse_fleet_sections.hpp"
#include "sim/scenario/parse_fleet_values.hpp"
#include "sim/scenario/parse_sections.hpp"
#include "sim/scenario/quantity_range.hpp"
#include "sim/serving/serving_fleet.hpp"

namespace cs::scenario::detail {
namespace {

constexpr double kDefaultUntil_s = 3600.0;
constexpr double kDefaultInterval_s = 60.0;
// Beyond these a replication takes minutes or gigabytes: refused up front.
constexpr double kMaxExpectedArrivals = 2e9;
constexpr double kMaxSamples = 1e6;

// The share of a node (hardware.node) one replica holds: an LLM server's GPUs / the node's; a
// plain server is one node.
double replica_node_share(const Config& config) {
  const int gpus = config.serving.replica.gpus();
  const bool llm = config.serving.replica.kind == serving::ReplicaKind::llm;
  return llm && gpus > 0 ? double(gpus) / double(config.topology.node.gpus) : 1.0;
}

// Prices per replica-hour: the instance's per GPU x the replica's GPUs; fleet.prices, per
// node-hour as docs/scenarios.md states them (a node: hardware.node.gpus GPUs), x the share of a
// node one replica holds (an LLM server: its GPUs / the node's; a plain server is one node).
fleet::PerMarket<double> replica_prices(const json& f, const Config& config, const serving::MarketSpec& market) {
  const int gpus = config.serving.replica.gpus();
  const double node_share = replica_node_share(config);
  const std::string by_gpu = instance_with_gpu(config.gpu.name);
  const json& prices = object_or_empty(f, "prices", kFleet);
  fleet::PerMarket<double> usd;
  if (member(f, "instance") || !by_gpu.empty()) {
    fleet::PerMarket<bool> buys;
    buys[fleet::Market::on_demand] = true;
    buys[fleet::Market::spot] = market.spot_share > 0;
    buys[fleet::Market::reserved] = market.reserved_replicas > 0;
    usd = serving::replica_prices(parse_instance(f, config, by_gpu, buys).name, gpus);
  } else if (!member(prices, "on_demand")) {
    throw InputError(join_path(kFleet, "prices.on_demand"),
                     "required: no instance in the price catalog has " + config.gpu.name + " GPUs",
                     "give the price of one node (hardware.node) per hour, e.g. \"$20/h\" (spot and reserved then "
                     "default to the catalog's discounts)");
  }
  fleet::PerMarket<double> per_node = usd;
  parse_price_overrides(f, per_node);
  for (const fleet::Market m : fleet::kAllMarkets)
    if (member(prices, fleet::to_string(m))) usd[m] = per_node[m] * node_share;
  derive_unpriced_markets(f, usd);  // markets neither listed nor given
  return usd;
}

serving::ColdStartSpec parse_cold_start(const json& f, const Config& config) {
  const std::string at = join_path(kFleet, "cold_start");
  const json& cs = object_or_empty(f, "cold_start", kFleet);
  serving::ColdStartSpec spec;
  spec.node_boot = get_distribution(cs, "boot", at, spec.node_boot);
  spec.image_pull = get_distribution(cs, "image_pull", at, spec.image_pull);
  spec.warmup = get_distribution(cs, "warmup", at, spec.warmup);
  const bool llm = config.serving.replica.kind == serving::ReplicaKind::llm;
  // The weights a new replica loads: the model's (an LLM server), or model_bytes.
  spec.model_bytes = llm ? config.serving.replica.llm.timing.model.weight_bytes() : 0.0;
  if (member(cs, "model_load")) {
    if (member(cs, "model_bytes") || member(cs, "storage_bandwidth"))
      throw InputError(join_path(at, "model_load"), "give model_load (a time), or model_bytes and storage_bandwidth, not both");
    spec.model_load = get_distribution(cs, "model_load", at, spec.model_load);
    spec.model_bytes = 0;
  }
  spec.model_bytes = get_quantity(cs, "model_bytes", at, QuantityKind::bytes, Sign::non_negative, spec.model_bytes);
  spec.storage_bandwidth = sources::Distribution::constant(
      get_quantity(cs, "storage_bandwidth", at, QuantityKind::bandwidth, Sign::positive, spec.storage_bandwidth.mean));
  return spec;
}

serving::PoolSpec parse_pool(const json& f, const Config& config) {
  serving::PoolSpec pool;
  pool.balance = get_choice(f, "balancer", kFleet, serving::kBalancePolicyNames, pool.balance);
  if (member(f, "max_queue")) pool.max_queue = static_cast<std::size_t>(get_int(f, "max_queue", kFleet, 0, 0, INT64_C(1) << 40));
  pool.queue_timeout_s =
      get_quantity(f, "queue_timeout", kFleet, QuantityKind::time, Sign::positive, std::numeric_limits<double>::infinity());
  pool.lost_work = get_choice(f, "lost_work", kFleet, serving::kLostWorkNames, pool.lost_work);
  pool.cold_start = parse_cold_start(f, config);
  serving::MarketSpec& m = pool.market;
  const MarketShares shares = parse_market(f);
  if (shares.reserved > 0)
    throw InputError(join_path(kFleet, "market"), "a serving fleet commits a number of reserved replicas, not a share",
                     "give fleet.reserved: the replicas committed for the whole run");
  m.spot_share = shares.spot;
  m.reserved_replicas = static_cast<int>(get_int(f, "reserved", kFleet, 0, 0, 1'000'000));
  m.ownership = parse_ownership(f, config);
  m.node_share = replica_node_share(config);
  if (!m.ownership && !shares.serverless) m.usd_per_hour = replica_prices(f, config, m);
  parse_serverless(f, shares, config, pool);
  parse_interruptions(f, m.reclaims, m.fallback_after_s);
  // Failures are off for serving unless asked for (fleet.failures: Llama 3's rates by default).
  m.failures = serving::no_failures();
  if (member(f, "failures")) {
    m.failures = fleet::FailureConfig{};
    parse_failures(f, m.failures);
  }
  return pool;
}

// run.until (default 1 h), run.warmup, run.timeseries_interval (default 60 s), with bounds.
void parse_serving_run(const json& doc, Config& config) {
  serving::ServingConfig& c = config.serving;
  const json& run = object_or_empty(doc, "run", "");
  c.until_s = config.run.until_s > 0 ? config.run.until_s : kDefaultUntil_s;
  c.stats_start_s = get_quantity(run, "warmup", "run", QuantityKind::time, Sign::non_negative, 0.0);
  if (c.stats_start_s >= c.until_s)
    throw InputError("run.warmup", "expected less than run.until (" + describe_value(json(c.until_s)) + " s)");
  c.timeseries_interval_s = member(run, "timeseries_interval") ? config.run.timeseries_interval_s : kDefaultInterval_s;
  if (c.timeseries_interval_s > 0 && c.until_s / c.timeseries_interval_s > kMaxSamples)
    throw InputError("run.timeseries_interval", "about " + describe_value(json(std::floor(c.until_s / c.timeseries_interval_s))) +
                                                    " samples of each series; at most 1e6",
                     "sample less often, or 0 for none");
  const double expected = work::mean_rate(c.arrivals) * c.until_s;
  if (expected > kMaxExpectedArrivals)
    throw InputError("run.until", "about " + describe_value(json(expected)) + " requests arrive by then; at most 2e9",
                     "a shorter run, or a lower rate");
}

}  // namespace

void parse_serving_fleet(const json& doc, Config& config) {
  const json& f = object_or_empty(doc, "fleet", "");
  for (const char* key : {"nodes", "checkpoint", "restore", "elastic"})
    if (member(f, key))
      throw InputError(join_path(kFleet, key), "applies to training_run workloads; a serving fleet is sized by fleet.autoscaler");
  serving::ServingConfig& c = config.serving;
  if (parse_market(f).serverless) check_serverless_keys(f, config);
  c.fleet.autoscaler = parse_autoscaler(f, "autoscaler", config.warnings);
  c.fleet.pool = parse_pool(f, config);
  c.fleet.pool.market.owned_replicas = c.fleet.autoscaler.max_replicas;
  if (const auto& sl = c.fleet.pool.market.serverless) {
    // The platform scales (no autoscaler runs): the run starts with its warm minimum, and the
    // bounds of the fleet (max replicas) are the platform's.
    c.fleet.autoscaler.replicas = c.fleet.autoscaler.min_replicas = sl->min_replicas;
    c.fleet.autoscaler.max_replicas = sl->max_replicas;
  }
  serving::DisaggregationSpec& d = c.disaggregated;
  if (member(f, "prefill_autoscaler") && !d.enabled)
    throw InputError(join_path(kFleet, "prefill_autoscaler"), "applies to disaggregated serving (workload.disaggregated)");
  if (d.enabled) {
    d.decode = c.fleet;
    d.prefill.pool = c.fleet.pool;
    d.prefill.autoscaler = member(f, "prefill_autoscaler") ? parse_autoscaler(f, "prefill_autoscaler", config.warnings) : c.fleet.autoscaler;
    // A prefill replica's weights are the decode replica's; its GPUs may differ (its price).
    const double share = static_cast<double>(d.prefill_replica.timing.gpus) / c.replica.llm.timing.gpus;
    serving::MarketSpec& prefill = d.prefill.pool.market;
    for (const fleet::Market m : fleet::kAllMarkets) prefill.usd_per_hour[m] *= share;
    prefill.node_share *= share;
    prefill.owned_replicas = d.prefill.autoscaler.max_replicas;
  }
  parse_serving_run(doc, config);
  check_autoscaler_period(c.fleet.autoscaler, "autoscaler", c.until_s);
  // Holt-Winters forecasts a season from the one before: until the second season starts it
  // has nothing to forecast from, and the inner policy alone scales.
  const serving::AutoscalerSpec& as = c.fleet.autoscaler;
  if (as.policy == serving::ScalingPolicy::predictive && c.until_s < 2 * as.predictive.season_s)
    config.warnings.push_back("warning: fleet.autoscaler.predictive.season: run.until is shorter than two seasons (" +
                              format_quantity(2 * as.predictive.season_s, QuantityKind::time) +
                              "): the forecast never starts, and the policy is its inner policy alone");
  if (d.enabled) check_autoscaler_period(d.prefill.autoscaler, "prefill_autoscaler", c.until_s);
  // The topology and network matter only where KV caches cross them.
  config.serving_kv_over_network = d.enabled && member(doc, "topology");
  for (const char* key : {"topology", "network"})
    if (member(doc, key) && !config.serving_kv_over_network)
      throw InputError(key, "a serving fleet uses the topology and network only to move disaggregated serving's KV caches; "
                            "this workload is not disaggregated" + std::string(member(doc, "topology") ? "" : " over a topology"),
                       d.enabled ? "give a topology, or remove this section" : "remove this section, or set workload.disaggregated");
  if (config.serving_kv_over_network) {
    const int64_t gpus = int64_t{d.prefill.autoscaler.max_replicas} * d.prefill_replica.timing.gpus +
                         int64_t{d.decode.autoscaler.max_replicas} * c.replica.llm.timing.gpus;
    if (gpus > total_gpus(config))
      throw InputError("topology.nodes", "the prefill and decode pools at their max need " + std::to_string(gpus) +
                                             " GPUs; the topology has " + std::to_string(total_gpus(config)),
                       "more nodes, or lower max replicas");
  }
  try {
    serving::validate_serving(c);
  } catch (const std::invalid_argument& e) {
    // Every value was checked above with its path; the library's checks are a safety net.
    throw InputError("workload", std::string("inconsistent serving settings: ") + e.what());
  }
}

}  // namespace cs::scenario::detail
