#pragma once
// A replayed list of timed events that take instances (a spot-reclaim log, a cluster's failure
// log): at time_s, `instances` instances chosen at random among those exposed go.
//
// CSV form (read_event_trace_csv): a header line, then "time_s,instances" per line, times in
// seconds from the start of the run, non-decreasing; blank lines and lines starting with '#'
// are skipped. Errors throw std::invalid_argument naming the line.
#include <iosfwd>
#include <vector>

namespace cs::fleet {

struct TraceEvent {
  double time_s = 0.0;
  int instances = 1;
};

using EventTrace = std::vector<TraceEvent>;

EventTrace read_event_trace_csv(std::istream& in);
// Throws std::invalid_argument if times are negative, non-finite or decreasing, or a count < 1.
void validate(const EventTrace& trace, const char* what);

}  // namespace cs::fleet
