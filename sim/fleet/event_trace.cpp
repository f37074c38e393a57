#include "sim/fleet/event_trace.hpp"

#include <cmath>
#include <istream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace cs::fleet {

void validate(const EventTrace& trace, const char* what) {
  double previous = 0.0;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const TraceEvent& e = trace[i];
    const std::string at = std::string(what) + "[" + std::to_string(i) + "]";
    if (!std::isfinite(e.time_s) || e.time_s < previous)
      throw std::invalid_argument(at + ".time_s: expected a finite time >= the previous one");
    if (e.instances < 1) throw std::invalid_argument(at + ".instances: expected >= 1");
    previous = e.time_s;
  }
}

EventTrace read_event_trace_csv(std::istream& in) {
  EventTrace trace;
  std::string line;
  bool header = true;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    if (header) {  // the first non-comment line names the columns
      header = false;
      continue;
    }
    std::istringstream fields(line);
    TraceEvent e;
    char comma = 0;
    if (!(fields >> e.time_s >> comma >> e.instances) || comma != ',')
      throw std::invalid_argument("event trace line " + std::to_string(line_no) +
                                  ": expected \"time_s,instances\"");
    trace.push_back(e);
  }
  validate(trace, "event trace");
  return trace;
}

}  // namespace cs::fleet
