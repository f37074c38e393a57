#pragma once
// Statistics used by summaries, and the combination of replications.
#include <vector>

#include <nlohmann/json.hpp>

namespace cs::scenario {

// The p-th percentile (0 < p <= 100) by the nearest-rank method: the smallest value such that
// at least p% of the values are <= it. Empty input gives 0.
double percentile(std::vector<double> values, double p);
double mean(const std::vector<double>& values);

// Half-width of the 95% confidence interval of the mean of n samples with sample standard
// deviation sd (Student's t); 0 when n < 2.
double ci95_halfwidth(double sd, std::size_t n);

// Replications -> one summary: every number becomes {"mean", "ci95"}, except identifying
// numbers (seed, ranks, bytes, flows) which must agree and stay as they are. Structures must
// match (same keys, same list lengths).
nlohmann::json combine_replications(const std::vector<nlohmann::json>& summaries);

}  // namespace cs::scenario
