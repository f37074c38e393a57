#pragma once
// A per-member event rate that follows an hour-of-day profile, and the exact next-event time of
// the Poisson process it drives over a population.
//
// The intensity of one member at time t is base_per_s * multiplier[hour of day at t], with
// hour of day = (start_hour + t / 3600) mod 24: piecewise constant, so a population of n
// identical members is a non-homogeneous Poisson process of intensity n * rate(t), and the next
// event after `now` is where the integrated intensity reaches an Exp(1) draw (inversion). This
// superposition is exact for any n as long as n stays constant until that event; when n
// changes, drawing again from the new n is exact too (the process is memoryless).
#include <array>

#include "sim/engine/time.hpp"

namespace cs::fleet {

struct HourlyRate {
  double base_per_s = 0.0;                // events per member-second, before the profile
  std::array<double, 24> multiplier = ones();  // >= 0, by hour of day 0..23
  double start_hour = 0.0;                // hour of day at t = 0, in [0, 24)

  static constexpr std::array<double, 24> ones() {
    std::array<double, 24> a{};
    for (double& v : a) v = 1.0;
    return a;
  }

  double at(engine::Time t) const;  // per member per second
  // Time-averaged rate over a day (what a Young/Daly estimate uses).
  double mean_per_s() const;
  // The next event of n members after `now`, given u ~ Exp(1) (kForever if the rate is 0).
  engine::Time next_event(engine::Time now, double members, double unit_exponential) const;
  // Throws std::invalid_argument naming `what` on a negative or non-finite value.
  void validate(const char* what) const;
};

}  // namespace cs::fleet
