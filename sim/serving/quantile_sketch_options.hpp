#pragma once
// The quantile sketch's settings (quantile_sketch.hpp), apart from the sketch and its
// Boost.Histogram, for the configurations that hold them.
#include <cstddef>

namespace cs::serving {

struct QuantileSketchOptions {
  std::size_t exact_limit = 100000;  // samples kept (exact quantiles) before the histogram alone answers
  double relative_error = 0.005;     // > 0
  double lowest = 1e-6;              // > 0
  double highest = 1e7;              // > lowest
};

}  // namespace cs::serving
