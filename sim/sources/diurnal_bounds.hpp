#pragma once
// Bounds of a diurnal arrival profile's rate (workloads/arrivals.hpp: expected_rate_at) over
// one thinning segment [start, start + period / 96): the majorant the candidates are drawn at,
// and a floor under every rate expected_rate_at computes for a time the segment sees, so that
// a candidate whose uniform times the majorant falls under the floor is kept without its cos,
// the same decision as comparing with the rate (arrival_source.hpp). Rates per second.
#include "workloads/arrivals.hpp"

namespace cs::sources {

// The highest rate over the segment: at an end, or at a peak inside.
double diurnal_majorant(const work::ArrivalSpec& spec, double start);
// Not above expected_rate_at(spec, t) as computed in floating point for any t in the segment
// widened by a sixteenth of it on each side; the proof is in diurnal_bounds.cpp. Where the
// margin it leaves is huge (a phase of astronomical size) the floor is negative, -inf or NaN,
// under which no draw falls: every candidate is then compared with its rate.
double diurnal_floor(const work::ArrivalSpec& spec, double start);

}  // namespace cs::sources
