#include "sim/fleet/market.hpp"

namespace cs::fleet {

std::string_view to_string(Market m) {
  switch (m) {
    case Market::on_demand: return "on_demand";
    case Market::spot: return "spot";
    case Market::reserved: return "reserved";
  }
  return "?";
}

std::optional<Market> parse_market(std::string_view name) {
  for (const Market m : kAllMarkets)
    if (to_string(m) == name) return m;
  return std::nullopt;
}

}  // namespace cs::fleet
