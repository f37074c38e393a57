#pragma once
// The markets an instance can be bought in. Shared by training runs and serving fleets.
//
// - on_demand: pay per second of use, never reclaimed by the provider.
// - spot: the provider's spare capacity at a discount; reclaimed with a short warning
//   (spot_reclaims.hpp) and not always available again at once.
// - reserved: a commitment (1 or 3 years, or a capacity block) at a lower hourly rate; here
//   priced per held hour like the others, never reclaimed.
// - serverless: a serving platform's GPUs billed per second while a replica starts, serves or
//   waits warm for its idle timeout, scaled by requests down to zero (serving only; priced per
//   provider and GPU, serverless_prices.hpp, not per instance).
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

#include "common/enum_table.hpp"

namespace cs::fleet {

enum class Market : unsigned char { on_demand, spot, reserved, serverless };
// fleet.market, the keys of fleet.prices and the summaries' per-market figures.
inline constexpr auto kMarketNames = std::to_array<EnumName<Market>>({
    {"on_demand", Market::on_demand, "pay per second of use, never reclaimed"},
    {"spot", Market::spot, "spare capacity at a discount, reclaimed with a short warning"},
    {"reserved", Market::reserved, "a commitment at a lower hourly rate, never reclaimed"},
    {"serverless", Market::serverless, "per GPU-second while starting, serving or warm; scales to zero (serving)"},
});
static_assert(names_every_value<kMarketNames>());

inline constexpr std::size_t kMarkets = kMarketNames.size();
// Every market, in the table's order.
inline constexpr std::array<Market, kMarkets> kAllMarkets = values_of(kMarketNames);
// The markets instances are sold in by the hour (the price catalog's, a training run's and a
// job cluster's nodes).
inline constexpr std::array<Market, 3> kInstanceMarkets = {Market::on_demand, Market::spot, Market::reserved};

std::string_view to_string(Market m);
std::optional<Market> parse_market(std::string_view name);

inline constexpr std::size_t index(Market m) { return static_cast<std::size_t>(m); }

// A value per market (node-hours, dollars, counts), indexed by Market.
template <class T>
struct PerMarket {
  std::array<T, kMarkets> values{};
  T& operator[](Market m) { return values[index(m)]; }
  const T& operator[](Market m) const { return values[index(m)]; }
};

}  // namespace cs::fleet
