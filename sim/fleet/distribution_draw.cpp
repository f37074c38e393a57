#include "sim/fleet/distribution_draw.hpp"

namespace cs::serving {

double draw(const work::Distribution& d, engine::RandomStream& rng) {
  switch (d.kind) {
    case work::DistributionKind::constant: return d.mean;
    case work::DistributionKind::exponential: return rng.exponential(d.mean);
    case work::DistributionKind::lognormal: return rng.lognormal_from_mean_cv(d.mean, d.cv);
    case work::DistributionKind::uniform: return rng.uniform(d.min, d.max);
  }
  return d.mean;
}

}  // namespace cs::serving
