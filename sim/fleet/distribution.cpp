#include "sim/fleet/distribution.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace cs::fleet {

std::string_view to_string(Distribution::Kind k) {
  switch (k) {
    case Distribution::Kind::constant: return "constant";
    case Distribution::Kind::exponential: return "exponential";
    case Distribution::Kind::lognormal: return "lognormal";
    case Distribution::Kind::weibull: return "weibull";
    case Distribution::Kind::uniform: return "uniform";
    case Distribution::Kind::sum: return "sum";
  }
  return "?";
}

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

double Distribution::expected() const { return kind == Kind::uniform ? 0.5 * (low + high) : mean; }

double Distribution::sample(engine::RandomStream& rng) const {
  switch (kind) {
    case Kind::constant: return mean;
    case Kind::exponential: return rng.exponential(mean);
    case Kind::lognormal: return mean > 0.0 ? rng.lognormal_from_mean_cv(mean, cv) : 0.0;
    case Kind::weibull:
      return mean > 0.0 ? rng.weibull(shape, mean / std::tgamma(1.0 + 1.0 / shape)) : 0.0;
    case Kind::uniform: return rng.uniform(low, high);
    case Kind::sum: {
      double total = 0.0;
      for (const Distribution& t : terms) total += t.sample(rng);
      return total;
    }
  }
  return mean;
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
  if (kind == Kind::uniform) {
    if (!(low >= 0.0) || !std::isfinite(high) || !(high >= low))
      fail("low/high", "0 <= low <= high < inf");
    return;
  }
  if (!(mean >= 0.0) || !std::isfinite(mean)) fail("mean", "a finite number >= 0");
  if (kind == Kind::lognormal && (!(cv >= 0.0) || !std::isfinite(cv)))
    fail("cv", "a finite number >= 0");
  if (kind == Kind::weibull && (!(shape > 0.0) || !std::isfinite(shape)))
    fail("shape", "a finite number > 0");
}

}  // namespace cs::fleet
