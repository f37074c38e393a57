#pragma once
// A probability distribution as plain data: service times, token counts, cold-start delays.
// Sampling needs a random stream and lives with the runtime (sim/fleet/distribution_draw.hpp);
// this header only describes the distribution and gives its moments.
//
// Units: whatever the quantity is (seconds for times, tokens for token counts, bytes/s for
// bandwidths); every parameter is in that unit except `cv`, which has none.
//
// Scenario form: { "dist": "constant" | "exponential" | "lognormal" | "uniform", "mean",
//                  "cv" (lognormal), "min", "max" (uniform) }.
#include <cstdint>
#include <limits>
#include <string_view>

namespace cs::work {

enum class DistributionKind : uint8_t { constant, exponential, lognormal, uniform };

struct Distribution {
  DistributionKind kind = DistributionKind::constant;
  double mean = 0;  // >= 0 (> 0 for exponential and lognormal); ignored by uniform
  double cv = 1;    // lognormal: standard deviation / mean, >= 0
  double min = 0;   // uniform: lower bound
  double max = 0;   // uniform: upper bound, >= min

  static Distribution constant(double value) { return {DistributionKind::constant, value, 0, 0, 0}; }
  static Distribution exponential(double mean) { return {DistributionKind::exponential, mean, 1, 0, 0}; }
  static Distribution lognormal(double mean, double cv) {
    return {DistributionKind::lognormal, mean, cv, 0, 0};
  }
  static Distribution uniform(double lo, double hi) {
    return {DistributionKind::uniform, 0, 0, lo, hi};
  }
};

// E[X].
double distribution_mean(const Distribution& d);
// Var[X] / E[X]^2 (squared coefficient of variation): 0 constant, 1 exponential, cv^2
// lognormal; 0 when the mean is 0.
double distribution_scv(const Distribution& d);
// Throws std::invalid_argument naming `field` (e.g. "service_time") when the parameters are
// out of range (negative or non-finite mean, cv < 0, max < min, ...).
void validate_distribution(const Distribution& d, std::string_view field);

std::string_view to_string(DistributionKind kind);

}  // namespace cs::work
