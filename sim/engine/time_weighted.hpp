#pragma once
// A piecewise-constant quantity over simulated time (replicas running, queue length): its
// time average and maximum. set() at every change; mean(now) integrates up to `now`.
#include <algorithm>

namespace cs::engine {

class TimeWeighted {
 public:
  explicit TimeWeighted(double start_s = 0, double value = 0)
      : start_s_(start_s), last_s_(start_s), value_(value), max_(value) {}

  void set(double now_s, double value) {
    integral_ += value_ * (now_s - last_s_);
    last_s_ = now_s;
    value_ = value;
    max_ = std::max(max_, value);
  }
  double value() const { return value_; }
  double max() const { return max_; }
  // Integral from the start to now_s (value-seconds).
  double integral(double now_s) const { return integral_ + value_ * (now_s - last_s_); }
  double mean(double now_s) const {
    const double span = now_s - start_s_;
    return span > 0 ? integral(now_s) / span : value_;
  }

 private:
  double start_s_, last_s_;
  double value_, max_;
  double integral_ = 0;
};

}  // namespace cs::engine
