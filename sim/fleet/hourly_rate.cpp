#include "sim/fleet/hourly_rate.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace cs::fleet {
namespace {

constexpr double kHour_s = 3600.0;
constexpr double kDay_s = 24.0 * kHour_s;

// Hour-of-day slot of the instant t, and the time at which that slot ends.
int hour_slot(double start_hour, engine::Time t) {
  const double h = std::fmod(start_hour + t / kHour_s, 24.0);
  return static_cast<int>(std::floor(h)) % 24;
}

}  // namespace

double HourlyRate::at(engine::Time t) const {
  return base_per_s * multiplier[static_cast<std::size_t>(hour_slot(start_hour, t))];
}

double HourlyRate::mean_per_s() const {
  double sum = 0.0;
  for (const double m : multiplier) sum += m;
  return base_per_s * sum / 24.0;
}

engine::Time HourlyRate::next_event(engine::Time now, double members,
                                    double unit_exponential) const {
  const double per_day = members * mean_per_s() * kDay_s;  // expected events per day
  if (!(per_day > 0.0)) return engine::kForever;
  double remaining = unit_exponential;
  // Whole days first: a day always integrates to per_day, wherever it starts.
  const double days = std::floor(remaining / per_day);
  engine::Time t = now + days * kDay_s;
  remaining -= days * per_day;
  // Then at most one more day of hour slots (25 boundaries when `now` is mid-slot).
  for (int guard = 0; guard < 50; ++guard) {
    const double hour_pos = start_hour + t / kHour_s;
    const double slot_end = (std::floor(hour_pos) + 1.0 - start_hour) * kHour_s;
    const double end = slot_end > t ? slot_end : t + kHour_s;  // rounding at a boundary
    const double rate = members * at(t);
    const double mass = rate * (end - t);
    if (rate > 0.0 && mass >= remaining) return t + remaining / rate;
    remaining -= mass;
    t = end;
  }
  // Only reached through floating-point remainders after a whole number of days: the event
  // falls at the end of the walk.
  return t;
}

void HourlyRate::validate(const char* what) const {
  const std::string w(what);
  if (!(base_per_s >= 0.0) || !std::isfinite(base_per_s))
    throw std::invalid_argument(w + ".rate: expected a finite rate >= 0 per node-second");
  for (std::size_t h = 0; h < multiplier.size(); ++h)
    if (!(multiplier[h] >= 0.0) || !std::isfinite(multiplier[h]))
      throw std::invalid_argument(w + ".hourly_profile[" + std::to_string(h) +
                                  "]: expected a finite multiplier >= 0");
  if (!(start_hour >= 0.0 && start_hour < 24.0))
    throw std::invalid_argument(w + ".start_hour: expected an hour of day in [0, 24)");
}

}  // namespace cs::fleet
