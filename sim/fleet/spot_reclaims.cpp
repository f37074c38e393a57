#include "sim/fleet/spot_reclaims.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace cs::fleet {

void SpotReclaimConfig::validate(const char* what) const {
  const std::string w(what);
  rate.validate(what);
  fleet::validate(trace, (w + ".trace").c_str());
  if (!(correlated.events_per_s >= 0.0) || !std::isfinite(correlated.events_per_s))
    throw std::invalid_argument(w + ".correlated.events_per_s: expected a finite rate >= 0");
  if (!(correlated.pool_share >= 0.0 && correlated.pool_share <= 1.0))
    throw std::invalid_argument(w + ".correlated.pool_share: expected a share in [0, 1]");
  if (!(warning_s >= 0.0) || !std::isfinite(warning_s))
    throw std::invalid_argument(w + ".warning_s: expected a finite time >= 0");
  capacity_return.validate(w + ".capacity_return");
}

}  // namespace cs::fleet
