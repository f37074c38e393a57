#pragma once
// A distribution of delays (provisioning, capacity coming back, replacement of a failed node,
// cold starts): plain data, sampled from a named engine random stream.
//
// Units: whatever the parameters are in (seconds for delays). Every kind is parameterised by
// its mean so that configurations stay comparable when the shape changes:
// - constant: always `mean`.
// - exponential: mean `mean` (memoryless).
// - lognormal: mean `mean`, coefficient of variation `cv` (sd / mean).
// - weibull: mean `mean`, shape `shape` (scale = mean / Gamma(1 + 1/shape)).
// - uniform: on [`low`, `high`] (mean is ignored).
// - sum: the sum of independent `terms`, drawn in order (a cold start = boot + image pull);
//   `mean` holds the sum of their means.
// Invariant: a valid distribution draws finite values >= 0; validate() throws
// std::invalid_argument otherwise, naming the field.
#include <string_view>
#include <vector>

#include "sim/engine/random.hpp"

namespace cs::fleet {

struct Distribution {
  enum class Kind : unsigned char { constant, exponential, lognormal, weibull, uniform, sum };

  Kind kind = Kind::constant;
  double mean = 0.0;
  double cv = 1.0;     // lognormal only
  double shape = 1.0;  // weibull only
  double low = 0.0;    // uniform only
  double high = 0.0;   // uniform only
  std::vector<Distribution> terms = {};  // sum only

  static Distribution constant(double value) { return {Kind::constant, value}; }
  static Distribution exponential(double mean) { return {Kind::exponential, mean}; }
  static Distribution lognormal(double mean, double cv) {
    return {Kind::lognormal, mean, cv};
  }
  static Distribution weibull(double mean, double shape) {
    return {Kind::weibull, mean, 1.0, shape};
  }
  static Distribution uniform(double low, double high) {
    return {Kind::uniform, 0.5 * (low + high), 1.0, 1.0, low, high};
  }
  // The sum of the terms; constant when every term is (no terms: constant 0).
  static Distribution sum(std::vector<Distribution> terms);

  // The expected value (for Young/Daly estimates and reports).
  double expected() const;
  double sample(engine::RandomStream& rng) const;
  void validate(std::string_view what) const;
};

// "constant", "exponential", "lognormal", "weibull", "uniform", "sum".
std::string_view to_string(Distribution::Kind k);

}  // namespace cs::fleet
