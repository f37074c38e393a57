#include "sim/engine/random.hpp"

#include <array>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace cs::engine {

namespace {

std::mt19937_64 make_engine(uint64_t seed) {
  // A single 64-bit seed would leave most of the 19937-bit state a fixed function of one
  // word through a weak recurrence; std::seed_seq spreads 8 well-mixed words over all of it.
  uint64_t state = seed;
  std::array<uint32_t, 16> words{};
  for (std::size_t i = 0; i < words.size(); i += 2) {
    const uint64_t w = splitmix64_next(state);
    words[i] = static_cast<uint32_t>(w);
    words[i + 1] = static_cast<uint32_t>(w >> 32);
  }
  std::seed_seq seq(words.begin(), words.end());
  return std::mt19937_64(seq);
}

void require(bool ok, const char* message) {
  if (!ok) throw std::invalid_argument(message);
}

}  // namespace

RandomStream::RandomStream(uint64_t seed) : seed_(seed), engine_(make_engine(seed)) {}

double RandomStream::uniform(double a, double b) {
  require(a <= b, "RandomStream::uniform: need a <= b");
  const double x = a + (b - a) * uniform();
  // a + (b - a) * u can round up to b; keep the interval half-open.
  return (x < b || a == b) ? x : std::nextafter(b, a);
}

uint64_t RandomStream::uniform_int(uint64_t n) {
  require(n > 0, "RandomStream::uniform_int: need n > 0");
  // Reject the top partial block of 2^64 mod n values so that every residue is equally
  // likely. The rejection probability is below n / 2^64.
  // The threshold (2^64 mod n) is below n: a word r >= n passes without it (all but a share
  // n / 2^64 of them), so its division is made only for the others.
  for (;;) {
    const uint64_t r = engine_();
    if (r >= n || r >= (0 - n) % n) return r % n;
  }
}

int64_t RandomStream::uniform_int(int64_t lo, int64_t hi) {
  require(lo <= hi, "RandomStream::uniform_int: need lo <= hi");
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span == ~uint64_t{0}) return static_cast<int64_t>(engine_());
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + uniform_int(span + 1));
}

bool RandomStream::bernoulli(double p) {
  require(p >= 0.0 && p <= 1.0, "RandomStream::bernoulli: need p in [0, 1]");
  return uniform() < p;
}

double RandomStream::exponential(double mean) {
  require(mean >= 0.0, "RandomStream::exponential: need mean >= 0");
  // 1 - U lies in (0, 1], so the log is finite.
  return -mean * std::log1p(-uniform());
}

double RandomStream::normal(double mean, double sd) {
  require(sd >= 0.0, "RandomStream::normal: need sd >= 0");
  if (has_cached_normal_) {
    has_cached_normal_ = false;
    return mean + sd * cached_normal_;
  }
  const double u1 = 1.0 - uniform();  // (0, 1]: log(u1) is finite
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * std::numbers::pi * u2;
  cached_normal_ = r * std::sin(theta);
  has_cached_normal_ = true;
  return mean + sd * (r * std::cos(theta));
}

double RandomStream::lognormal(double mu, double sigma) {
  require(sigma >= 0.0, "RandomStream::lognormal: need sigma >= 0");
  return std::exp(normal(mu, sigma));
}

double RandomStream::lognormal_from_mean_cv(double mean, double cv) {
  require(mean > 0.0, "RandomStream::lognormal_from_mean_cv: need mean > 0");
  require(cv >= 0.0, "RandomStream::lognormal_from_mean_cv: need cv >= 0");
  // For X = exp(N(mu, s^2)): E[X] = exp(mu + s^2/2), CV^2 = exp(s^2) - 1.
  const double s2 = std::log1p(cv * cv);
  return lognormal(std::log(mean) - 0.5 * s2, std::sqrt(s2));
}

double RandomStream::weibull(double shape, double scale) {
  require(shape > 0.0 && scale > 0.0, "RandomStream::weibull: need shape > 0 and scale > 0");
  return scale * std::pow(-std::log1p(-uniform()), 1.0 / shape);
}

DiscreteTable::DiscreteTable(const double* weights, std::size_t n) {
  double total = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!(weights[i] >= 0.0)) {
      error_ = "RandomStream::discrete: negative weight";
      return;
    }
    total += weights[i];
  }
  if (!(total > 0.0 && std::isfinite(total))) return;  // error_: the sum's
  total_ = total;
  double acc = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (weights[i] <= 0.0) continue;
    acc += weights[i];
    running_.push_back(acc);
    index_.push_back(i);
  }
  error_ = nullptr;
}

std::size_t RandomStream::discrete(const DiscreteTable& t) {
  if (t.error_ != nullptr) throw std::invalid_argument(t.error_);
  const double x = uniform() * t.total_;
  const std::size_t n = t.running_.size();
  for (std::size_t k = 0; k < n; ++k) {
    if (x < t.running_[k]) return t.index_[k];
  }
  return t.index_[n - 1];  // x can reach the rounded sum
}

// The one-off form builds the table it draws from: one piece of code sums, checks and searches.
std::size_t RandomStream::discrete(const double* weights, std::size_t n) {
  return discrete(DiscreteTable(weights, n));
}

}  // namespace cs::engine
