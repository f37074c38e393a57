#pragma once
// Engine-level instrumentation: named counters, time series and an optional trace in the
// Chrome / Perfetto "Trace Event Format" (JSON, open in ui.perfetto.dev or chrome://tracing).
// It knows nothing of GPUs: models choose the names, process ids and thread ids.
//
// Units: times are simulated seconds (Time). The trace file stores microseconds ("ts",
// "dur"), as the format requires; the CSV stores seconds.
// Determinism: every output is ordered by name, then time, then insertion, and numbers are
// written in the shortest form that reads back to the same double, so equal runs give
// byte-identical files.
// Strings are written as given when they are valid UTF-8; invalid bytes become U+FFFD in JSON.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/engine/time.hpp"

namespace cs::engine {

// `s` as a JSON string literal, quotes included (", \ and control characters escaped).
std::string json_quote(std::string_view s);

class Recorder {
 public:
  struct Sample {
    Time time;  // s
    double value;
  };

  // ---- Counters: running totals (events, bytes, dollars...). ----
  void add(std::string_view name, double delta = 1.0);
  void set(std::string_view name, double value);
  // 0 for a counter never touched.
  double counter(std::string_view name) const;
  bool has_counter(std::string_view name) const;
  // All counters, in name order.
  const std::map<std::string, double, std::less<>>& counters() const { return counters_; }
  // Long format: header "counter,value", one row per counter in name order.
  void write_counters_csv(std::ostream& out) const;

  // ---- Time series: (time, value) samples per named series. ----
  void sample(std::string_view series, Time t, double value);
  // Samples of one series in insertion order; nullptr if the series has none.
  const std::vector<Sample>* series(std::string_view name) const;
  std::vector<std::string> series_names() const;  // name order
  // Long format: header "series,time_s,value"; rows by series name, then time (stable: equal
  // times keep insertion order). Names with commas, quotes or newlines are quoted (RFC 4180).
  void write_timeseries_csv(std::ostream& out) const;

  // ---- Trace. Disabled by default; while disabled, trace_* calls only test a flag. ----
  void enable_trace(bool on = true) { trace_enabled_ = on; }
  bool trace_enabled() const { return trace_enabled_; }
  // A span [start, start + duration) on thread (pid, tid): "ph":"X".
  void trace_complete(std::string_view name, std::string_view category, int pid, int tid,
                      Time start, Time duration) {
    if (trace_enabled_) append_complete(name, category, pid, tid, start, duration);
  }
  // A point in time on thread (pid, tid): "ph":"i", thread scope.
  void trace_instant(std::string_view name, std::string_view category, int pid, int tid,
                     Time t) {
    if (trace_enabled_) append_instant(name, category, pid, tid, t);
  }
  // A counter track `name` of process pid taking `value` from time t on: "ph":"C",
  // args {series: value}.
  void trace_counter(std::string_view name, int pid, Time t, double value,
                     std::string_view series = "value") {
    if (trace_enabled_) append_counter(name, pid, t, value, series);
  }
  // Display names of processes and threads ("ph":"M"). Kept even while tracing is disabled
  // (they are few, and usually declared before tracing is switched on); the last name wins.
  void name_process(int pid, std::string_view name);
  void name_thread(int pid, int tid, std::string_view name);
  std::size_t trace_event_count() const { return trace_events_; }  // excluding metadata
  // Drops recorded trace events; keeps process and thread names.
  void clear_trace();
  // {"traceEvents":[metadata..., events in recording order...],"displayTimeUnit":"ns"}.
  // Non-finite numbers are written as null so the file stays valid JSON.
  void write_chrome_trace(std::ostream& out) const;

  // Drops counters, series, trace events and names (not the trace switch).
  void clear();

 private:
  void append_complete(std::string_view name, std::string_view category, int pid, int tid,
                       Time start, Time duration);
  void append_instant(std::string_view name, std::string_view category, int pid, int tid,
                      Time t);
  void append_counter(std::string_view name, int pid, Time t, double value,
                      std::string_view series);
  void begin_event();

  std::map<std::string, double, std::less<>> counters_;
  std::map<std::string, std::vector<Sample>, std::less<>> series_;
  bool trace_enabled_ = false;
  std::string trace_;  // serialized events, comma separated
  std::size_t trace_events_ = 0;
  std::map<int, std::string> process_names_;
  std::map<std::pair<int, int>, std::string> thread_names_;
};

}  // namespace cs::engine
