#include "workloads/distribution.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace cs::work {

std::string_view to_string(Distribution::Kind kind) { return name_of(kDistributionKindNames, kind); }

Distribution Distribution::sum(std::vector<Distribution> terms) {
  double total = 0.0;
  bool all_constant = true;
  for (const Distribution& t : terms) {
    total += t.expected();
    all_constant = all_constant && t.kind == Kind::constant;
  }
  if (all_constant) return constant(total);
  Distribution d{Kind::sum, total};
  d.terms = std::move(terms);
  return d;
}

Distribution Distribution::empirical(std::vector<double> values, std::vector<double> weights) {
  double total = 0.0, weighted = 0.0;
  for (std::size_t i = 0; i < values.size() && i < weights.size(); ++i) {
    total += weights[i];
    weighted += weights[i] * values[i];
  }
  Distribution d{Kind::empirical, total > 0.0 ? weighted / total : 0.0};
  d.values = std::move(values);
  d.weights = std::move(weights);
  return d;
}

double Distribution::expected() const { return kind == Kind::uniform ? 0.5 * (low + high) : mean; }

double Distribution::scv() const {
  const double m = expected();
  if (m == 0.0) return 0.0;
  switch (kind) {
    case Kind::constant: return 0.0;
    case Kind::exponential: return 1.0;
    case Kind::lognormal: return cv * cv;
    case Kind::weibull: {
      // E[X^2] / E[X]^2 = Gamma(1 + 2/k) / Gamma(1 + 1/k)^2.
      const double g1 = std::tgamma(1.0 + 1.0 / shape);
      return std::tgamma(1.0 + 2.0 / shape) / (g1 * g1) - 1.0;
    }
    case Kind::uniform: {
      const double width = high - low;
      return width * width / 12.0 / (m * m);
    }
    case Kind::sum: {
      // Independent terms: variances add.
      double variance = 0.0;
      for (const Distribution& t : terms) variance += t.scv() * t.expected() * t.expected();
      return variance / (m * m);
    }
    case Kind::empirical: {
      double total = 0.0, second = 0.0;
      for (std::size_t i = 0; i < values.size(); ++i) {
        total += weights[i];
        second += weights[i] * values[i] * values[i];
      }
      return total > 0.0 ? second / total / (m * m) - 1.0 : 0.0;
    }
  }
  return 0.0;
}

void Distribution::validate(std::string_view what) const {
  const auto fail = [&](const char* field, const char* expected) {
    throw std::invalid_argument(std::string(what) + "." + field + ": expected " + expected);
  };
  if (kind == Kind::sum) {
    for (std::size_t i = 0; i < terms.size(); ++i)
      terms[i].validate(std::string(what) + ".terms[" + std::to_string(i) + "]");
    return;
  }
  if (kind == Kind::empirical) {
    if (values.empty() || values.size() != weights.size())
      fail("values", "a non-empty list with one weight per value");
    double total = 0.0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (!(values[i] >= 0.0) || !std::isfinite(values[i])) fail("values", "finite numbers >= 0");
      if (!(weights[i] >= 0.0) || !std::isfinite(weights[i])) fail("weights", "finite weights >= 0");
      total += weights[i];
    }
    if (!(total > 0.0)) fail("weights", "at least one weight > 0");
    return;
  }
  if (kind == Kind::uniform) {
    if (!(low >= 0.0) || !std::isfinite(high) || !(high >= low)) fail("low/high", "0 <= low <= high < inf");
    return;
  }
  if (!(mean >= 0.0) || !std::isfinite(mean)) fail("mean", "a finite number >= 0");
  if (kind == Kind::lognormal && (!(cv >= 0.0) || !std::isfinite(cv))) fail("cv", "a finite number >= 0");
  if (kind == Kind::weibull && (!(shape > 0.0) || !std::isfinite(shape))) fail("shape", "a finite number > 0");
}

}  // namespace cs::work
