#pragma once
// Owning nodes instead of renting them: what an owned node costs per hour held, term by term.
//
// An owned node costs, per hour held (8760 hours a year):
//   amortization  node_price / (years x 8760)                 straight-line over `years`
//   maintenance   node_price x maintenance / 8760             share of the price per year
//   energy        power_kW x pue x energy_price               facility energy at load
//   hosting       power_kW x hosting x 12 / 8760              space and cooling per kW-month
// The fabric (switches, NICs, cables and optics of the topology report) is amortized the same
// way: network = fabric_usd / (years x 8760) per hour of the run.
// Owned nodes are held for the whole run, used or not (fleet_config.hpp's committed nodes).
// Defaults (years, maintenance, PUE, energy price, hosting, host power and typical node prices)
// are data/ownership.json's, each with its source.
// Units: USD, years, shares per year, watts, USD/kWh, USD per kW-month.
#include <optional>
#include <string>
#include <string_view>

namespace cs::fleet {

inline constexpr double kHoursPerYear = 8760.0;

// Default-constructed it costs nothing but the node price (not valid until that is set);
// OwnershipDefaults::builtin().base holds data/ownership.json's defaults.
struct OwnershipConfig {
  double node_price_usd = 0.0;        // per node bought, > 0
  double years = 1.0;                 // amortization period, > 0
  double maintenance = 0.0;           // share of the node price per year, >= 0
  double power_w = 0.0;               // per node at load, >= 0
  double pue = 1.0;                   // facility power / IT power, >= 1
  double energy_usd_per_kwh = 0.0;    // >= 0
  double hosting_usd_per_kw_month = 0.0;  // per kW of IT power, >= 0
  double fabric_usd = 0.0;            // the topology report's network bill (0: no topology)

  // Throws std::invalid_argument naming "fleet.ownership.<field>" out of range.
  void validate() const;
};

// The terms of one owned node's hourly cost (USD per node-hour), and its facility power.
struct OwnedNodeRates {
  double amortization = 0.0;
  double maintenance = 0.0;
  double energy = 0.0;
  double hosting = 0.0;
  double facility_kw = 0.0;  // power_kW x pue: energy_kwh per node-hour

  double total() const { return amortization + maintenance + energy + hosting; }
  OwnedNodeRates scaled(double share) const;  // a part of a node (a serving replica)
};

OwnedNodeRates owned_node_rates(const OwnershipConfig& c);
// The fabric's cost per hour of the run: fabric_usd / (years x 8760).
double fabric_usd_per_hour(const OwnershipConfig& c);

// data/ownership.json: the defaults above, typical node prices by GPU and the accelerators not sold.
struct OwnershipDefaults {
  OwnershipConfig base;           // years, maintenance, pue, energy price, hosting
  double host_power_per_gpu_w = 0.0;
  // A typical price of a node of `gpus` GPUs of this catalog GPU (the listed node's price per
  // GPU x gpus), or nullopt when none is listed.
  std::optional<double> node_price_usd(std::string_view gpu, int gpus) const;
  // A node's power at load (W): `gpus` boards of `gpu_board_w` each plus the host's share per GPU.
  double node_power_w(double gpu_board_w, int gpus) const { return gpus * (gpu_board_w + host_power_per_gpu_w); }
  std::string listed_gpus() const;  // "A100-40GB, A100-80GB, H100-SXM, MI300X"
  // Why an accelerator cannot be bought (its vendor only rents it: TPUs, Trainium, Inferentia),
  // with its source; nullopt when it is sold.
  std::optional<std::string> not_sold(std::string_view gpu) const;

  static const OwnershipDefaults& builtin();
};

// The text of data/ownership.json.
std::string_view ownership_text();

}  // namespace cs::fleet
