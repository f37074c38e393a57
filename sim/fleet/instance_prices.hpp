#pragma once
// The price catalog of GPU instances by market: data/instance_prices.json compiled into the
// library (no file lookup at run time), with per-run overrides.
//
// Format (USD per instance-hour, a source string per price):
//   { "default_discounts": { "spot" | "reserved": { "value": 0..1, "source": str } },
//     "instances": { "<provider>.<type>": { "provider", "gpu", "gpus", "region",
//                    "usd_per_hour": { "on_demand" | "spot" | "reserved":
//                                      { "usd": number >= 0, "source": str } },
//                    "not_sold": { "spot" | "reserved": str (why, with its source) } } } }
// "gpus" is the accelerators one instance holds (8 for most GPU servers, 16 for a trn1.32xlarge,
// 1 for a TPU chip priced per chip-hour); "gpu" names them as the compute catalog does, unchecked
// here (the fleet library does not see that catalog): a scenario that uses the instance checks it.
// A market an instance does not list is priced on_demand x (1 - default discount) and marked
// derived, with a source that says so; one it is not sold in is derived the same way for
// what-ifs, and a scenario buying in it is an error (InstanceType::sold_in).
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
  int gpus = 0;          // accelerators per instance, >= 1
  PerMarket<std::optional<PriceQuote>> listed;
  PerMarket<std::string> not_sold;  // why the provider does not sell it there ("": sold)

  bool sold_in(Market m) const { return not_sold[m].empty(); }
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
  // std::invalid_argument when neither the market nor on-demand is listed, or for serverless.
  PriceQuote price(std::string_view name, Market market) const;
  PerMarket<double> usd_per_hour(std::string_view name) const;  // serverless: 0 (not sold by the hour)
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
