#include "sim/serving/quantile_sketch.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cs::serving {

namespace {

// Bins such that each is at most (1 + e)^2 wide as a ratio: the geometric centre of a bin is
// then within a factor (1 + e) of every value in it.
unsigned bins_for(const QuantileSketch::Options& o) {
  if (!(o.relative_error > 0) || !(o.lowest > 0) || !(o.highest > o.lowest)) {
    throw std::invalid_argument("QuantileSketch: needs relative_error > 0 and 0 < lowest < highest");
  }
  const double bins = std::ceil(std::log(o.highest / o.lowest) / (2 * std::log1p(o.relative_error)));
  return static_cast<unsigned>(std::max(1.0, bins));
}

}  // namespace

QuantileSketch::QuantileSketch(const Options& options)
    : options_(options),
      histogram_(boost::histogram::make_histogram_with(
          boost::histogram::dense_storage<uint64_t>(),
          Axis(bins_for(options), options.lowest, options.highest))) {}

void QuantileSketch::add(double x) {
  if (count_ == 0) {
    min_ = max_ = x;
  } else {
    min_ = std::min(min_, x);
    max_ = std::max(max_, x);
  }
  ++count_;
  sum_ += x;
  histogram_(x > 0 ? x : 0.0);  // zeros and negatives land in the underflow bin
  if (count_ <= options_.exact_limit) {
    samples_.push_back(x);
    sorted_ = false;
  } else if (!samples_.empty()) {
    std::vector<double>().swap(samples_);  // past the limit: the histogram answers
  }
}

void QuantileSketch::merge(const QuantileSketch& other) {
  if (other.options_.exact_limit != options_.exact_limit ||
      other.options_.relative_error != options_.relative_error ||
      other.options_.lowest != options_.lowest || other.options_.highest != options_.highest) {
    throw std::invalid_argument("QuantileSketch::merge: different options");
  }
  if (other.count_ == 0) return;
  if (count_ == 0) {
    min_ = other.min_;
    max_ = other.max_;
  } else {
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }
  count_ += other.count_;
  sum_ += other.sum_;
  histogram_ += other.histogram_;
  if (count_ <= options_.exact_limit) {
    samples_.insert(samples_.end(), other.samples_.begin(), other.samples_.end());
    sorted_ = false;
  } else {
    std::vector<double>().swap(samples_);
  }
}

void QuantileSketch::clear() {
  histogram_.reset();
  samples_.clear();
  sorted_ = true;
  count_ = 0;
  sum_ = 0;
  min_ = max_ = 0;
}

QuantileSketch::Mark QuantileSketch::mark() const {
  Mark m;
  m.counts_.reserve(static_cast<std::size_t>(histogram_.axis().size()) + 2);
  for (int i = -1; i <= histogram_.axis().size(); ++i) m.counts_.push_back(histogram_.at(i));
  return m;
}

uint64_t QuantileSketch::count_since(const Mark& mark) const {
  uint64_t n = 0;
  for (int i = -1; i <= histogram_.axis().size(); ++i) {
    n += histogram_.at(i) - (mark.counts_.empty() ? 0 : mark.counts_[static_cast<std::size_t>(i + 1)]);
  }
  return n;
}

double QuantileSketch::quantile_since(double p, const Mark& mark) const {
  const auto since = [&](int i) {
    return histogram_.at(i) - (mark.counts_.empty() ? 0 : mark.counts_[static_cast<std::size_t>(i + 1)]);
  };
  const uint64_t n = count_since(mark);
  if (n == 0) return 0.0;
  const auto rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(std::clamp(p, 0.0, 1.0) * static_cast<double>(n))));
  const Axis& axis = histogram_.axis();
  uint64_t seen = since(-1);
  if (seen >= rank) return min_;
  for (int i = 0; i < axis.size(); ++i) {
    seen += since(i);
    if (seen >= rank) return std::clamp(axis.value(i + 0.5), min_, max_);
  }
  return max_;
}

double QuantileSketch::quantile(double p) const {
  if (count_ == 0) return 0.0;
  p = std::clamp(p, 0.0, 1.0);
  // Nearest rank, 1-based: at least ceil(p * n) samples are <= the answer.
  const auto rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(p * static_cast<double>(count_))));
  if (exact()) {
    if (!sorted_) {
      std::sort(samples_.begin(), samples_.end());
      sorted_ = true;
    }
    return samples_[rank - 1];
  }
  const Axis& axis = histogram_.axis();
  uint64_t seen = histogram_.at(-1);  // underflow
  if (seen >= rank) return min_;
  for (int i = 0; i < axis.size(); ++i) {
    seen += histogram_.at(i);
    if (seen >= rank) {
      // Geometric centre of the bin, kept inside what was observed.
      return std::clamp(axis.value(i + 0.5), min_, max_);
    }
  }
  return max_;  // overflow
}

}  // namespace cs::serving
