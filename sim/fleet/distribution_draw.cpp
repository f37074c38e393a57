#include "sim/fleet/distribution_draw.hpp"

#include <cmath>

namespace cs::serving {

DistributionSampler::DistributionSampler(const work::Distribution& d) : d_(d) {
  if (d_.kind == work::DistributionKind::lognormal && d_.mean > 0) {
    // As RandomStream::lognormal_from_mean_cv: E[X] = exp(mu + s^2/2), CV^2 = exp(s^2) - 1.
    const double s2 = std::log1p(d_.cv * d_.cv);
    mu_ = std::log(d_.mean) - 0.5 * s2;
    sigma_ = std::sqrt(s2);
  }
}

double DistributionSampler::operator()(engine::RandomStream& rng) const {
  switch (d_.kind) {
    case work::DistributionKind::constant: return d_.mean;
    case work::DistributionKind::exponential: return rng.exponential(d_.mean);
    case work::DistributionKind::lognormal: return rng.lognormal(mu_, sigma_);
    case work::DistributionKind::uniform: return rng.uniform(d_.min, d_.max);
  }
  return d_.mean;
}

double draw(const work::Distribution& d, engine::RandomStream& rng) {
  return DistributionSampler(d)(rng);
}

}  // namespace cs::serving
