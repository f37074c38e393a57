// Statistics of replications: mean, sample sd, Student-t 95% interval, nearest-rank percentile.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "sim/engine/statistics.hpp"

using namespace cs::engine;

TEST_CASE("Student's t 97.5% quantiles match the published table", "[statistics]") {
  // Two-sided 95% critical values (any statistics table): df 1, 2, 9, 30, 100.
  CHECK(student_t975(1) == Approx(12.7062).epsilon(1e-5));
  CHECK(student_t975(2) == Approx(4.3027).epsilon(1e-4));
  CHECK(student_t975(9) == Approx(2.2622).epsilon(1e-4));
  CHECK(student_t975(30) == Approx(2.0423).epsilon(1e-4));
  CHECK(student_t975(100) == Approx(1.9840).epsilon(1e-4));
  CHECK_THROWS_AS(student_t975(0.5), std::invalid_argument);
}

TEST_CASE("mean_ci95 of a small sample, worked by hand", "[statistics]") {
  // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squared deviations sum 32, sample variance 32/7.
  const std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
  const MeanCi s = mean_ci95(v);
  CHECK(s.n == 8);
  CHECK(s.mean == Approx(5.0));
  CHECK(s.sd == Approx(std::sqrt(32.0 / 7.0)));
  // t(0.975, 7) = 2.3646.
  CHECK(s.ci95 == Approx(2.3646 * std::sqrt(32.0 / 7.0) / std::sqrt(8.0)).epsilon(1e-4));
}

TEST_CASE("Degenerate inputs give zeros, not NaN", "[statistics]") {
  const std::vector<double> none;
  const std::vector<double> one{3.5};
  CHECK(mean_ci95(none).mean == 0.0);
  CHECK(mean_ci95(none).ci95 == 0.0);
  CHECK(mean_ci95(one).mean == 3.5);
  CHECK(mean_ci95(one).ci95 == 0.0);
  CHECK(sample_sd(one) == 0.0);
  CHECK(percentile({}, 50) == 0.0);
}

TEST_CASE("Nearest-rank percentiles", "[statistics]") {
  const std::vector<double> v{15, 20, 35, 40, 50};
  // Nearest rank: ceil(p/100 x 5): p30 -> 2nd (20), p40 -> 2nd (20), p50 -> 3rd (35),
  // p100 -> 5th (50).
  CHECK(percentile(v, 30) == 20);
  CHECK(percentile(v, 40) == 20);
  CHECK(percentile(v, 50) == 35);
  CHECK(percentile(v, 100) == 50);
}

TEST_CASE("Large close values keep their spread", "[statistics]") {
  // Wall times near 5e6 s differing by 1 s: a one-pass sum of squares would lose them.
  const std::vector<double> v{5e6 + 1, 5e6 + 2, 5e6 + 3};
  CHECK(sample_sd(v) == Approx(1.0).epsilon(1e-12));
}
