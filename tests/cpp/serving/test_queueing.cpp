// Closed-form queueing results: M/M/c against Erlang C, M/M/1 and M/D/1 against
// Pollaczek-Khinchine. Each case runs independent replications (seeds 1..R) and asserts the
// simulated mean wait within 4 standard errors of the formula (and within a few percent).
#include <catch2/catch.hpp>

#include "serving_test_support.hpp"

using namespace cs::serving;
using namespace cs::serving::test;

namespace {

Sample mean_wait(const ServingConfig& config, int replications) {
  std::vector<double> waits;
  for (int seed = 1; seed <= replications; ++seed) {
    const ServingResult r = run_serving(config, static_cast<uint64_t>(seed));
    REQUIRE(r.completed > 0);
    waits.push_back(r.wait_mean_s);
  }
  return across(waits);
}

}  // namespace

// The three closed-form cases are [heavy] (8 replications of thousands of simulated seconds:
// their sample is the point); the sanitized ctest leaves them out and runs the last case's
// plain fleet, and test_balancer_pool.cpp's central queue.
TEST_CASE("M/M/c with a central queue matches Erlang C's mean wait", "[serving][queueing][heavy]") {
  const int c = 8;
  const double mu = 1.0 / 0.05;  // 50 ms mean service
  const double rho = GENERATE(0.5, 0.85);
  const double lambda = rho * c * mu;
  ServingConfig config = plain_fleet(c, 1, lambda, cs::work::Distribution::exponential(1 / mu), 4000);
  config.fleet.pool.balance = BalancePolicy::central_queue;
  config.stats_start_s = 100;  // drop the empty-system start
  const Sample sim = mean_wait(config, 8);
  const double theory = mmc_mean_wait(c, lambda, mu);
  INFO("rho " << rho << ": simulated " << sim.mean << " +- " << sim.standard_error << ", Erlang C "
              << theory);
  CHECK(std::abs(sim.mean - theory) < 4 * sim.standard_error);
  CHECK(sim.mean == Approx(theory).epsilon(0.03));
}

TEST_CASE("M/M/1 and M/D/1 match Pollaczek-Khinchine", "[serving][queueing][heavy]") {
  const double mean_s = 0.01;
  const double rho = 0.8;
  const double lambda = rho / mean_s;
  const bool deterministic = GENERATE(false, true);
  const cs::work::Distribution service = deterministic ? cs::work::Distribution::constant(mean_s)
                                                       : cs::work::Distribution::exponential(mean_s);
  ServingConfig config = plain_fleet(1, 1, lambda, service, 2000);
  config.stats_start_s = 50;
  const Sample sim = mean_wait(config, 8);
  const double theory = pk_mean_wait(lambda, mean_s, deterministic ? 0.0 : 1.0);
  // M/M/1: rho / (mu - lambda); M/D/1: rho / (2 mu (1 - rho)).
  const double textbook = deterministic ? rho * mean_s / (2 * (1 - rho)) : rho / (1 / mean_s - lambda);
  REQUIRE(theory == Approx(textbook));
  INFO((deterministic ? "M/D/1" : "M/M/1") << ": simulated " << sim.mean << " +- "
                                           << sim.standard_error << ", P-K " << theory);
  CHECK(std::abs(sim.mean - theory) < 4 * sim.standard_error);
  CHECK(sim.mean == Approx(theory).epsilon(0.03));
}

TEST_CASE("A server with c slots is an M/M/c station too", "[serving][queueing][heavy]") {
  // One replica with concurrency 4 and its own FCFS queue: the same queue as 4 single-slot
  // replicas behind a central queue.
  const double mu = 10, lambda = 0.75 * 4 * mu;
  ServingConfig config = plain_fleet(1, 4, lambda, cs::work::Distribution::exponential(1 / mu), 3000);
  config.stats_start_s = 50;
  const Sample sim = mean_wait(config, 8);
  const double theory = mmc_mean_wait(4, lambda, mu);
  CHECK(std::abs(sim.mean - theory) < 4 * sim.standard_error);
}

TEST_CASE("Little's law and conservation hold for a plain fleet", "[serving][queueing]") {
  ServingConfig config = plain_fleet(3, 2, 40, cs::work::Distribution::exponential(0.1), 2000);
  const ServingResult r = run_serving(config, 7);
  CHECK(r.requests == r.completed + r.dropped + r.in_flight);
  CHECK(r.dropped == 0);
  // Mean latency = mean wait + mean service (exponential, 0.1 s).
  CHECK(r.latency_mean_s == Approx(r.wait_mean_s + 0.1).epsilon(0.03));
  CHECK(r.replicas_mean == Approx(3));
  CHECK(r.replicas_max == 3);
}
