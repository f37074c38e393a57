#include "sim/engine/recorder.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ostream>

namespace cs::engine {

namespace {

// Shortest text that parses back to the same double (std::to_chars): deterministic and exact,
// unlike iostreams whose output depends on stream state and precision. Plain decimals in the
// range people read (2500000, 0.125), exponents outside it (1e-07, 3.2e+18).
void append_shortest(std::string& out, double v) {
  char buf[64];
  const double mag = std::fabs(v);
  const bool fixed = std::isfinite(v) && (mag == 0.0 || (mag >= 1e-5 && mag < 1e15));
  const auto res = fixed ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed)
                         : std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

// JSON has no inf or nan.
void append_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  append_shortest(out, v);
}

void append_int(std::string& out, long long v) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

// Length of the valid UTF-8 sequence starting at s[i] (lead byte >= 0x80), or 0 if invalid
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) -> unsigned {
    return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u;
  };
  const unsigned c = byte(i);
  std::size_t len = 0;
  unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return len;
}

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const std::size_t len = utf8_sequence_length(s, i);
      if (len == 0) {
        out += "\\ufffd";
        ++i;
      } else {
        out.append(s.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xF];
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
}

void append_csv_field(std::string& out, std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) {
    out.append(s);
    return;
  }
  out += '"';
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

void append_csv_number(std::string& out, double v) {
  append_shortest(out, v);  // "inf", "-inf", "nan" if so: pandas reads those
}

constexpr double kMicrosecondsPerSecond = 1e6;

// Opens a trace event object up to its timestamp:
//   {"name":<name>[,"cat":<category>],"ph":<phase>,"ts":<t in microseconds>
// `phase` is written verbatim (the quoted phase letter plus any fields that go with it).
void append_event_head(std::string& out, std::string_view name,
                       const std::string_view* category, std::string_view phase, Time t) {
  out += "{\"name\":";
  append_json_string(out, name);
  if (category != nullptr) {
    out += ",\"cat\":";
    append_json_string(out, *category);
  }
  out += ",\"ph\":";
  out += phase;
  out += ",\"ts\":";
  append_number(out, t * kMicrosecondsPerSecond);
}

// Closes a trace event that belongs to a thread: ,"pid":<pid>,"tid":<tid>}
void append_thread_tail(std::string& out, int pid, int tid) {
  out += ",\"pid\":";
  append_int(out, pid);
  out += ",\"tid\":";
  append_int(out, tid);
  out += '}';
}

}  // namespace

std::string json_quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  append_json_string(out, s);
  return out;
}

// ---- Counters ----

void Recorder::add(std::string_view name, double delta) {
  const auto it = counters_.find(name);
  if (it != counters_.end()) {
    it->second += delta;
  } else {
    counters_.emplace(std::string(name), delta);
  }
}

void Recorder::set(std::string_view name, double value) {
  const auto it = counters_.find(name);
  if (it != counters_.end()) {
    it->second = value;
  } else {
    counters_.emplace(std::string(name), value);
  }
}

double Recorder::counter(std::string_view name) const {
  const auto it = counters_.find(name);
  return it == counters_.end() ? 0.0 : it->second;
}

bool Recorder::has_counter(std::string_view name) const {
  return counters_.find(name) != counters_.end();
}

void Recorder::write_counters_csv(std::ostream& out) const {
  std::string text = "counter,value\n";
  for (const auto& [name, value] : counters_) {
    append_csv_field(text, name);
    text += ',';
    append_csv_number(text, value);
    text += '\n';
  }
  out << text;
}

// ---- Time series ----

void Recorder::sample(std::string_view series, Time t, double value) {
  auto it = series_.find(series);
  if (it == series_.end()) it = series_.emplace(std::string(series), std::vector<Sample>{}).first;
  it->second.push_back(Sample{t, value});
}

