#include "sim/fleet/ownership.hpp"

#include <cmath>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "sim/fleet/config_checks.hpp"

namespace cs::fleet {
namespace {

using nlohmann::json;

struct ListedNode {
  double usd = 0.0;
  int gpus = 0;
};

// The value of data/ownership.json's entry `key` ({"value", "source"}); the file is ours, so a
// malformed entry is an internal fault (std::logic_error).
double listed_value(const json& doc, const char* key) {
  const auto it = doc.find(key);
  if (it == doc.end() || !it->is_object() || !it->contains("value") || !(*it)["value"].is_number() ||
      !it->contains("source"))
    throw std::logic_error(std::string("data/ownership.json: ") + key + " needs a number value and a source");
  return (*it)["value"].get<double>();
}

struct ParsedDefaults {
  OwnershipDefaults defaults;
  std::map<std::string, ListedNode, std::less<>> nodes;
  std::map<std::string, std::string, std::less<>> not_sold;  // accelerator -> why
};

const ParsedDefaults& parsed() {
  static const ParsedDefaults p = [] {
    const json doc = json::parse(ownership_text());
    ParsedDefaults out;
    OwnershipConfig& b = out.defaults.base;
    b.years = listed_value(doc, "years");
    b.maintenance = listed_value(doc, "maintenance");
    b.pue = listed_value(doc, "pue");
    b.energy_usd_per_kwh = listed_value(doc, "energy_price");
    b.hosting_usd_per_kw_month = listed_value(doc, "hosting");
    out.defaults.host_power_per_gpu_w = listed_value(doc, "host_power_per_gpu_w");
    for (const auto& [gpu, v] : doc.at("node_prices").items())
      out.nodes[gpu] = ListedNode{v.at("usd").get<double>(), v.at("gpus").get<int>()};
    for (const auto& [gpu, why] : doc.at("not_sold").items()) {
      if (out.nodes.count(gpu)) throw std::logic_error("data/ownership.json: " + gpu + " is both priced and not sold");
      out.not_sold[gpu] = why.get<std::string>();
    }
    return out;
  }();
  return p;
}

}  // namespace

void OwnershipConfig::validate() const {
  using detail::require;
  const auto finite = [](double v) { return std::isfinite(v); };
  require(node_price_usd > 0.0 && finite(node_price_usd), "fleet.ownership.node_price: expected a finite price > 0 per node");
  require(years > 0.0 && finite(years), "fleet.ownership.years: expected a finite number of years > 0");
  require(detail::finite_nonneg(maintenance), "fleet.ownership.maintenance: expected a finite share per year >= 0");
  require(detail::finite_nonneg(power_w), "fleet.ownership.power: expected a finite power >= 0 per node");
  require(pue >= 1.0 && finite(pue), "fleet.ownership.pue: expected a finite ratio >= 1");
  require(detail::finite_nonneg(energy_usd_per_kwh), "fleet.ownership.energy_price: expected a finite price >= 0 per kWh");
  require(detail::finite_nonneg(hosting_usd_per_kw_month),
          "fleet.ownership.hosting: expected a finite price >= 0 per kW-month");
  require(detail::finite_nonneg(fabric_usd), "fleet.ownership: the fabric's bill must be finite and >= 0");
}

OwnedNodeRates OwnedNodeRates::scaled(double share) const {
  return {amortization * share, maintenance * share, energy * share, hosting * share, facility_kw * share};
}

OwnedNodeRates owned_node_rates(const OwnershipConfig& c) {
  const double kw = c.power_w / 1000.0;
  OwnedNodeRates r;
  r.amortization = c.node_price_usd / (c.years * kHoursPerYear);
  r.maintenance = c.node_price_usd * c.maintenance / kHoursPerYear;
  r.energy = kw * c.pue * c.energy_usd_per_kwh;
  r.hosting = kw * c.hosting_usd_per_kw_month * 12.0 / kHoursPerYear;
  r.facility_kw = kw * c.pue;
  return r;
}

double fabric_usd_per_hour(const OwnershipConfig& c) { return c.fabric_usd / (c.years * kHoursPerYear); }

std::optional<double> OwnershipDefaults::node_price_usd(std::string_view gpu, int gpus) const {
  const auto& nodes = parsed().nodes;
  const auto it = nodes.find(gpu);
  if (it == nodes.end()) return std::nullopt;
  return it->second.usd / it->second.gpus * gpus;
}

std::string OwnershipDefaults::listed_gpus() const {
  std::string out;
  for (const auto& [gpu, node] : parsed().nodes) out += (out.empty() ? "" : ", ") + gpu;
  return out;
}

std::optional<std::string> OwnershipDefaults::not_sold(std::string_view gpu) const {
  const auto& not_sold = parsed().not_sold;
  const auto it = not_sold.find(gpu);
  if (it == not_sold.end()) return std::nullopt;
  return it->second;
}

const OwnershipDefaults& OwnershipDefaults::builtin() { return parsed().defaults; }

}  // namespace cs::fleet
