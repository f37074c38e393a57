#pragma once
// Statistics of replicated results: mean, sample standard deviation, Student-t 95% confidence
// interval, nearest-rank percentile. Shared by every model that replicates runs (fleet,
// scenario summaries) so that they all report the same interval the same way.
//
// Conventions
// - sample_sd divides by n - 1 (the unbiased variance); it is 0 for n < 2.
// - ci95_halfwidth is t(0.975, n - 1) * sd / sqrt(n), with Student's t quantile from Boost.Math
//   (exact for every n, not a table cut off at some df); 0 for n < 2.
// - Empty inputs give 0 everywhere (a summary of nothing is all zeros, never NaN).
#include <cstddef>
#include <span>
#include <vector>

namespace cs::engine {

struct MeanCi {
  double mean = 0.0;
  double ci95 = 0.0;  // half-width: the interval is [mean - ci95, mean + ci95]
  double sd = 0.0;    // sample standard deviation of the values
  std::size_t n = 0;
};

double mean(std::span<const double> values);
double sample_sd(std::span<const double> values);
// The two-sided 95% quantile of Student's t with df degrees of freedom (df >= 1).
double student_t975(double df);
double ci95_halfwidth(double sd, std::size_t n);
MeanCi mean_ci95(std::span<const double> values);
// The p-th percentile (0 < p <= 100) by the nearest-rank method: the smallest value such that
// at least p% of the values are <= it. Empty input gives 0.
double percentile(std::vector<double> values, double p);

}  // namespace cs::engine
