// parse_config: schema validation, then the typed sections, then what is left (top level,
// network, run, fleet).
#include "sim/scenario/document_util.hpp"
#include "sim/scenario/key_effects.hpp"
#include "sim/scenario/load.hpp"
#include "sim/scenario/parse_sections.hpp"
#include "sim/scenario/parse_util.hpp"
#include "sim/scenario/quantity_range.hpp"

namespace cs::scenario {
namespace detail {

namespace {

using topo::RoutingKind;
using topo::TopologyKind;

}  // namespace

void parse_network(const json& doc, Config& config) {
  const json& n = object_or_empty(doc, "network", "");
  config.network.model = get_choice(n, "model", "network", net::kNetworkModelNames, NetworkModel::flow);
  config.network.granularity = get_choice(n, "granularity", "network", net::kGranularityNames, Granularity::pipeline);
  config.network.protocol = get_choice(n, "protocol", "network", net::kProtocolNames, net::Protocol::automatic);
  config.network.pxn = get_bool(n, "pxn", "network", false);
  const TopologyKind kind = config.topology.kind;
  // "default": the family's natural routing, so one file can be swept across families.
  std::vector<Choice<RoutingKind>> routings{{"default", topo::default_routing(kind)}};
  for (const Choice<RoutingKind>& r : choices_of(topo::kRoutingKindNames)) routings.push_back(r);
  config.network.routing = get_choice(n, "routing", "network", routings, topo::default_routing(kind));
  const auto needs = topo::routing_family(config.network.routing);
  if (needs && *needs != kind) {
    std::string available;
    for (const auto& r : topo::kRoutingKindNames)
      if (!topo::routing_family(r.value) || topo::routing_family(r.value) == kind)
        available += (available.empty() ? "" : ", ") + std::string(r.name);
    throw InputError("network.routing", "'" + n.at("routing").get<std::string>() + "' routing needs a " +
                                            std::string(topo::to_string(*needs)) + " topology; available here: " +
                                            available);
  }
}

void parse_run(const json& doc, Config& config) {
  const json& r = object_or_empty(doc, "run", "");
  RunConfig& run = config.run;
  run.until_s = get_quantity(r, "until", "run", QuantityKind::time, Sign::non_negative, 0);
  run.replications = static_cast<int>(get_int(r, "replications", "run", 1, 1, 1000));
  if (const json* t = member(r, "trace")) {
    if (t->is_boolean() && !t->get<bool>()) run.trace_path.clear();
    else if (t->is_string() && !t->get_ref<const std::string&>().empty()) run.trace_path = t->get<std::string>();
    else throw InputError("run.trace", "expected a file path for the trace, or false; got " + describe_value(*t));
  }
  run.max_memory_bytes = get_quantity(r, "max_memory", "run", QuantityKind::bytes, Sign::positive, 8e9);
  run.timeseries_interval_s = get_ranged(r, "timeseries_interval", "run", "interval", 0, /*zero_means_none=*/true);
  if (member(r, "warmup") && config.workload != WorkloadKind::serving)  // parse_serving_fleet.cpp reads it
    throw InputError("run.warmup", "applies to serving workloads (requests arriving before it are not counted)");
}

}  // namespace detail

namespace {

// The sections that describe the machine: top level, hardware, topology, network.
Config parse_fabric(const nlohmann::json& doc) {
  Config config;
  config.name = detail::get_string(doc, "name", "", "");
  config.description = detail::get_string(doc, "description", "", "");
  config.seed = static_cast<uint64_t>(detail::get_int(doc, "seed", "", 1, 0, INT64_MAX));
  detail::parse_hardware(doc, config);
  detail::parse_topology(doc, config);
  detail::parse_network(doc, config);
  return config;
}

}  // namespace

Config parse_fabric_config(const nlohmann::json& raw) {
  const nlohmann::json doc = detail::normalize_numbers(raw);
  detail::validate_normalized(doc);
  return parse_fabric(doc);
}

Config parse_config(const nlohmann::json& raw) {
  const nlohmann::json doc = detail::normalize_numbers(raw);
  detail::validate_normalized(doc);
  Config config = parse_fabric(doc);
  detail::parse_workload(doc, config);
  detail::parse_run(doc, config);
  detail::parse_fleet(doc, config);
  detail::check_key_effects(doc, config);
  return config;
}

}  // namespace cs::scenario
