// workload.kind "training_run" (step_time, steps) and the fleet section (nodes, instance,
// market, prices, interruptions, failures, cold_start, elastic) into cs::fleet's
// TrainingRunConfig; checkpoint and restore are parse_checkpoint.cpp's. The fleet's nodes
// (market to cold_start) fill a FleetConfig, which a jobs workload shares (parse_jobs.cpp); a
// serving fleet takes the sections it needs (parse_fleet_sections.hpp). Only parsing: the
// model is sim/fleet's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "sim/fleet/instance_prices.hpp"
#include "sim/scenario/parse_fleet_sections.hpp"
#include "sim/scenario/parse_fleet_values.hpp"
#include "sim/scenario/parse_sections.hpp"
#include "sim/scenario/quantity_range.hpp"
#include "sim/scenario/suggest.hpp"
#include "workloads/training_memory.hpp"

namespace cs::scenario::detail {
namespace {

using fleet::Market;

constexpr double kHour_s = 3600.0;
constexpr int kMaxNodes = 1'000'000;
constexpr double kMaxWork_s = 1e12;
// Beyond this many expected checkpoints or interruptions a replication takes seconds and
// hundreds of megabytes (its time series): refused up front.
constexpr double kMaxExpectedEvents = 1e6;
// Bare numbers at or above these were surely meant per hour (per_hour_quantity): a node
// reclaimed every 2.8 hours, a node at $360 an hour (the priciest 8-GPU instances list ~$100).
constexpr double kBareReclaimRateLimit_per_s = 1e-4;
constexpr double kBarePriceLimit_usd_per_s = 0.1;

// The step time of a training_run: given (workload.step_time), or simulated from
// workload.training once the fleet is known (parse_fleet; the step runs before the run).
double step_time_s(const json& w, const std::string& at, Config& config) {
  config.training_run_simulates_step = member(w, "training") != nullptr;
  if (config.training_run_simulates_step) {
    if (member(w, "step_time"))
      throw InputError(join_path(at, "step_time"), "give a step_time or a training workload to simulate, not both",
                       "leave out step_time to use the simulated step");
    return 1.0;  // a placeholder for the checks before the run: the simulated step replaces it
  }
  if (!member(w, "step_time"))
    throw InputError(join_path(at, "step_time"),
                     "required for a training_run: the time of one training step, e.g. \"5.9s\", or workload.training",
                     "workload.training (model, parallel, batch, ...) simulates the step on the topology");
  return get_quantity(w, "step_time", at, QuantityKind::time, Sign::positive, 0.0);
}

// workload.training of a training_run: the training workload of the job's nodes, which the
// topology section must describe (its nodes are the fleet's).
void parse_training_run_training(const json& doc, const fleet::TrainingRunConfig& c, Config& config) {
  const json* t = member(doc, "topology");
  const int64_t topology_nodes = t ? get_int(*t, "nodes", "topology", 0, 0, INT64_MAX) : 0;
  if (topology_nodes != c.nodes)
    throw InputError(t ? "topology.nodes" : "topology",
                     "a step simulated from workload.training runs on the job's " + std::to_string(c.nodes) +
                         " nodes (fleet.nodes): the topology section must describe them" +
                         (t ? "; got " + std::to_string(topology_nodes) + " nodes" : ""),
                     "give \"topology\": {\"kind\": \"fat_tree\", \"nodes\": " + std::to_string(c.nodes) + ", ...}");
  parse_training(doc.at("workload").at("training"), "workload.training", config);
}

}  // namespace

MarketShares parse_market(const json& f) {
  const std::string path = join_path(kFleet, "market");
  const json* m = member(f, "market");
  MarketShares c;
  if (!m) return c;
  if (m->is_string()) {
    const auto market = get_choice(f, "market", kFleet, fleet::kMarketNames, Market::on_demand);
    if (market == Market::spot) c.spot = 1.0;
    if (market == Market::reserved) c.reserved = 1.0;
    c.serverless = market == Market::serverless;
    return c;
  }
  if (!m->is_object())
    throw InputError(path, "expected " + choice_names(choices_of(fleet::kMarketNames)) +
                               " or shares such as {\"spot\": 0.7}; got " + describe_value(*m));
  c.spot = get_number(*m, "spot", path, 0.0, 0.0, 1.0);
  c.reserved = get_number(*m, "reserved", path, 0.0, 0.0, 1.0);
  const double rest = 1.0 - c.spot - c.reserved;
  if (rest < -1e-9)
    throw InputError(path, "the spot and reserved shares add up to more than 1", "the on-demand share is the rest");
  if (member(*m, "on_demand") && std::fabs(get_number(*m, "on_demand", path, 0.0, 0.0, 1.0) - rest) > 1e-9)
    throw InputError(join_path(path, "on_demand"), "the shares add up to " +
                                                       describe_value(json(1.0 - rest + m->at("on_demand").get<double>())) +
                                                       "; expected 1",
                     "leave out on_demand: it takes the rest");
  c.reserved = std::min(c.reserved, 1.0 - c.spot);  // rounding at the sum of 1
  return c;
}

std::string instance_with_gpu(const std::string& gpu) {
  const auto& catalog = fleet::InstancePriceCatalog::builtin();
  for (const std::string& name : catalog.names())
    if (catalog.find(name)->gpu == gpu) return name;
  return "";
}

const fleet::InstanceType& parse_instance(const json& f, const Config& config, const std::string& default_name,
                                          const fleet::PerMarket<bool>& buys) {
  const std::string name = get_string(f, "instance", kFleet, default_name);
  const auto& catalog = fleet::InstancePriceCatalog::builtin();
  const std::string at = join_path(kFleet, "instance");
  const fleet::InstanceType* type = catalog.find(name);
  if (!type)
    throw InputError(at, "unknown instance \"" + name + "\"; the price catalog has " + quoted_list(catalog.names()),
                     nearest(name, catalog.names()) ? did_you_mean(name, catalog.names()) + " or give its prices in fleet.prices"
                                                    : "another instance: give its prices in fleet.prices");
  const std::string by_gpu = instance_with_gpu(config.gpu.name);
  if (member(f, "instance") && type->gpu != config.gpu.name)
    throw InputError(at, name + " holds " + type->gpu + " accelerators; hardware.gpu is " + config.gpu.name,
                     by_gpu.empty() ? "give fleet.prices for " + config.gpu.name : "use " + by_gpu + ", or give fleet.prices");
  for (const Market m : fleet::kAllMarkets) {
    if (!buys[m] || type->sold_in(m)) continue;
    // The nearest valid choice: the same accelerator from an instance sold in m, else on demand.
    std::string other;
    for (const std::string& n : catalog.names())
      if (catalog.find(n)->gpu == type->gpu && catalog.find(n)->sold_in(m)) other = other.empty() ? n : other;
    throw InputError(join_path(kFleet, m == Market::reserved && !member(f, "market") ? "reserved" : "market"),
                     name + " is not sold in the " + std::string(fleet::to_string(m)) + " market (" + type->not_sold[m] + ")",
                     other.empty() ? "buy it on_demand" : "buy it on_demand, or use " + other);
  }
  return *type;
}

void parse_price_overrides(const json& f, fleet::PerMarket<double>& usd_per_hour) {
  const std::string at = join_path(kFleet, "prices");
  const json& prices = object_or_empty(f, "prices", kFleet);
  for (const Market m : fleet::kInstanceMarkets)
    if (const json* p = member(prices, fleet::to_string(m)))
      usd_per_hour[m] = kHour_s * per_hour_quantity(*p, QuantityKind::money_rate, join_path(at, fleet::to_string(m)),
                                                    kBarePriceLimit_usd_per_s, "$39.33/h");
}

void derive_unpriced_markets(const json& f, fleet::PerMarket<double>& usd_per_hour) {
  const json& prices = object_or_empty(f, "prices", kFleet);
  const auto& catalog = fleet::InstancePriceCatalog::builtin();
  for (const Market m : {Market::spot, Market::reserved})
    if (!(usd_per_hour[m] > 0) && !member(prices, fleet::to_string(m)))
      usd_per_hour[m] = usd_per_hour[Market::on_demand] * (1.0 - catalog.default_discount(m));
}

namespace {

// Per node-hour (a node: hardware.node's GPUs): the instance's price per accelerator x the node's.
// The instance defaults to the catalog's first with hardware.gpu. With none, the node's price is
// required in fleet.prices: another accelerator's instance would bill a wrong price silently.
void parse_prices(const json& f, const Config& config, fleet::FleetConfig& c) {
  fleet::PerMarket<bool> buys;
  buys[Market::on_demand] = c.spot_share + c.reserved_share < 1.0;
  buys[Market::spot] = c.spot_share > 0;
  buys[Market::reserved] = c.reserved_share > 0 || member(f, "reserved");
  const std::string by_gpu = instance_with_gpu(config.gpu.name);
  if (by_gpu.empty() && !member(f, "instance")) {
    const json& prices = object_or_empty(f, "prices", kFleet);
    if (!member(prices, "on_demand"))
      throw InputError(join_path(kFleet, "prices.on_demand"),
                       "required: no instance in the price catalog has " + config.gpu.name + " accelerators",
                       "give the price of one node (hardware.node) per hour, e.g. \"$20/h\" (spot and reserved then "
                       "default to the catalog's discounts)");
    parse_price_overrides(f, c.usd_per_node_hour);
    derive_unpriced_markets(f, c.usd_per_node_hour);
    return;
  }
  const fleet::InstanceType& type = parse_instance(f, config, by_gpu, buys);
  c.usd_per_node_hour = fleet::InstancePriceCatalog::builtin().usd_per_hour(type.name);
  for (const Market m : fleet::kAllMarkets)
    c.usd_per_node_hour[m] *= static_cast<double>(config.topology.node.gpus) / static_cast<double>(type.gpus);
  parse_price_overrides(f, c.usd_per_node_hour);
}

void parse_reclaim_rate(const json& v, const std::string& path, fleet::HourlyRate& rate) {
  if (!v.is_array()) {
    rate.base_per_s = per_hour_quantity(v, QuantityKind::rate, path, kBareReclaimRateLimit_per_s, "0.0003/h");
    return;
  }
  if (v.size() != 24)
    throw InputError(path, "expected one rate or 24 hour-of-day rates (hour 0 first); got " +
                               std::to_string(v.size()) + " values");
  std::array<double, 24> hourly{};
  double sum = 0.0;
  for (std::size_t h = 0; h < 24; ++h) {
    hourly[h] = per_hour_quantity(v[h], QuantityKind::rate, join_path(path, h), kBareReclaimRateLimit_per_s, "0.0003/h");
    sum += hourly[h];
  }
  // The profile's mean is the base rate; the hours are multipliers of it (mean 1).
  rate.base_per_s = sum / 24.0;
  for (std::size_t h = 0; h < 24; ++h) rate.multiplier[h] = sum > 0.0 ? hourly[h] / rate.base_per_s : 1.0;
}

}  // namespace

void parse_interruptions(const json& f, fleet::SpotReclaimConfig& r, double& fallback_after_s) {
  const std::string at = join_path(kFleet, "interruptions");
  const json& in = object_or_empty(f, "interruptions", kFleet);
  if (const json* rate = member(in, "rate")) parse_reclaim_rate(*rate, join_path(at, "rate"), r.rate);
  r.rate.start_hour = get_number(in, "start_hour", at, 0.0, 0.0, 23.999999);
  if (const json* t = member(in, "trace")) {
    if (member(in, "rate") || member(in, "correlated"))
      throw InputError(join_path(at, "trace"), "a trace replays the reclaims instead of rate and correlated",
                       "give either trace or rate (and correlated)");
    r.trace = event_trace_value(*t, join_path(at, "trace"));
  }
  if (const json* w = member(in, "warning")) {
    r.warning_s = time_or_named(*w, join_path(at, "warning"), Sign::non_negative,
                                {{"aws", fleet::kAwsSpotWarning_s},
                                 {"gcp", fleet::kGcpSpotWarning_s},
                                 {"azure", fleet::kAzureSpotWarning_s}});
    check_range(r.warning_s, *w, "reclaim_warning", join_path(at, "warning"));
  }
  if (member(in, "correlated")) {
    const std::string cat = join_path(at, "correlated");
    const json& corr = object_or_empty(in, "correlated", at);
    for (const char* key : {"share", "rate"})
      if (!member(corr, key))
        throw InputError(join_path(cat, key), "required: correlated reclaims need the share of the pool each takes "
                                              "and how often they come (per pool)",
                         "e.g. {\"share\": 0.25, \"rate\": \"0.1/d\"}");
    r.correlated.pool_share = get_number(corr, "share", cat, 0.0, 0.0, 1.0);
    r.correlated.events_per_s = get_quantity(corr, "rate", cat, QuantityKind::rate, Sign::non_negative, 0.0);
  }
  r.capacity_return = get_distribution(in, "capacity_return", at, r.capacity_return);
  if (const json* fb = member(in, "fallback_after"))
    fallback_after_s = time_or_named(*fb, join_path(at, "fallback_after"), Sign::non_negative,
                                       {{"never", std::numeric_limits<double>::infinity()}});
}

namespace {

std::vector<fleet::FailureCause> parse_causes(const json& v, const std::string& path) {
  if (v.is_string()) {
    if (v.get<std::string>() == "llama3") return fleet::llama3_failure_causes();
    throw InputError(path, "expected \"llama3\" or a list of causes {\"name\", \"share\", \"replaces_node\"}; got " +
                               describe_value(v),
                     did_you_mean(v.get<std::string>(), {"llama3"}));
  }
  if (!v.is_array() || v.size() > 1000)
    throw InputError(path, "expected \"llama3\" or a list of causes {\"name\", \"share\", \"replaces_node\"}");
  std::vector<fleet::FailureCause> causes;
  double total = 0.0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string item = join_path(path, i);
    if (!v[i].is_object()) throw InputError(item, "expected a cause {\"name\", \"share\", \"replaces_node\"}");
    if (!member(v[i], "share")) throw InputError(item, "missing required key \"share\"");
    fleet::FailureCause cause;
    cause.name = get_string(v[i], "name", item, "cause " + std::to_string(i));
    cause.share = get_number(v[i], "share", item, 0.0, 0.0, 1e12);
    cause.replaces_node = get_bool(v[i], "replaces_node", item, true);
    total += cause.share;
    causes.push_back(std::move(cause));
  }
  if (!causes.empty() && !(total > 0.0)) throw InputError(path, "expected at least one share > 0");
  return causes;
}

}  // namespace

