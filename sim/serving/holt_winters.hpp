#pragma once
// Additive Holt-Winters (triple exponential smoothing) over a series sampled at a fixed
// interval with a season of `season_length` samples (a day of 15-minute buckets: 96):
//   level_t  = alpha (x_t - s_{t-m}) + (1 - alpha)(level + trend)
//   trend_t  = beta (level_t - level) + (1 - beta) trend
//   s_t      = gamma (x_t - level_t) + (1 - gamma) s_{t-m}
//   forecast(h) = level + h trend + s_{t+h-m}  (h >= 1 samples ahead)
// Initial level, trend and seasonal terms come from a least-squares fit (Eigen, column-pivoting
// QR) of x_t = level + trend t + s_{t mod m} with the seasonal terms summing to zero, over the
// first two seasons; the forecast is available from then on.
#include <cstddef>
#include <vector>

namespace cs::serving {

class HoltWinters {
 public:
  // season_length >= 2; smoothing factors in [0, 1]. Throws std::invalid_argument.
  HoltWinters(std::size_t season_length, double alpha, double beta, double gamma);

  void add(double x);
  bool ready() const { return initialized_; }
  // Forecast h >= 1 samples after the last one added; 0 before ready().
  double forecast(std::size_t h) const;
  std::size_t samples() const { return count_; }

 private:
  void initialize();

  std::size_t m_;
  double alpha_, beta_, gamma_;
  std::vector<double> history_;  // the first two seasons, until initialized
  std::vector<double> season_;
  double level_ = 0, trend_ = 0;
  std::size_t count_ = 0;
  bool initialized_ = false;
};

}  // namespace cs::serving
