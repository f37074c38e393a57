#pragma once
// A probability distribution as plain data: service times and token counts of requests,
// provisioning and cold-start delays, replacement and capacity-return delays. One type for
// the serving load and the fleet: drawing a value needs an engine random stream and lives
// with the runtime (sim/fleet/distribution.hpp: sources::sample, sources::DistributionSampler);
// this header describes the distribution and gives its moments.
//
// Units: whatever the quantity is (seconds for times, tokens for token counts, bytes/s for
// bandwidths); every parameter is in that unit except `cv` and `shape`, which have none.
// Every kind but uniform is parameterised by its mean, so that configurations stay comparable
// when the shape changes:
// - constant: always `mean`.
// - exponential: mean `mean` (memoryless).
// - lognormal: mean `mean`, coefficient of variation `cv` (sd / mean).
// - weibull: mean `mean`, shape `shape` (scale = mean / Gamma(1 + 1/shape)).
// - uniform: on [`low`, `high`] (`mean` is ignored).
// - sum: the sum of independent `terms`, drawn in order (a cold start = boot + image pull);
//   `mean` holds the sum of their means.
// - empirical: one of `values`, drawn with probability weights[i] / sum(weights) (a measured
//   histogram: the GPU counts of a cluster's jobs, duration buckets of a trace); `mean` holds
//   the weighted mean.
// A mean of 0 draws 0 whatever the kind.
//
// Scenario form: { "dist": "constant" | "exponential" | "lognormal" | "weibull" | "uniform",
//                  "mean", "stddev" or "cv" (lognormal), "shape" (weibull), "low", "high"
//                  (uniform) }, or a bare quantity for a constant.
// Invariant: a valid distribution draws finite values >= 0; validate() throws
// std::invalid_argument otherwise, naming the field.
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/enum_table.hpp"

namespace cs::work {

struct Distribution {
  enum class Kind : uint8_t { constant, exponential, lognormal, weibull, uniform, sum, empirical };

  Kind kind = Kind::constant;
  double mean = 0.0;
  double cv = 1.0;     // lognormal only
  double shape = 1.0;  // weibull only
  double low = 0.0;    // uniform only
  double high = 0.0;   // uniform only
  std::vector<Distribution> terms = {};  // sum only
  std::vector<double> values = {};       // empirical only
  std::vector<double> weights = {};      // empirical only, one per value

  static Distribution constant(double value) { return {Kind::constant, value}; }
  static Distribution exponential(double mean) { return {Kind::exponential, mean}; }
  static Distribution lognormal(double mean, double cv) { return {Kind::lognormal, mean, cv}; }
  static Distribution weibull(double mean, double shape) { return {Kind::weibull, mean, 1.0, shape}; }
  static Distribution uniform(double low, double high) {
    return {Kind::uniform, 0.5 * (low + high), 1.0, 1.0, low, high};
  }
  // The sum of the terms; constant when every term is (no terms: constant 0).
  static Distribution sum(std::vector<Distribution> terms);
  // `values` with relative `weights` (same length, weights >= 0, not all 0).
  static Distribution empirical(std::vector<double> values, std::vector<double> weights);

  // E[X].
  double expected() const;
  // Var[X] / E[X]^2 (squared coefficient of variation): 0 constant, 1 exponential, cv^2
  // lognormal; 0 when the mean is 0.
  double scv() const;
  // Throws std::invalid_argument "<what>.<field>: expected ..." when a parameter is out of
  // range (negative or non-finite mean, cv < 0, shape <= 0, high < low, ...).
  void validate(std::string_view what) const;
};

// The kinds as a distribution's "dist" names them, in the order messages list them; a sum is
// built by the program (a cold start's terms), never written in a file.
inline constexpr auto kDistributionKindNames = std::to_array<EnumName<Distribution::Kind>>({
    {"constant", Distribution::Kind::constant, "always mean"},
    {"exponential", Distribution::Kind::exponential, "memoryless, of mean `mean`"},
    {"lognormal", Distribution::Kind::lognormal, "of mean `mean` and spread stddev or cv"},
    {"weibull", Distribution::Kind::weibull, "of mean `mean` and shape `shape`"},
    {"uniform", Distribution::Kind::uniform, "uniform on [low, high]"},
    {"empirical", Distribution::Kind::empirical, "one of `values`, drawn in proportion to `weights`"},
    {"sum", Distribution::Kind::sum, "the sum of independent terms", NameUse::output_only},
});
static_assert(names_every_value<kDistributionKindNames>());
std::string_view to_string(Distribution::Kind kind);

}  // namespace cs::work