const std::vector<Recorder::Sample>* Recorder::series(std::string_view name) const {
  const auto it = series_.find(name);
  return it == series_.end() ? nullptr : &it->second;
}

std::vector<std::string> Recorder::series_names() const {
  std::vector<std::string> names;
  names.reserve(series_.size());
  for (const auto& entry : series_) names.push_back(entry.first);
  return names;
}

void Recorder::write_timeseries_csv(std::ostream& out) const {
  std::string text = "series,time_s,value\n";
  std::vector<Sample> sorted;
  for (const auto& [name, samples] : series_) {
    // Samples usually arrive in time order already; sort only when they did not.
    const bool in_order = std::is_sorted(samples.begin(), samples.end(),
                                         [](const Sample& a, const Sample& b) {
                                           return a.time < b.time;
                                         });
    const std::vector<Sample>* rows = &samples;
    if (!in_order) {
      sorted = samples;
      std::stable_sort(sorted.begin(), sorted.end(),
                       [](const Sample& a, const Sample& b) { return a.time < b.time; });
      rows = &sorted;
    }
    for (const Sample& s : *rows) {
      append_csv_field(text, name);
      text += ',';
      append_csv_number(text, s.time);
      text += ',';
      append_csv_number(text, s.value);
      text += '\n';
    }
    out << text;
    text.clear();
  }
  out << text;
}

// ---- Trace ----

void Recorder::begin_event() {
  if (trace_events_ != 0) trace_ += ",\n";
  ++trace_events_;
}

void Recorder::append_complete(std::string_view name, std::string_view category, int pid,
                               int tid, Time start, Time duration) {
  begin_event();
  append_event_head(trace_, name, &category, "\"X\"", start);
  trace_ += ",\"dur\":";
  append_number(trace_, duration * kMicrosecondsPerSecond);
  append_thread_tail(trace_, pid, tid);
}

void Recorder::append_instant(std::string_view name, std::string_view category, int pid,
                              int tid, Time t) {
  begin_event();
  append_event_head(trace_, name, &category, "\"i\",\"s\":\"t\"", t);
  append_thread_tail(trace_, pid, tid);
}

void Recorder::append_counter(std::string_view name, int pid, Time t, double value,
                              std::string_view series) {
  begin_event();
  append_event_head(trace_, name, nullptr, "\"C\"", t);
  trace_ += ",\"pid\":";
  append_int(trace_, pid);
  trace_ += ",\"args\":{";
  append_json_string(trace_, series);
  trace_ += ':';
  append_number(trace_, value);
  trace_ += "}}";
}

void Recorder::name_process(int pid, std::string_view name) {
  process_names_[pid] = std::string(name);
}

void Recorder::name_thread(int pid, int tid, std::string_view name) {
  thread_names_[{pid, tid}] = std::string(name);
}

void Recorder::clear_trace() {
  trace_.clear();
  trace_events_ = 0;
}

void Recorder::write_chrome_trace(std::ostream& out) const {
  std::string head = "{\"traceEvents\":[";
  bool first = true;
  const auto separate = [&] {
    if (!first) head += ",\n";
    first = false;
  };
  for (const auto& [pid, name] : process_names_) {
    separate();
    head += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":";
    append_int(head, pid);
    head += ",\"args\":{\"name\":";
    append_json_string(head, name);
    head += "}}";
  }
  for (const auto& [key, name] : thread_names_) {
    separate();
    head += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":";
    append_int(head, key.first);
    head += ",\"tid\":";
    append_int(head, key.second);
    head += ",\"args\":{\"name\":";
    append_json_string(head, name);
    head += "}}";
  }
  if (!first && trace_events_ != 0) head += ",\n";
  out << head << trace_ << "],\"displayTimeUnit\":\"ns\"}\n";
}

void Recorder::clear() {
  counters_.clear();
  series_.clear();
  clear_trace();
  process_names_.clear();
  thread_names_.clear();
}

}  // namespace cs::engine
