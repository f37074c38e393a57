// fleet.reserved and fleet.ownership: the fleet's commitments (what is billed every hour of the
// run whether used or not) for training runs, job clusters and serving pools. Defaults of
// ownership come from data/ownership.json (sim/fleet/ownership.hpp) and the GPU catalog.
#include <cmath>
#include <optional>
#include <string>

#include "sim/compute/gpu_catalog.hpp"
#include "sim/fleet/ownership.hpp"
#include "sim/scenario/parse_fleet_sections.hpp"
#include "sim/scenario/parse_sections.hpp"
#include "sim/scenario/quantity.hpp"

namespace cs::scenario::detail {
namespace {

constexpr double kMaxNodePrice_usd = 1e9;
constexpr double kMaxPower_w = 1e7;

// A node's power: watts as a number, or a string such as "10.2kW" or "700W".
double power_watts(const json& v, const std::string& path) {
  const char* expected = "a power per node: watts as a number, or a string such as \"10.2kW\" or \"700W\"";
  double w = NAN;
  if (v.is_number()) {
    w = v.get<double>();
  } else if (v.is_string()) {
    const std::string s = v.get<std::string>();
    const bool kilo = s.size() > 2 && s.compare(s.size() - 2, 2, "kW") == 0;
    const bool unit = kilo || (s.size() > 1 && s.back() == 'W');
    if (unit) {
      const std::string digits = s.substr(0, s.size() - (kilo ? 2 : 1));
      char* end = nullptr;
      const double x = std::strtod(digits.c_str(), &end);
      if (end && end != digits.c_str() && *end == '\0') w = kilo ? 1000.0 * x : x;
    }
  }
  if (!std::isfinite(w)) throw InputError(path, std::string("expected ") + expected + "; got " + describe_value(v));
  // A node at load draws power: 0 W would bill an owned fleet no energy and no hosting.
  if (!(w > 0.0 && w <= kMaxPower_w))
    throw InputError(path, "expected a power above 0 and at most 10 MW per node; got " + describe_value(v),
                     "an 8-GPU H100 server draws about 10.2 kW at load");
  return w;
}

}  // namespace

std::optional<fleet::OwnershipConfig> parse_ownership(const json& f, const Config& config) {
  const json* o = member(f, "ownership");
  if (!o) return std::nullopt;
  const std::string at = join_path(kFleet, "ownership");
  if (!o->is_object())
    throw InputError(at, "expected an object {node_price, years, maintenance, power, pue, energy_price, hosting}; got " +
                             describe_value(*o));
  for (const char* rented : {"market", "reserved", "prices", "instance"})
    if (member(f, rented))
      throw InputError(join_path(kFleet, rented), "an owned fleet (fleet.ownership) rents nothing",
                       "leave out fleet." + std::string(rented) + ", or fleet.ownership to rent");
  const fleet::OwnershipDefaults& defaults = fleet::OwnershipDefaults::builtin();
  // An accelerator its vendor only rents cannot be owned, whatever price the file gives: the
  // nearest valid choice is renting it from the instance that holds it.
  if (const auto why = defaults.not_sold(config.gpu.name)) {
    const std::string instance = instance_with_gpu(config.gpu.name);
    throw InputError(at, config.gpu.name + " cannot be owned: " + *why,
                     "rent it instead: leave out fleet.ownership" +
                         (instance.empty() ? std::string(" and give fleet.prices") : " (fleet.instance " + instance + ")"));
  }
  fleet::OwnershipConfig c = defaults.base;
  const int gpus = config.topology.node.gpus;
  if (member(*o, "node_price")) {
    c.node_price_usd = quantity_value(o->at("node_price"), QuantityKind::money, Sign::positive, join_path(at, "node_price"));
    if (c.node_price_usd > kMaxNodePrice_usd)
      throw InputError(join_path(at, "node_price"), "expected a price per node of at most $1e9; got " + describe_value(o->at("node_price")));
  } else if (const auto listed = defaults.node_price_usd(config.gpu.name, gpus)) {
    c.node_price_usd = *listed;
  } else {
    throw InputError(join_path(at, "node_price"),
                     "required: no typical price of a " + config.gpu.name + " node is listed (data/ownership.json lists " +
                         defaults.listed_gpus() + ")",
                     "give the price of one node (hardware.node, " + std::to_string(gpus) + " GPUs), e.g. \"$250000\"");
  }
  c.years = get_number(*o, "years", at, c.years, 0.1, 50.0);
  c.maintenance = get_number(*o, "maintenance", at, c.maintenance, 0.0, 1.0);
  if (const json* p = member(*o, "power")) {
    c.power_w = power_watts(*p, join_path(at, "power"));
  } else if (const compute::GpuSpec* gpu = compute::find_gpu(config.gpu.name); gpu && gpu->power_w > 0) {
    c.power_w = defaults.node_power_w(gpu->power_w, gpus);
  } else {
    throw InputError(join_path(at, "power"), "required: the GPU catalog has no power for " + config.gpu.name,
                     "give the power of one node at load, e.g. \"10.2kW\"");
  }
  c.pue = get_number(*o, "pue", at, c.pue, 1.0, 5.0);
  c.energy_usd_per_kwh = get_number(*o, "energy_price", at, c.energy_usd_per_kwh, 0.0, 10.0);
  c.hosting_usd_per_kw_month = get_number(*o, "hosting", at, c.hosting_usd_per_kw_month, 0.0, 10000.0);
  return c;
}

void parse_node_commitments(const json& f, const Config& config, fleet::FleetConfig& c) {
  c.ownership = parse_ownership(f, config);
  const json* r = member(f, "reserved");
  if (!r) return;
  const std::string at = join_path(kFleet, "reserved");
  if (c.reserved_share > 0.0)
    throw InputError(at, "give reserved nodes as a count here or as a share in fleet.market, not both",
                     "leave out the reserved share of fleet.market");
  const int spot = static_cast<int>(std::lround(c.spot_share * c.nodes));
  const int64_t n = get_int(f, "reserved", kFleet, 0, 0, c.nodes);
  if (n + spot > c.nodes)
    throw InputError(at, "expected at most " + std::to_string(c.nodes - spot) + " nodes: " + std::to_string(spot) +
                             " of the " + std::to_string(c.nodes) + " are spot (fleet.market)");
  c.reserved_share = static_cast<double>(n) / c.nodes;
}

}  // namespace cs::scenario::detail
