#pragma once
// Helpers shared by the serving tests: closed-form queueing results and small configs.
#include <cmath>
#include <cstdint>
#include <vector>

#include "sim/serving/serving_fleet.hpp"

namespace cs::serving::test {

// Erlang C: probability that an arrival waits in an M/M/c queue with offered load a = lambda
// / mu (Erlangs) and c servers; requires a < c.
inline double erlang_c(int c, double a) {
  double term = 1, sum = 0;  // a^k / k!
  for (int k = 0; k < c; ++k) {
    sum += term;
    term *= a / (k + 1);
  }
  const double tail = term * c / (c - a);  // a^c / c! * 1 / (1 - rho)
  return tail / (sum + tail);
}

// Mean wait in queue of M/M/c (Erlang C).
inline double mmc_mean_wait(int c, double lambda, double mu) {
  return erlang_c(c, lambda / mu) / (c * mu - lambda);
}

// Pollaczek-Khinchine mean wait of M/G/1: lambda E[S^2] / (2 (1 - rho)).
inline double pk_mean_wait(double lambda, double mean_s, double scv) {
  const double rho = lambda * mean_s;
  const double second_moment = mean_s * mean_s * (1 + scv);
  return lambda * second_moment / (2 * (1 - rho));
}

struct Sample {
  double mean = 0, standard_error = 0;
};

// Mean and standard error over independent replications.
inline Sample across(const std::vector<double>& values) {
  Sample s;
  const auto n = static_cast<double>(values.size());
  for (const double v : values) s.mean += v / n;
  double ss = 0;
  for (const double v : values) ss += (v - s.mean) * (v - s.mean);
  s.standard_error = std::sqrt(ss / (n - 1) / n);
  return s;
}

// A plain-server fleet with `replicas` fixed replicas of `concurrency` slots.
inline ServingConfig plain_fleet(int replicas, int concurrency, double rate_per_s,
                                 work::Distribution service, double until_s) {
  ServingConfig c;
  c.arrivals.process = work::ArrivalProcess::poisson;
  c.arrivals.rate_per_s = rate_per_s;
  c.request.service_time = service;
  c.replica.kind = ReplicaKind::server;
  c.replica.server.concurrency = concurrency;
  c.fleet.autoscaler.policy = ScalingPolicy::fixed;
  c.fleet.autoscaler.replicas = replicas;
  c.fleet.pool.cold_start = ColdStartSpec::none();
  c.until_s = until_s;
  c.timeseries_interval_s = 0;
  return c;
}

}  // namespace cs::serving::test
