#pragma once
// Simulated time. Seconds, as a double: 1 ns resolution is kept up to ~10^7 s (116 days).
#include <limits>

namespace cs::engine {

using Time = double;  // seconds since the start of the simulation

inline constexpr Time kForever = std::numeric_limits<Time>::infinity();

}  // namespace cs::engine
