#pragma once
// Statistics used by summaries, and the combination of replications.
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/statistics.hpp"

namespace cs::scenario {

// The engine's statistics (sim/engine/statistics.hpp): nearest-rank percentile, mean, and
// the 95% CI half-width with Student's t (exact for every n).
using engine::ci95_halfwidth;
using engine::mean;
using engine::percentile;

// Replications -> one summary: every number becomes {"mean", "ci95"}, except identifying
// numbers (seed, ranks, bytes, flows) which must agree and stay as they are. Structures must
// match (same keys, same list lengths).
nlohmann::json combine_replications(const std::vector<nlohmann::json>& summaries);

}  // namespace cs::scenario
