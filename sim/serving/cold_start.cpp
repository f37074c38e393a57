#include "sim/serving/cold_start.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/sources/distribution.hpp"

namespace cs::serving {

void validate_cold_start(const ColdStartSpec& spec) {
  spec.node_boot.validate("cold_start.node_boot");
  spec.image_pull.validate("cold_start.image_pull");
  spec.model_load.validate("cold_start.model_load");
  spec.warmup.validate("cold_start.warmup");
  spec.storage_bandwidth.validate("cold_start.storage_bandwidth");
  if (!(spec.model_bytes >= 0)) throw std::invalid_argument("cold_start.model_bytes: must be >= 0");
  if (spec.model_bytes > 0 && !(spec.storage_bandwidth.expected() > 0))
    throw std::invalid_argument("cold_start.storage_bandwidth: must be > 0");
}

double draw_cold_start(const ColdStartSpec& spec, engine::RandomStream& rng) {
  double t = std::max(0.0, sources::sample(spec.node_boot, rng)) + std::max(0.0, sources::sample(spec.image_pull, rng));
  if (spec.model_bytes > 0) {
    const double bandwidth = sources::sample(spec.storage_bandwidth, rng);
    if (bandwidth > 0) t += spec.model_bytes / bandwidth;
  }
  t += std::max(0.0, sources::sample(spec.model_load, rng));
  return t + std::max(0.0, sources::sample(spec.warmup, rng));
}

double mean_cold_start(const ColdStartSpec& spec) {
  double t = spec.node_boot.expected() + spec.image_pull.expected() + spec.model_load.expected() +
             spec.warmup.expected();
  if (spec.model_bytes > 0) t += spec.model_bytes / spec.storage_bandwidth.expected();
  return t;
}

}  // namespace cs::serving
