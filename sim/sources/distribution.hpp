#pragma once
// Drawing from a distribution (workloads/distribution.hpp: the plain-data description shared
// by the serving load and the fleet) with an engine random stream.
//
// sample(d, rng) is the one-off form; a DistributionSampler folds the distribution's constants
// once (a lognormal's mu and sigma, a Weibull's scale, an empirical one's running sums) for
// distributions drawn per request.
// Both consume the words of the RandomStream call they make and give the same values. A
// mean of 0 draws 0 (no random word is consumed then).
#include "sim/engine/random.hpp"
#include "workloads/distribution.hpp"

namespace cs::sources {

using Distribution = work::Distribution;

double sample(const Distribution& d, engine::RandomStream& rng);

class DistributionSampler {
 public:
  explicit DistributionSampler(const Distribution& d);
  double operator()(engine::RandomStream& rng) const;

 private:
  Distribution d_;
  double a_ = 0, b_ = 0;  // lognormal: mu and sigma of the underlying normal; weibull: scale
  engine::DiscreteTable weights_;  // empirical: its weights' running sums (the same draws)
};

}  // namespace cs::sources
