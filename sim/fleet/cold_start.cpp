#include "sim/fleet/cold_start.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/fleet/distribution_draw.hpp"

namespace cs::serving {

void validate_cold_start(const ColdStartSpec& spec) {
  work::validate_distribution(spec.node_boot, "cold_start.node_boot");
  work::validate_distribution(spec.image_pull, "cold_start.image_pull");
  work::validate_distribution(spec.warmup, "cold_start.warmup");
  work::validate_distribution(spec.storage_bandwidth, "cold_start.storage_bandwidth");
  if (!(spec.model_bytes >= 0)) throw std::invalid_argument("cold_start.model_bytes: must be >= 0");
  if (spec.model_bytes > 0 && !(work::distribution_mean(spec.storage_bandwidth) > 0))
    throw std::invalid_argument("cold_start.storage_bandwidth: must be > 0");
}

double draw_cold_start(const ColdStartSpec& spec, engine::RandomStream& rng) {
  double t = std::max(0.0, draw(spec.node_boot, rng)) + std::max(0.0, draw(spec.image_pull, rng));
  if (spec.model_bytes > 0) {
    const double bandwidth = draw(spec.storage_bandwidth, rng);
    if (bandwidth > 0) t += spec.model_bytes / bandwidth;
  }
  return t + std::max(0.0, draw(spec.warmup, rng));
}

double mean_cold_start(const ColdStartSpec& spec) {
  double t = work::distribution_mean(spec.node_boot) + work::distribution_mean(spec.image_pull) +
             work::distribution_mean(spec.warmup);
  if (spec.model_bytes > 0) t += spec.model_bytes / work::distribution_mean(spec.storage_bandwidth);
  return t;
}

}  // namespace cs::serving
