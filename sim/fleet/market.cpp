#include "sim/fleet/market.hpp"

namespace cs::fleet {

std::string_view to_string(Market m) { return name_of(kMarketNames, m); }

std::optional<Market> parse_market(std::string_view name) { return value_of(kMarketNames, name); }

}  // namespace cs::fleet
