#pragma once
// The price catalog of GPU instances by market: data/instance_prices.json compiled into the
// library (no file lookup at run time), with per-run overrides.
//
// Format (USD per instance-hour, a source string per price):
//   { "default_discounts": { "spot" | "reserved": { "value": 0..1, "source": str } },
//     "instances": { "<provider>.<type>": { "provider", "gpu", "gpus", "region",
//                    "usd_per_hour": { "on_demand" | "spot" | "reserved":
//                                      { "usd": number >= 0, "source": str } } } } }
// A market an instance does not list is priced on_demand x (1 - default discount) and marked
// derived, with a source that says so.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/fleet/market.hpp"

namespace cs::fleet {

struct PriceQuote {
  double usd_per_hour = 0.0;
  std::string source;
  bool derived = false;  // computed from on-demand and a default discount
};

struct InstanceType {
  std::string name;      // "<provider>.<type>", e.g. "aws.p5.48xlarge"
  std::string provider;
  std::string gpu;       // GPU catalog name, e.g. "H100-SXM"
  std::string region;
  int gpus = 0;
  PerMarket<std::optional<PriceQuote>> listed;
};

class InstancePriceCatalog {
 public:
  // Parses the format above; errors throw std::invalid_argument naming the JSON path.
  static InstancePriceCatalog parse(std::string_view json_text);
  // data/instance_prices.json, parsed once (immutable).
  static const InstancePriceCatalog& builtin();

  const InstanceType* find(std::string_view name) const;
  std::vector<std::string> names() const;
  // The listed price, or the derived one. Throws std::out_of_range for an unknown instance, and
  // std::invalid_argument when neither the market nor on-demand is listed.
  PriceQuote price(std::string_view name, Market market) const;
  PerMarket<double> usd_per_hour(std::string_view name) const;
  double default_discount(Market market) const;  // 0 for on_demand

  // Overrides (a scenario's prices): the source defaults to "override".
  void set_price(std::string_view name, Market market, double usd_per_hour,
                 std::string source = "override");
  void set_default_discount(Market market, double discount, std::string source = "override");

 private:
  std::map<std::string, InstanceType, std::less<>> instances_;
  PerMarket<double> discount_;
  PerMarket<std::string> discount_source_;
};

// The text of data/instance_prices.json.
std::string_view instance_prices_text();

}  // namespace cs::fleet
