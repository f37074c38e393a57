// The diurnal profile's bounds over a thinning segment: the floor is never above a rate as
// expected_rate_at computes it (so a candidate kept under the floor is one the rate keeps: the
// same arrival times), and it is close enough under the rates to keep most candidates.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/sources/diurnal_bounds.hpp"

using namespace cs::sources;
namespace work = cs::work;

namespace {

work::ArrivalSpec diurnal(double rate, double period, double peak_to_mean, double peak_at) {
  work::ArrivalSpec spec;
  spec.process = work::ArrivalProcess::diurnal;
  spec.rate_per_s = rate;
  spec.diurnal = {period, peak_to_mean, peak_at};
  return spec;
}

}  // namespace

TEST_CASE("The diurnal floor is under every computed rate of its segment, troughs included", "[sources][arrivals]") {
  // The bench's profile, flat and steepest profiles, a peak far from 0 and a short period over
  // many periods (large phases: the rounding margin grows with them).
  const std::vector<work::ArrivalSpec> specs = {
      diurnal(1e6 / (365 * 86400.0), 86400, 1.6, 14 * 3600),
      diurnal(20, 86400, 1.0, 0),
      diurnal(20, 86400, 1.0000001, 3e7),
      diurnal(3, 3600, 2.0, 900),
      diurnal(1e4, 1.0, 1.9, -1e6),
  };
  for (const work::ArrivalSpec& spec : specs) {
    const double segment = spec.diurnal.period_s / 96;
    const double trough = spec.diurnal.peak_at_s + spec.diurnal.period_s / 2;
    long checked = 0;
    // Segments over the first two periods, and later at a year's worth of periods and more.
    for (const double first : {0.0, 365.0 * 96, 3650.0 * 96}) {
      for (int k = 0; k < 2 * 96; ++k) {
        const double start = (first + k) * segment;
        const double floor = diurnal_floor(spec, start);
        INFO("period " << spec.diurnal.period_s << " p " << spec.diurnal.peak_to_mean << " start " << start);
        REQUIRE(floor <= diurnal_majorant(spec, start));
        // Times across the segment and a sixteenth past its ends, and every trough near it.
        for (int i = -8; i <= 136; ++i) {
          const double t = start + segment * i / 128.0;
          REQUIRE(floor <= work::expected_rate_at(spec, t));
          ++checked;
        }
        const double near = trough + std::round((start - trough) / spec.diurnal.period_s) * spec.diurnal.period_s;
        for (const double dt : {0.0, 1e-9, -1e-9, 1e-3, -1e-3}) {
          const double t = near + dt * segment;
          if (t >= start - segment / 16 && t <= start + segment * 17 / 16) REQUIRE(floor <= work::expected_rate_at(spec, t));
        }
      }
    }
    CHECK(checked == 3 * 2 * 96 * 145);
  }
}

TEST_CASE("The diurnal floor keeps most candidates without their cos", "[sources][arrivals]") {
  // The bench's profile over a day, in its first year: the floor against the majorant is the
  // share of candidates kept at once; the rate against the majorant, of those kept at all.
  const work::ArrivalSpec spec = diurnal(1e6 / (365 * 86400.0), 86400, 1.6, 14 * 3600);
  const double segment = 86400.0 / 96;
  double floor_share = 0, least_share = 0;
  for (int k = 0; k < 96; ++k) {
    const double start = (300 * 96 + k) * segment;
    const double majorant = diurnal_majorant(spec, start);
    floor_share += diurnal_floor(spec, start) / majorant / 96;
    double least = majorant;
    for (int i = 0; i <= 64; ++i) least = std::min(least, work::expected_rate_at(spec, start + segment * i / 64));
    least_share += least / majorant / 96;
  }
  CHECK(floor_share > 0.95);
  CHECK(floor_share > least_share - 0.01);  // the widening and the margin cost under 1%
}
