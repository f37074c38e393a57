#include "sim/engine/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <boost/math/distributions/students_t.hpp>

namespace cs::engine {

double mean(std::span<const double> values) {
  if (values.empty()) return 0.0;
  double sum = 0.0;
  for (const double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double sample_sd(std::span<const double> values) {
  if (values.size() < 2) return 0.0;
  // Two passes: the sum of squared deviations from the mean does not cancel catastrophically
  // the way sum(x^2) - n mean^2 does for large, close values (wall times in days).
  const double m = mean(values);
  double ss = 0.0;
  for (const double v : values) ss += (v - m) * (v - m);
  return std::sqrt(ss / static_cast<double>(values.size() - 1));
}

double student_t975(double df) {
  if (!(df >= 1.0)) throw std::invalid_argument("student_t975: need df >= 1");
  return boost::math::quantile(boost::math::students_t_distribution<double>(df), 0.975);
}

double ci95_halfwidth(double sd, std::size_t n) {
  if (n < 2) return 0.0;
  return student_t975(static_cast<double>(n - 1)) * sd / std::sqrt(static_cast<double>(n));
}

MeanCi mean_ci95(std::span<const double> values) {
  MeanCi r;
  r.n = values.size();
  r.mean = mean(values);
  r.sd = sample_sd(values);
  r.ci95 = ci95_halfwidth(r.sd, r.n);
  return r;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  const std::size_t n = values.size();
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
  rank = std::clamp<std::size_t>(rank, 1, n);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(rank - 1),
                   values.end());
  return values[rank - 1];
}

}  // namespace cs::engine
