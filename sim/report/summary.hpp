#pragma once
// Statistics used by summaries, and the combination of replications.
#include <vector>

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/statistics.hpp"

namespace cs::report {

// The engine's statistics (sim/engine/statistics.hpp): nearest-rank percentile, mean, and
// the 95% CI half-width with Student's t (exact for every n).
using engine::ci95_halfwidth;
using engine::mean;
using engine::percentile;

// A number of a summary block: whole numbers as integers (3, not 3.0), infinities (which JSON
// cannot hold: an MTBF with no failures) as null.
nlohmann::json summary_number(double value);

// Adds numbers named "name" or "group.name" to a summary block, each as summary_number, the
// grouped ones nested under their group (e.g. "cost_breakdown_usd.energy").
void add_grouped_numbers(nlohmann::json& block, const std::vector<std::pair<std::string, double>>& numbers);

// Replications -> one summary: every number becomes {"mean", "ci95"}, except identifying
// numbers (seed, ranks, bytes, flows) which must agree and stay as they are. Structures must
// match (same keys, same list lengths).
nlohmann::json combine_replications(const std::vector<nlohmann::json>& summaries);

}  // namespace cs::report
