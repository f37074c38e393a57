#include "workloads/distribution.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace cs::work {

double distribution_mean(const Distribution& d) {
  if (d.kind == DistributionKind::uniform) return 0.5 * (d.min + d.max);
  return d.mean;
}

double distribution_scv(const Distribution& d) {
  switch (d.kind) {
    case DistributionKind::constant: return 0;
    case DistributionKind::exponential: return d.mean > 0 ? 1 : 0;
    case DistributionKind::lognormal: return d.cv * d.cv;
    case DistributionKind::uniform: {
      const double m = distribution_mean(d);
      if (m == 0) return 0;
      const double width = d.max - d.min;
      return width * width / 12.0 / (m * m);
    }
  }
  return 0;
}

void validate_distribution(const Distribution& d, std::string_view field) {
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument(std::string(field) + ": " + what);
  };
  switch (d.kind) {
    case DistributionKind::constant:
      if (!std::isfinite(d.mean) || d.mean < 0) fail("a constant needs a finite mean >= 0");
      break;
    case DistributionKind::exponential:
      if (!std::isfinite(d.mean) || d.mean <= 0) fail("an exponential needs a finite mean > 0");
      break;
    case DistributionKind::lognormal:
      if (!std::isfinite(d.mean) || d.mean <= 0) fail("a lognormal needs a finite mean > 0");
      if (!std::isfinite(d.cv) || d.cv < 0) fail("a lognormal needs a finite cv >= 0");
      break;
    case DistributionKind::uniform:
      if (!std::isfinite(d.min) || !std::isfinite(d.max) || d.min < 0 || d.max < d.min)
        fail("a uniform needs finite 0 <= min <= max");
      break;
  }
}

std::string_view to_string(DistributionKind kind) {
  switch (kind) {
    case DistributionKind::constant: return "constant";
    case DistributionKind::exponential: return "exponential";
    case DistributionKind::lognormal: return "lognormal";
    case DistributionKind::uniform: return "uniform";
  }
  return "?";
}

}  // namespace cs::work
