#include "sim/sources/diurnal_bounds.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace cs::sources {

// The highest rate of the cosine profile over [start, start + period / 96]: at an end, or at
// a peak inside.
double diurnal_majorant(const work::ArrivalSpec& spec, double start) {
  const work::DiurnalProfile& d = spec.diurnal;
  const double end = start + d.period_s / 96;
  const double next_peak = d.peak_at_s + std::ceil((start - d.peak_at_s) / d.period_s) * d.period_s;
  if (next_peak <= end) return spec.rate_per_s * d.peak_to_mean;
  return std::max(work::expected_rate_at(spec, start), work::expected_rate_at(spec, end));
}

// A floor under expected_rate_at(spec, t) as computed in floating point, for every t the
// segment [start, start + period / 96) can see (widened by a sixteenth on each side, for a
// start rounded past a candidate). The rate 1 + (p - 1) cos is monotone between a peak and a
// trough (p >= 1: its minima are the troughs), so over an interval without a trough its least
// exact value is at an end, and with one it is rate * (2 - p). A computed value differs from
// the exact one by the roundings of the phase 2 pi (t - peak) / period (four, relative: at
// most |phase| 2^-50 in absolute terms, through cos's slope of at most 1), of cos (an ulp) and
// of the products and sum (a few ulps of rate * p): together under
// E = rate * p * (|phase| + 4) * 2^-50. Both the ends (computed) and any t inside are that
// close to the exact values, so min(computed ends) - 2E is under every computed rate; 3E
// leaves room for the rounding of the subtraction itself (an ulp of the rate, under E).
double diurnal_floor(const work::ArrivalSpec& spec, double start) {
  const work::DiurnalProfile& d = spec.diurnal;
  const double widen = d.period_s / 96 / 16;
  const double lo = start - widen, hi = start + d.period_s / 96 + widen;
  const double peak_rate = spec.rate_per_s * d.peak_to_mean;
  const double phase_bound = 2 * std::numbers::pi * std::max(std::abs(lo - d.peak_at_s), std::abs(hi - d.peak_at_s)) / d.period_s;
  const double margin = 3 * peak_rate * (phase_bound + 4) * 0x1p-50;
  const double first_trough = d.peak_at_s + d.period_s / 2;
  const double next_trough = first_trough + std::ceil((lo - first_trough) / d.period_s) * d.period_s;
  // A trough within a sixteenth more of the segment counts as inside: the least rate is the
  // trough's (the rounding of next_trough is far below that slack).
  const double least = next_trough <= hi + widen
                           ? spec.rate_per_s * (2 - d.peak_to_mean)
                           : std::min(work::expected_rate_at(spec, lo), work::expected_rate_at(spec, hi));
  return least - margin;
}

}  // namespace cs::sources
