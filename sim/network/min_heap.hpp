#pragma once
// Internal to the flow model and the exchange: std::make_heap / push_heap / pop_heap ordered by
// kLater keep the smallest (earliest, lowest-rate) entry on top.
#include <functional>

namespace cs::net::detail {

inline constexpr auto kLater = std::greater<>();

}  // namespace cs::net::detail
