#include "sim/sources/distribution.hpp"

#include <cmath>

namespace cs::sources {

DistributionSampler::DistributionSampler(const Distribution& d) : d_(d) {
  if (d_.kind == Distribution::Kind::empirical) weights_ = engine::DiscreteTable(d_.weights.data(), d_.weights.size());
  if (d_.mean <= 0.0) return;
  if (d_.kind == Distribution::Kind::lognormal) {
    // As RandomStream::lognormal_from_mean_cv: E[X] = exp(mu + s^2/2), CV^2 = exp(s^2) - 1.
    const double s2 = std::log1p(d_.cv * d_.cv);
    a_ = std::log(d_.mean) - 0.5 * s2;
    b_ = std::sqrt(s2);
  } else if (d_.kind == Distribution::Kind::weibull) {
    b_ = d_.mean / std::tgamma(1.0 + 1.0 / d_.shape);
  }
}

double DistributionSampler::operator()(engine::RandomStream& rng) const {
  using Kind = Distribution::Kind;
  switch (d_.kind) {
    case Kind::constant: return d_.mean;
    case Kind::exponential: return rng.exponential(d_.mean);
    case Kind::lognormal: return d_.mean > 0.0 ? rng.lognormal(a_, b_) : 0.0;
    case Kind::weibull: return d_.mean > 0.0 ? rng.weibull(d_.shape, b_) : 0.0;
    case Kind::uniform: return rng.uniform(d_.low, d_.high);
    case Kind::sum: {
      double total = 0.0;
      for (const Distribution& t : d_.terms) total += sample(t, rng);
      return total;
    }
    case Kind::empirical: return d_.values[rng.discrete(weights_)];
  }
  return d_.mean;
}

double sample(const Distribution& d, engine::RandomStream& rng) { return DistributionSampler(d)(rng); }

}  // namespace cs::sources
