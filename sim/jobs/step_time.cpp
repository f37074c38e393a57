#include "sim/jobs/step_time.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cs::jobs {

PlacementShape shape_of(const ClusterState& cluster, const Allocation& allocation) {
  PlacementShape s;
  for (const NodeShare& n : allocation) s.gpus += n.gpus;
  s.nodes = ClusterState::node_count(allocation);
  s.domains = cluster.spread(allocation);
  s.min_domains = cluster.min_spread(s.gpus);
  return s;
}

SpreadPenaltyModel::SpreadPenaltyModel(std::vector<double> penalty_per_class)
    : penalty_(std::move(penalty_per_class)) {
  for (const double p : penalty_)
    if (!(p >= 0.0)) throw std::invalid_argument("SpreadPenaltyModel: penalties must be >= 0");
}

double SpreadPenaltyModel::slowdown(int job_class, const PlacementShape& shape, const Allocation&) {
  if (job_class < 0 || static_cast<std::size_t>(job_class) >= penalty_.size()) return 1.0;
  const int extra = std::max(0, shape.domains - shape.min_domains);
  return 1.0 + penalty_[static_cast<std::size_t>(job_class)] * extra;
}

std::size_t StepTimeCache::KeyHash::operator()(const Key& k) const {
  std::size_t h = static_cast<std::size_t>(k.job_class) + 0x9e3779b97f4a7c15ULL;
  for (const int v : {k.shape.gpus, k.shape.nodes, k.shape.domains, k.shape.min_domains})
    h ^= static_cast<std::size_t>(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

double StepTimeCache::slowdown(int job_class, const PlacementShape& shape, const Allocation& allocation) {
  ++queries_;
  const Key key{job_class, shape};
  const std::size_t h = static_cast<std::size_t>(shape.gpus) * 0x9e3779b1u + static_cast<std::size_t>(shape.nodes) * 0x85ebca6bu +
                        static_cast<std::size_t>(shape.domains) * 0xc2b2ae35u +
                        static_cast<std::size_t>(shape.min_domains) * 0x27d4eb2fu + static_cast<std::size_t>(job_class + 1);
  Recent& recent = recent_[(h ^ (h >> 16)) % kRecent];
  if (recent.key == key) return recent.slowdown;
  double s;
  if (const auto it = cache_.find(key); it != cache_.end()) {
    s = it->second;
  } else {
    s = model_->slowdown(job_class, shape, allocation);
    if (!(s > 0.0) || !std::isfinite(s)) throw std::logic_error("StepTimeModel: a slowdown must be finite and > 0");
    cache_.emplace(key, s);
  }
  recent = {key, s};
  return s;
}

}  // namespace cs::jobs
