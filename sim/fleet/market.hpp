#pragma once
// The markets an instance can be bought in. Shared by training runs and serving fleets.
//
// - on_demand: pay per second of use, never reclaimed by the provider.
// - spot: the provider's spare capacity at a discount; reclaimed with a short warning
//   (spot_reclaims.hpp) and not always available again at once.
// - reserved: a commitment (1 or 3 years, or a capacity block) at a lower hourly rate; here
//   priced per held hour like the others, never reclaimed.
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace cs::fleet {

enum class Market : unsigned char { on_demand, spot, reserved };

inline constexpr std::size_t kMarkets = 3;
inline constexpr std::array<Market, kMarkets> kAllMarkets{Market::on_demand, Market::spot,
                                                          Market::reserved};

// "on_demand", "spot", "reserved": the names scenario files use.
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
