#pragma once
// Draws from a work::Distribution with an engine random stream. A DistributionSampler folds
// the distribution's constants once (a lognormal's mu and sigma) for distributions drawn per
// request; draw() is the one-off form. Both consume the words of the RandomStream call they
// make and give the same values.
#include "sim/engine/random.hpp"
#include "workloads/distribution.hpp"

namespace cs::serving {

class DistributionSampler {
 public:
  explicit DistributionSampler(const work::Distribution& d);
  double operator()(engine::RandomStream& rng) const;

 private:
  work::Distribution d_;
  double mu_ = 0, sigma_ = 0;  // lognormal: of the underlying normal
};

double draw(const work::Distribution& d, engine::RandomStream& rng);

}  // namespace cs::serving
