// Recorder: counters, time-series CSV, and the Chrome trace JSON (well-formed, escaped).
#include <catch2/catch.hpp>

#include <cctype>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>

#include "sim/engine/recorder.hpp"

namespace {

using cs::engine::Recorder;

// A strict little JSON checker (RFC 8259 grammar; strings must be escaped properly and hold
// valid UTF-8). Returns true if `text` is exactly one JSON value plus whitespace.
class JsonChecker {
 public:
  explicit JsonChecker(std::string_view text) : s_(text) {}
  bool valid() {
    ws();
    if (!value()) return false;
    ws();
    return i_ == s_.size();
  }

 private:
  bool value() {
    if (i_ >= s_.size()) return false;
    switch (s_[i_]) {
      case '{': return object();
      case '[': return array();
      case '"': return string();
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      default: return number();
    }
  }
  bool object() { return sequence('}', &JsonChecker::member); }
  bool array() { return sequence(']', &JsonChecker::value); }
  // The rest of an object or array whose opening bracket is at i_: `close`, or elements
  // separated by commas and then `close`.
  bool sequence(char close, bool (JsonChecker::*element)()) {
    ++i_;
    ws();
    if (peek(close)) return ++i_, true;
    for (;;) {
      ws();
      if (!(this->*element)()) return false;
      ws();
      if (peek(close)) return ++i_, true;
      if (!peek(',')) return false;
      ++i_;
    }
  }
  // An object member: "key" : value.
  bool member() {
    if (!string()) return false;
    ws();
    if (!peek(':')) return false;
    ++i_;
    ws();
    return value();
  }
  bool string() {
    if (!peek('"')) return false;
    ++i_;
    while (i_ < s_.size()) {
      const auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') return ++i_, true;
      if (c < 0x20) return false;
      if (c == '\\') {
        ++i_;
        if (i_ >= s_.size()) return false;
        const char e = s_[i_];
        if (e == 'u') {
          for (int k = 1; k <= 4; ++k) {
            if (i_ + k >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_ + k]))) return false;
          }
          i_ += 5;
          continue;
        }
        if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) return false;
        ++i_;
        continue;
      }
      if (c >= 0x80) {
        // Continuation bytes must follow the lead byte (simplified, enough for the tests).
        const std::size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
        if (len == 0) return false;
        for (std::size_t k = 1; k < len; ++k) {
          if (i_ + k >= s_.size() || (static_cast<unsigned char>(s_[i_ + k]) & 0xC0) != 0x80) return false;
        }
        i_ += len;
        continue;
      }
      ++i_;
    }
    return false;
  }
  bool number() {
    const std::size_t start = i_;
    if (peek('-')) ++i_;
    if (peek('0')) {
      ++i_;
    } else if (!digits()) {
      return false;
    }
    if (peek('.')) {
      ++i_;
      if (!digits()) return false;
    }
    if (peek('e') || peek('E')) {
      ++i_;
      if (peek('+') || peek('-')) ++i_;
      if (!digits()) return false;
    }
    return i_ > start;
  }
  bool digits() {
    const std::size_t start = i_;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    return i_ > start;
  }
  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  bool peek(char c) const { return i_ < s_.size() && s_[i_] == c; }
  void ws() {
    while (i_ < s_.size() && std::string_view(" \t\r\n").find(s_[i_]) != std::string_view::npos) ++i_;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

bool is_json(std::string_view s) { return JsonChecker(s).valid(); }

std::string trace_of(const Recorder& r) {
  std::ostringstream out;
  r.write_chrome_trace(out);
  return out.str();
}

}  // namespace

TEST_CASE("The JSON checker itself accepts and rejects", "[recorder][json]") {
  CHECK(is_json(R"({"a":[1,-2.5e-3,true,null,"x\n\u00e9"],"b":{}})"));
  CHECK_FALSE(is_json(R"({"a":1,})"));
  CHECK_FALSE(is_json("{\"a\":\"raw\nnewline\"}"));
  CHECK_FALSE(is_json(R"({"a":"bad \q escape"})"));
  CHECK_FALSE(is_json(R"({"a":01})"));
  CHECK_FALSE(is_json(R"({"a":nan})"));
}

TEST_CASE("Counters add, set and iterate in name order", "[recorder][counters]") {
  Recorder r;
  CHECK(r.counter("missing") == 0.0);
  CHECK_FALSE(r.has_counter("missing"));
  r.add("flows.completed");
  r.add("bytes", 1e9);
  r.add("bytes", 5e8);
  r.add("flows.completed");
  r.set("cost_usd", 12.5);
  CHECK(r.counter("bytes") == 1.5e9);
  CHECK(r.counter("flows.completed") == 2.0);
  std::string names;
  for (const auto& [name, value] : r.counters()) names += name + ";";
  CHECK(names == "bytes;cost_usd;flows.completed;");
  std::ostringstream csv;
  r.write_counters_csv(csv);
  CHECK(csv.str() == "counter,value\nbytes,1500000000\ncost_usd,12.5\nflows.completed,2\n");
}

TEST_CASE("Time series CSV is long format, sorted by series then time", "[recorder][csv]") {
  Recorder r;
  r.sample("util", 2.0, 0.5);
  r.sample("util", 1.0, 0.25);
  r.sample("util", 1.0, 0.75);  // same time: insertion order kept
  r.sample("a,b \"q\"", 0.1, 1e-7);
  r.sample("queue", 0.0, 3.0);
  REQUIRE(r.series("util") != nullptr);
  CHECK(r.series("util")->size() == 3);
  CHECK(r.series("nope") == nullptr);
  CHECK(r.series_names() == std::vector<std::string>{"a,b \"q\"", "queue", "util"});
  std::ostringstream csv;
  r.write_timeseries_csv(csv);
  CHECK(csv.str() ==
        "series,time_s,value\n"
        "\"a,b \"\"q\"\"\",0.1,1e-07\n"
        "queue,0,3\n"
        "util,1,0.25\n"
        "util,1,0.75\n"
        "util,2,0.5\n");
}

