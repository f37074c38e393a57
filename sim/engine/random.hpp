#pragma once
// Random streams: one independent, reproducible stream per named entity.
//
// Reproducibility
// - The bit stream is std::mt19937_64, whose output the C++ standard fixes exactly, seeded
//   through std::seed_seq (also fixed by the standard) from SplitMix64 words: the same seed
//   gives the same 64-bit words on every standard library.
// - Distributions are written here with explicit formulas (std::*_distribution differ
//   between standard libraries). Integer and uniform draws are bit-identical everywhere;
//   draws that go through log/exp/sin/cos/sqrt are identical wherever the math library
//   rounds those the same way (glibc on x86-64 and aarch64 does).
// - Each draw consumes a documented number of 64-bit words, so a stream's state after a
//   sequence of calls does not depend on the platform either.
//
// Units: every distribution returns values in the units of its parameters (a mean in
// seconds gives seconds). Invalid parameters throw std::invalid_argument.
#include <cstddef>
#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

namespace cs::engine {

// FNV-1a, 64-bit: hashes entity names into stream seeds.
constexpr uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// SplitMix64: advances `state` and returns the next output.
constexpr uint64_t splitmix64_next(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Seed of the stream named `entity` in a simulation seeded with `sim_seed`.
constexpr uint64_t stream_seed(uint64_t sim_seed, std::string_view entity) {
  uint64_t state = sim_seed;
  const uint64_t mixed_seed = splitmix64_next(state);
  state = mixed_seed ^ fnv1a64(entity);
  return splitmix64_next(state);
}

class RandomStream;

// A discrete distribution's running sums, made once: RandomStream::discrete(table) draws, from
// the same word, the index that discrete(weights, n) draws, with the same sums in the same
// order and the same comparisons, without summing and checking the weights on every draw.
// Weights that discrete(weights, n) refuses make a table whose draws throw its error.
class DiscreteTable {
 public:
  DiscreteTable() = default;  // no weights: its draws throw
  DiscreteTable(const double* weights, std::size_t n);

 private:
  friend class RandomStream;
  double total_ = 0.0;             // the sum of every weight, in order
  std::vector<double> running_;    // the sum up to each positive weight, in order
  std::vector<std::size_t> index_;  // that weight's index
  const char* error_ = "RandomStream::discrete: need 0 < sum < inf";
};

class RandomStream {
 public:
  // The full 312-word engine state is filled from SplitMix64(seed) via std::seed_seq.
  explicit RandomStream(uint64_t seed);
  // The stream of `entity` in a simulation seeded with `sim_seed` (Simulator::random uses it).
  RandomStream(uint64_t sim_seed, std::string_view entity)
      : RandomStream(stream_seed(sim_seed, entity)) {}

  uint64_t seed() const { return seed_; }

  // Raw 64-bit word (1 word).
  uint64_t next_u64() { return engine_(); }
  // Uniform in [0, 1), multiples of 2^-53 (1 word).
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  // Uniform in [a, b) for a < b; a when a == b (1 word).
  double uniform(double a, double b);
  // Uniform integer in [0, n), exactly unbiased (rejection; 1 word, rarely more). n > 0.
  uint64_t uniform_int(uint64_t n);
  // Uniform integer in [lo, hi] inclusive, lo <= hi.
  int64_t uniform_int(int64_t lo, int64_t hi);
  // true with probability p in [0, 1] (1 word).
  bool bernoulli(double p);
  // Exponential with the given mean >= 0, by inverse CDF: -mean * ln(1 - U) (1 word).
  double exponential(double mean);
  // Normal(mean, sd), sd >= 0, by Box-Muller. Draws come in pairs: the second value of a
  // pair is kept and returned by the next call (2 words per pair). normal() and lognormal()
  // share the cached value; reset_normal_cache() drops it.
  double normal(double mean = 0.0, double sd = 1.0);
  // exp(Normal(mu, sigma)): mu and sigma of the underlying normal (in log units).
  double lognormal(double mu, double sigma);
  // Lognormal with the given mean > 0 and coefficient of variation cv >= 0 (sd / mean).
  double lognormal_from_mean_cv(double mean, double cv);
  // Weibull(shape k > 0, scale > 0) by inverse CDF (1 word): times to hardware failure.
  double weibull(double shape, double scale);
  // Index in [0, n) drawn with probability weights[i] / sum (weights >= 0, sum > 0).
  std::size_t discrete(const double* weights, std::size_t n);
  // The same draw from a table of the weights made once (1 word).
  std::size_t discrete(const DiscreteTable& table);

  void reset_normal_cache() { has_cached_normal_ = false; }

 private:
  uint64_t seed_;
  std::mt19937_64 engine_;
  double cached_normal_ = 0.0;
  bool has_cached_normal_ = false;
};

}  // namespace cs::engine