void parse_failures(const json& f, fleet::FailureConfig& fc) {
  const std::string at = join_path(kFleet, "failures");
  const json& in = object_or_empty(f, "failures", kFleet);
  if (const json* m = member(in, "node_mtbf"))
    fc.node_mtbf_s = time_or_named(*m, join_path(at, "node_mtbf"), Sign::positive,
                                   {{"none", std::numeric_limits<double>::infinity()}});
  fc.weibull_shape = get_number(in, "weibull_shape", at, 1.0, 0.05, 100.0);
  if (const json* causes = member(in, "causes")) fc.causes = parse_causes(*causes, join_path(at, "causes"));
  fc.replacement = get_distribution(in, "replacement_delay", at, fc.replacement);
  if (member(in, "correlated")) {
    const std::string cat = join_path(at, "correlated");
    const json& corr = object_or_empty(in, "correlated", at);
    for (const char* key : {"nodes", "mtbf"})
      if (!member(corr, key))
        throw InputError(join_path(cat, key), "required: a failure domain needs its size in nodes and its mean time between failures",
                         "e.g. {\"nodes\": 16, \"mtbf\": \"30d\"} for a leaf switch under 16 nodes");
    fc.correlated.domain_nodes = static_cast<int>(get_int(corr, "nodes", cat, 1, 1, kMaxNodes));
    fc.correlated.domain_mtbf_s = get_quantity(corr, "mtbf", cat, QuantityKind::time, Sign::positive, 0.0);
  }
  if (const json* t = member(in, "trace")) fc.trace = event_trace_value(*t, join_path(at, "trace"));
}

