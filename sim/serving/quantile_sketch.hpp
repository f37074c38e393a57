#pragma once
// Percentiles over any number of samples in bounded memory (latencies, waits, TTFT, TPOT).
//
// Exact for small runs, bounded relative error beyond:
// - While at most `exact_limit` samples have been added, they are kept and quantile() is the
//   exact nearest-rank sample quantile (the smallest sample x with at least ceil(p * n)
//   samples <= x).
// - Every sample also goes into a histogram (Boost.Histogram, a regular axis in log space over
//   [lowest, highest]) whose bins are at most (1 + relative_error)^2 wide as a ratio. Past
//   exact_limit the kept samples are dropped and quantile() answers with the geometric centre
//   of the bin holding the nearest-rank sample: within `relative_error` of it (relatively).
//   Samples below `lowest` (zeros too) or above `highest` are counted in the under/overflow
//   bins and answered with the smallest / largest sample seen.
// Memory: 8 bytes per bin (about 3,000 bins for 0.5% over 1 us .. 1e7 s) plus the exact
// samples (8 bytes each) while they are kept.
//
// count(), mean(), min(), max() are always exact.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <boost/histogram.hpp>

#include "sim/serving/quantile_sketch_options.hpp"

namespace cs::serving {

class QuantileSketch {
 public:
  using Options = QuantileSketchOptions;

  QuantileSketch() : QuantileSketch(Options{}) {}
  explicit QuantileSketch(const Options& options);

  void add(double x);
  // Adds every sample of `other` (same Options required: std::invalid_argument otherwise).
  void merge(const QuantileSketch& other);
  void clear();

  uint64_t count() const { return count_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  double min() const { return count_ ? min_ : 0.0; }
  double max() const { return count_ ? max_ : 0.0; }
  // Nearest-rank p-quantile, p in [0, 1]; 0 when empty.
  double quantile(double p) const;
  // True while quantile() is exact.
  bool exact() const { return count_ <= options_.exact_limit; }

  // The samples added since a mark, from the histogram alone (so within relative_error even
  // when few): per-window percentiles without a second sketch to fill. A mark is the
  // histogram's counts when it was taken.
  class Mark {
   public:
    Mark() = default;

   private:
    friend class QuantileSketch;
    std::vector<uint64_t> counts_;  // empty: the start
  };
  Mark mark() const;
  uint64_t count_since(const Mark& mark) const;
  // Nearest-rank p-quantile of the samples added since `mark` (0 when none).
  double quantile_since(double p, const Mark& mark) const;
  const Options& options() const { return options_; }

 private:
  using Axis = boost::histogram::axis::regular<double, boost::histogram::axis::transform::log>;
  using Histogram = boost::histogram::histogram<std::tuple<Axis>, boost::histogram::dense_storage<uint64_t>>;

  Options options_;
  Histogram histogram_;
  mutable std::vector<double> samples_;
  mutable bool sorted_ = true;
  uint64_t count_ = 0;
  double sum_ = 0;
  double min_ = 0, max_ = 0;
};

}  // namespace cs::serving