TEST_CASE("Trace calls record nothing while tracing is disabled", "[recorder][trace]") {
  Recorder r;
  CHECK_FALSE(r.trace_enabled());
  r.trace_complete("x", "c", 0, 0, 1.0, 1.0);
  r.trace_instant("x", "c", 0, 0, 1.0);
  r.trace_counter("x", 0, 1.0, 2.0);
  CHECK(r.trace_event_count() == 0);
  CHECK(trace_of(r) == "{\"traceEvents\":[],\"displayTimeUnit\":\"ns\"}\n");
  CHECK(is_json(trace_of(r)));
}

TEST_CASE("Trace JSON has the Trace Event Format shape, in microseconds", "[recorder][trace]") {
  Recorder r;
  r.name_process(1, "node 0");
  r.name_thread(1, 2, "gpu 3");
  r.enable_trace();
  r.trace_complete("allreduce", "comm", 1, 2, 1.5e-6, 2.5e-3);
  r.trace_instant("fail", "fleet", 1, 2, 2.0);
  r.trace_counter("queue", 1, 0.25, 7.0);
  CHECK(r.trace_event_count() == 3);
  const std::string json = trace_of(r);
  CHECK(is_json(json));
  CHECK(json ==
        "{\"traceEvents\":["
        "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"node 0\"}},\n"
        "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"gpu 3\"}},\n"
        "{\"name\":\"allreduce\",\"cat\":\"comm\",\"ph\":\"X\",\"ts\":1.5,\"dur\":2500,\"pid\":1,\"tid\":2},\n"
        "{\"name\":\"fail\",\"cat\":\"fleet\",\"ph\":\"i\",\"s\":\"t\",\"ts\":2000000,\"pid\":1,\"tid\":2},\n"
        "{\"name\":\"queue\",\"ph\":\"C\",\"ts\":250000,\"pid\":1,\"args\":{\"value\":7}}"
        "],\"displayTimeUnit\":\"ns\"}\n");
  r.clear_trace();
  CHECK(r.trace_event_count() == 0);
  CHECK(is_json(trace_of(r)));  // metadata alone
}

TEST_CASE("Trace strings are escaped", "[recorder][trace][json]") {
  CHECK(cs::engine::json_quote("plain") == "\"plain\"");
  CHECK(cs::engine::json_quote("q\"b\\s/") == "\"q\\\"b\\\\s/\"");
  CHECK(cs::engine::json_quote("n\nt\tr\rb\bf\f") == "\"n\\nt\\tr\\rb\\bf\\f\"");
  CHECK(cs::engine::json_quote(std::string_view("\x01\x1f\0z", 4)) == "\"\\u0001\\u001f\\u0000z\"");
  CHECK(cs::engine::json_quote("\xC2\xB5s \xE2\x86\x92 \xF0\x9F\x9A\x80") == "\"\xC2\xB5s \xE2\x86\x92 \xF0\x9F\x9A\x80\"");
  // Invalid UTF-8 (stray continuation, truncated sequence, overlong, surrogate) -> U+FFFD.
  CHECK(cs::engine::json_quote("a\x80z") == "\"a\\ufffdz\"");
  CHECK(cs::engine::json_quote("\xE2\x86") == "\"\\ufffd\\ufffd\"");
  CHECK(cs::engine::json_quote("\xC0\xAF") == "\"\\ufffd\\ufffd\"");
  CHECK(cs::engine::json_quote("\xED\xA0\x80") == "\"\\ufffd\\ufffd\\ufffd\"");

  Recorder r;
  r.enable_trace();
  r.name_process(0, "pro\"cess\\");
  r.trace_complete("we\"ird\nname\x02", "c\\at", 0, 0, 0.0, 1.0);
  r.trace_counter("bad\xFFutf8", 0, 0.0, 1.0, "series \"s\"");
  const std::string json = trace_of(r);
  CHECK(is_json(json));
  CHECK(json.find(R"("name":"we\"ird\nname\u0002")") != std::string::npos);
  CHECK(json.find(R"("cat":"c\\at")") != std::string::npos);
  CHECK(json.find(R"("args":{"series \"s\"":1})") != std::string::npos);
}

TEST_CASE("Non-finite numbers keep the trace valid JSON", "[recorder][trace][json]") {
  Recorder r;
  r.enable_trace();
  r.trace_counter("x", 0, 1.0, std::numeric_limits<double>::infinity());
  r.trace_counter("y", 0, 1.0, std::numeric_limits<double>::quiet_NaN());
  CHECK(is_json(trace_of(r)));
}

TEST_CASE("Equal recordings give byte-identical files", "[recorder][determinism]") {
  auto record = [] {
    Recorder r;
    r.enable_trace();
    for (int i = 0; i < 100; ++i) {
      r.add(i % 2 ? "odd" : "even", 0.1 * i);
      std::string series = "s";
      series += std::to_string(i % 3);  // (not "s" + ...: GCC 12 raises a false -Wrestrict)
      r.sample(series, 0.01 * (100 - i), i / 7.0);
      r.trace_complete("op", "compute", i % 4, i % 8, 0.001 * i, 1.0 / (i + 1));
    }
    std::ostringstream out;
    r.write_timeseries_csv(out);
    r.write_counters_csv(out);
    r.write_chrome_trace(out);
    return out.str();
  };
  CHECK(record() == record());
}