namespace {

// cold_start: boot + image pull of a new node, the delay of every new instance. model_load is
// the serving fleet's: a training run loads its state in the restore.
void parse_cold_start(const json& f, fleet::FleetConfig& c) {
  if (!member(f, "cold_start")) return;
  const std::string at = join_path(kFleet, "cold_start");
  const json& cs = object_or_empty(f, "cold_start", kFleet);
  if (member(cs, "model_load"))
    throw InputError(join_path(at, "model_load"), "a training run loads its model and optimizer state in the restore",
                     "set fleet.restore (time, or checkpoint size and storage) instead; model_load is for serving");
  const sources::Distribution delay =
      sources::Distribution::sum({get_distribution(cs, "boot", at, c.provisioning[Market::on_demand]),
                                get_distribution(cs, "image_pull", at, sources::Distribution::constant(0.0))});
  for (const Market m : fleet::kAllMarkets) c.provisioning[m] = delay;
}

void parse_elastic(const json& f, fleet::TrainingRunConfig& c) {
  const json* e = member(f, "elastic");
  const std::string at = join_path(kFleet, "elastic");
  if (!e || (e->is_boolean() && !e->get<bool>())) return;
  if (!e->is_boolean() && !e->is_object())
    throw InputError(at, "expected true, false or {nodes_per_replica, min_replicas, throughput_exponent, reconfigure}");
  const json& o = e->is_object() ? *e : json::object();
  fleet::ElasticConfig& el = c.elastic;
  el.enabled = true;
  el.nodes_per_replica = static_cast<int>(get_int(o, "nodes_per_replica", at, 1, 1, kMaxNodes));
  if (c.nodes % el.nodes_per_replica != 0)
    throw InputError(join_path(at, "nodes_per_replica"), "expected a divisor of fleet.nodes (" + std::to_string(c.nodes) + ")");
  const int replicas = c.nodes / el.nodes_per_replica;
  el.min_replicas = static_cast<int>(get_int(o, "min_replicas", at, 1, 1, replicas));
  el.throughput_exponent = get_number(o, "throughput_exponent", at, 1.0, 0.0, 10.0);
  el.reconfigure_s = get_quantity(o, "reconfigure", at, QuantityKind::time, Sign::non_negative, el.reconfigure_s);
}

std::string rounded(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

}  // namespace

// A run whose expected event count is absurd would take minutes and gigabytes per replication:
// refuse it with the numbers. Work: steps x step time at most 1e12 s. Checkpoints: work /
// interval. Interruptions: the job's rate over its expected wall time (Daly's, doubled; with no
// restart cost it is what the library's tests check), or until the time limit when that is
// sooner or the job cannot progress (each restore longer than the time between interruptions).
void check_training_run_budget(const Config& config) {
  const fleet::TrainingRunConfig& c = config.training_run;
  if (!(c.work_s() <= kMaxWork_s))
    throw InputError("workload.steps", "steps x step_time is " + describe_value(json(c.work_s())) +
                                           " s of work; at most 1e12 s");
  const double interval = c.checkpoint_interval_s();
  const double checkpoints = std::isfinite(interval) ? c.work_s() / interval : 0.0;
  const double rate = c.interruption_rate_per_s();
  double horizon = c.max_wall_time_s;
  if (rate > 0.0 && std::isfinite(interval)) {
    const double restart = c.restore_s(c.nodes, true) + c.restore.detection_s;
    const double expected = fleet::daly_expected_wall_time_s(c.work_s(), interval, c.checkpoint.blocking_s(c.nodes),
                                                             1.0 / rate, restart);
    if (std::isfinite(expected)) horizon = std::min(horizon, 2.0 * expected);
  }
  const double interruptions = rate * horizon;
  if (checkpoints > kMaxExpectedEvents)
    throw InputError("fleet.checkpoint.interval", "about " + rounded(checkpoints) +
                                                      " checkpoints for this work; at most 1e6",
                     "checkpoint less often, or train fewer steps");
  if (interruptions > kMaxExpectedEvents) {
    const bool until = config.run.until_s > 0 && horizon == c.max_wall_time_s;
    throw InputError(until ? "run.until" : std::string(kFleet),
                     "about " + rounded(interruptions) + " interruptions (" + rounded(rate * kHour_s) +
                         " per hour, over " + rounded(horizon / 86400.0) + " days); at most 1e6",
                     until ? "lower run.until"
                           : "check the failure and reclaim rates (a bare number is per second) and the restore "
                             "time: a job whose restores outlast the time between interruptions never finishes");
  }
}

void parse_fleet_nodes(const json& fleet, const Config& config, fleet::FleetConfig& c) {
  const MarketShares shares = parse_market(fleet);
  if (shares.serverless)
    throw InputError(join_path(kFleet, "market"), "serverless applies to serving workloads; this fleet holds nodes by the hour",
                     "on_demand, spot or reserved (or shares such as {\"spot\": 0.7})");
  c.spot_share = shares.spot;
  c.reserved_share = shares.reserved;
  parse_prices(fleet, config, c);
  parse_interruptions(fleet, c.reclaims, c.fallback_after_s);
  parse_failures(fleet, c.failures);
  parse_cold_start(fleet, c);
}

void parse_training_run_workload(const json& w, const std::string& at, Config& config) {
  fleet::TrainingRunConfig& c = config.training_run;
  c.step_time_s = step_time_s(w, at, config);
  if (!member(w, "steps")) throw InputError(join_path(at, "steps"), "required for a training_run: how many steps to train");
  c.steps = static_cast<double>(get_int(w, "steps", at, 1, 1, INT64_MAX));
  if (member(w, "tokens_per_step")) {
    if (config.training_run_simulates_step)
      throw InputError(join_path(at, "tokens_per_step"), "a simulated step (workload.training) gives its own tokens per step",
                       "leave out tokens_per_step");
    c.tokens_per_step = get_number(w, "tokens_per_step", at, 0.0, 0.0, 1e15);
  }
  if (member(w, "background"))
    throw InputError(join_path(at, "background"), "background work runs beside traffic and collective workloads, not a training_run");
}

void parse_fleet(const json& doc, Config& config) {
  const json* f = member(doc, "fleet");
  if (config.workload == WorkloadKind::serving) {
    parse_serving_fleet(doc, config);  // parse_serving_fleet.cpp
    return;
  }
  if (config.workload == WorkloadKind::jobs) {
    parse_jobs(doc, config);  // parse_jobs.cpp: the workload, fleet and scheduler together
    return;
  }
  if (config.workload != WorkloadKind::training_run) {
    if (f)
      throw InputError(std::string(kFleet), "the fleet section applies to training_run, serving and jobs workloads; "
                                            "workload.kind is none of them");
    return;
  }
  const json& fleet = object_or_empty(doc, "fleet", "");
  fleet::TrainingRunConfig& c = config.training_run;
  if (!member(fleet, "nodes"))
    throw InputError(join_path(kFleet, "nodes"), "required for a training_run: how many nodes the job holds");
  c.nodes = static_cast<int>(get_int(fleet, "nodes", kFleet, 1, 1, kMaxNodes));
  if (member(fleet, "autoscaler"))
    throw InputError(join_path(kFleet, "autoscaler"), "a training_run holds fleet.nodes nodes; autoscalers are for serving "
                                                      "workloads");
  parse_fleet_nodes(fleet, config, c);
  parse_node_commitments(fleet, config, c);
  parse_elastic(fleet, c);
  std::optional<double> model_checkpoint_bytes;
  if (config.training_run_simulates_step) {
    parse_training_run_training(doc, c, config);
    model_checkpoint_bytes = work::checkpoint_bytes(config.training.workload.model, config.training.step.memory);
  }
  parse_checkpoint(fleet, c.checkpoint, model_checkpoint_bytes);
  parse_restore(fleet, c.restore);
  if (config.run.until_s > 0) c.max_wall_time_s = config.run.until_s;
  // Every value was checked above with its JSON path; the library's own checks are a safety
  // net whose field names are not the file's.
  try {
    c.validate();
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string(kFleet), std::string("inconsistent fleet settings: ") + e.what());
  }
  // With a simulated step the budget is checked once the step is known (before the run).
  if (!config.training_run_simulates_step) check_training_run_budget(config);
}

}  // namespace cs::scenario::detail
