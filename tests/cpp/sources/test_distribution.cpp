// The samplers of the workloads' distributions against their means, sums of terms, validation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <stdexcept>

#include "sim/engine/random.hpp"
#include "sim/sources/distribution.hpp"

using namespace cs::sources;

TEST_CASE("Delay distributions have the means they are given", "[sources][distribution]") {
  cs::engine::RandomStream rng(99, "test");
  const auto sample_mean = [&](const Distribution& d) {
    double s = 0.0;
    for (int i = 0; i < 200000; ++i) s += sample(d, rng);
    return s / 200000;
  };
  CHECK(sample_mean(Distribution::constant(7.0)) == 7.0);
  CHECK(sample_mean(Distribution::exponential(600.0)) == Approx(600).epsilon(0.01));
  CHECK(sample_mean(Distribution::lognormal(600.0, 1.0)) == Approx(600).epsilon(0.02));
  CHECK(sample_mean(Distribution::weibull(600.0, 0.7)) == Approx(600).epsilon(0.02));
  CHECK(sample_mean(Distribution::uniform(100.0, 300.0)) == Approx(200).epsilon(0.01));
  CHECK(Distribution::uniform(100.0, 300.0).expected() == 200.0);
  CHECK_THROWS_AS(Distribution::exponential(-1).validate("d"), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::weibull(1, 0).validate("d"), std::invalid_argument);
  // A sum (boot + image pull): constant when every term is, else the terms drawn and added.
  const Distribution constant_sum = Distribution::sum({Distribution::constant(240), Distribution::constant(60)});
  CHECK(constant_sum.kind == Distribution::Kind::constant);
  CHECK(constant_sum.expected() == 300.0);
  const Distribution sum = Distribution::sum({Distribution::exponential(240), Distribution::constant(60)});
  CHECK(sum.kind == Distribution::Kind::sum);
  CHECK(sum.expected() == 300.0);
  CHECK(sample_mean(sum) == Approx(300).epsilon(0.01));
  double smallest = 1e300;
  for (int i = 0; i < 1000; ++i) smallest = std::min(smallest, sample(sum, rng));
  CHECK(smallest >= 60.0);  // never below its constant term
  CHECK_THROWS_AS(Distribution::sum({Distribution::exponential(-1), Distribution::exponential(1)}).validate("d"),
                  std::invalid_argument);
}
