#pragma once
// Internal: the checks the fleet's configurations run in validate() (std::invalid_argument
// naming the field), shared by training runs, restores and job clusters.
#include <cmath>
#include <stdexcept>
#include <string>

namespace cs::fleet::detail {

inline void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

inline bool finite_nonneg(double v) { return v >= 0.0 && std::isfinite(v); }

}  // namespace cs::fleet::detail
