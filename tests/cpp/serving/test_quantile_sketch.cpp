// The quantile sketch's exactness and error bound, and percentiles since a mark.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/engine/random.hpp"
#include "sim/serving/quantile_sketch.hpp"

using namespace cs::serving;

TEST_CASE("Quantile sketch: exact for small runs, within its relative error beyond",
          "[serving][sketch]") {
  QuantileSketch::Options options;
  options.exact_limit = 1000;
  QuantileSketch sketch(options);
  std::vector<double> values;
  cs::engine::RandomStream rng(42);
  for (int i = 0; i < 1000; ++i) {
    values.push_back(rng.lognormal_from_mean_cv(0.2, 2));
    sketch.add(values.back());
  }
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  REQUIRE(sketch.exact());
  CHECK(sketch.quantile(0.5) == sorted[499]);   // nearest rank: ceil(0.5 * 1000) = 500th
  CHECK(sketch.quantile(0.99) == sorted[989]);
  CHECK(sketch.quantile(1.0) == sorted.back());
  for (int i = 0; i < 500000; ++i) {
    values.push_back(rng.lognormal_from_mean_cv(0.2, 2));
    sketch.add(values.back());
  }
  sorted = values;
  std::sort(sorted.begin(), sorted.end());
  CHECK_FALSE(sketch.exact());
  for (const double p : {0.01, 0.5, 0.9, 0.95, 0.99, 0.999}) {
    const auto rank = static_cast<std::size_t>(std::ceil(p * sorted.size()));
    const double exact = sorted[rank - 1];
    INFO("p = " << p);
    CHECK(std::abs(sketch.quantile(p) - exact) <= options.relative_error * exact * (1 + 1e-9));
  }
  double mean = 0;
  for (const double v : values) mean += v;
  CHECK(sketch.mean() == Approx(mean / values.size()));
  // Merging two halves gives the whole.
  QuantileSketch a(options), b(options);
  for (std::size_t i = 0; i < values.size(); ++i) (i % 2 ? a : b).add(values[i]);
  a.merge(b);
  CHECK(a.count() == sketch.count());
  CHECK(a.quantile(0.99) == sketch.quantile(0.99));
}

TEST_CASE("Quantile sketch: percentiles of the samples since a mark", "[serving][sketch]") {
  QuantileSketch sketch;
  cs::engine::RandomStream rng(7);
  for (int i = 0; i < 20000; ++i) sketch.add(rng.exponential(1.0));
  const QuantileSketch::Mark mark = sketch.mark();
  std::vector<double> later;
  for (int i = 0; i < 20000; ++i) {
    later.push_back(10 + rng.exponential(1.0));
    sketch.add(later.back());
  }
  std::sort(later.begin(), later.end());
  CHECK(sketch.count_since(mark) == 20000);
  for (const double p : {0.5, 0.99}) {
    const double exact = later[static_cast<std::size_t>(std::ceil(p * 20000)) - 1];
    CHECK(std::abs(sketch.quantile_since(p, mark) - exact) <= 0.005 * exact * (1 + 1e-9));
  }
  CHECK(sketch.quantile_since(0.5, sketch.mark()) == 0);  // nothing since
  CHECK(sketch.count_since(QuantileSketch::Mark{}) == sketch.count());
}
