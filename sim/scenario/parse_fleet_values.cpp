// The value forms of the fleet section: distributions of delays, event traces, times with
// names, and quantities the contract states per node-hour.
#include "sim/scenario/parse_fleet_values.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "sim/scenario/document_util.hpp"
#include "sim/scenario/load.hpp"
#include "sim/scenario/suggest.hpp"

namespace cs::scenario::detail {
namespace {

using sources::Distribution;

// The keys a family takes besides "dist"; any other key is a mistake worth naming.
std::vector<std::string_view> family_keys(Distribution::Kind kind) {
  switch (kind) {
    case Distribution::Kind::constant:
    case Distribution::Kind::exponential: return {"mean"};
    case Distribution::Kind::lognormal: return {"mean", "stddev", "cv"};
    case Distribution::Kind::weibull: return {"mean", "shape"};
    case Distribution::Kind::uniform: return {"low", "high"};
    case Distribution::Kind::empirical: return {"values", "weights"};
    case Distribution::Kind::sum: break;  // not a family of the file
  }
  return {};
}

constexpr std::size_t kMaxTraceEvents = 10'000'000;

fleet::EventTrace trace_from_file(const std::string& file, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(file, ec);
  if (ec || !fs::is_regular_file(status))
    throw InputError(path, "expected the path of a readable CSV file of events (\"time_s,instances\" "
                           "rows); '" + file + "' is " + (ec || !fs::exists(status) ? "missing" : "not a regular file"),
                     std::string(kInputPathHint) + "; or give the events as a list "
                     "[{\"time\", \"instances\"}]");
  if (fs::file_size(file, ec) > kMaxScenarioBytes || ec)
    throw InputError(path, "'" + file + "' is larger than " + std::to_string(kMaxScenarioBytes) + " bytes");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(path, "cannot open '" + file + "' (permissions?)");
  std::istringstream lines(read_at_most(in, kMaxScenarioBytes));
  try {
    fleet::EventTrace trace = fleet::read_event_trace_csv(lines);
    if (trace.size() > kMaxTraceEvents)
      throw InputError(path, "'" + file + "' has more than " + std::to_string(kMaxTraceEvents) + " events");
    return trace;
  } catch (const std::invalid_argument& e) {
    // The library names the line ("event trace line 7: ..."): say which file.
    throw InputError(path, "in '" + file + "': " + e.what(),
                     "a header line, then one \"time_s,instances\" row per event, times non-decreasing");
  }
}

fleet::EventTrace trace_from_list(const json& list, const std::string& path) {
  if (list.empty() || list.size() > kMaxTraceEvents)
    throw InputError(path, "expected a list of 1 to " + std::to_string(kMaxTraceEvents) +
                               " events {\"time\", \"instances\"}");
  fleet::EventTrace trace;
  trace.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string item = join_path(path, i);
    const json& e = list[i];
    if (!e.is_object()) throw InputError(item, "expected an event {\"time\", \"instances\"}; got " + describe_value(e));
    if (!member(e, "time")) throw InputError(item, "missing required key \"time\"");
    fleet::TraceEvent ev;
    ev.time_s = get_quantity(e, "time", item, QuantityKind::time, Sign::non_negative, 0.0);
    ev.instances = static_cast<int>(get_int(e, "instances", item, 1, 1, 1'000'000));
    if (!trace.empty() && ev.time_s < trace.back().time_s)
      throw InputError(join_path(item, "time"), "expected times in order: this event comes before the one above it");
    trace.push_back(ev);
  }
  return trace;
}

}  // namespace

namespace {
// Plain numbers (token counts): at most 1e12, as the quantities are bounded.
double value_of(const json& v, const std::string& path, std::optional<QuantityKind> unit) {
  return unit ? quantity_value(v, *unit, Sign::non_negative, path) : number_value(v, path, 0.0, 1e12);
}

// {"values": [...], "weights": [...]}: a histogram; equal weights when none are given.
Distribution empirical_value(const json& v, const std::string& path, std::optional<QuantityKind> unit) {
  constexpr std::size_t kMaxValues = 10'000;
  const std::string values_at = join_path(path, "values");
  const json* values = member(v, "values");
  if (!values || !values->is_array() || values->empty() || values->size() > kMaxValues)
    throw InputError(values_at, "an empirical distribution needs a list of 1 to 10000 values",
                     "e.g. \"values\": [1, 8, 64], \"weights\": [0.6, 0.3, 0.1]");
  std::vector<double> xs, ws;
  for (std::size_t i = 0; i < values->size(); ++i) xs.push_back(value_of((*values)[i], join_path(values_at, i), unit));
  const std::string weights_at = join_path(path, "weights");
  if (const json* weights = member(v, "weights")) {
    if (!weights->is_array() || weights->size() != xs.size())
      throw InputError(weights_at, "expected one weight per value (" + std::to_string(xs.size()) + ")");
    double total = 0.0;
    for (std::size_t i = 0; i < weights->size(); ++i)
      total += ws.emplace_back(number_value((*weights)[i], join_path(weights_at, i), 0.0, 1e12));
    if (!(total > 0.0)) throw InputError(weights_at, "expected at least one weight > 0");
  } else {
    ws.assign(xs.size(), 1.0);
  }
  return Distribution::empirical(std::move(xs), std::move(ws));
}
}  // namespace

Distribution distribution_value(const json& v, const std::string& path, std::optional<QuantityKind> unit) {
  if (!v.is_object()) return Distribution::constant(value_of(v, path, unit));
  const std::vector<Choice<Distribution::Kind>> families = choices_of(work::kDistributionKindNames);
  const json* dist = member(v, "dist");
  if (!dist) throw InputError(path, "missing required key \"dist\"; expected one of " + choice_names(families));
  const std::string dist_path = join_path(path, "dist");
  const Distribution::Kind kind = choice_value(*dist, dist_path, families);
  const auto& given = dist->get_ref<const std::string&>();
  const std::vector<std::string_view> family = family_keys(kind);
  for (const auto& [key, value] : v.items()) {
    if (key == "dist" || value.is_null()) continue;
    bool takes = false;
    for (const auto k : family) takes = takes || k == key;
    if (!takes)
      throw InputError(join_path(path, key), "a " + given + " distribution takes no \"" + key + "\"",
                       "it takes " + [&] {
                         std::vector<std::string> keys(family.begin(), family.end());
                         return quoted_list(keys);
                       }());
  }
  const std::string what = unit ? std::string(quantity_kind_name(*unit)) : "a number";
  const auto time = [&](std::string_view key) {
    if (!member(v, key)) throw InputError(join_path(path, key), "required for a " + given + " distribution: " + what);
    return value_of(v.at(std::string(key)), join_path(path, key), unit);
  };
  switch (kind) {
    case Distribution::Kind::constant: return Distribution::constant(time("mean"));
    case Distribution::Kind::exponential: return Distribution::exponential(time("mean"));
    case Distribution::Kind::lognormal: {
      const double mean = time("mean");
      const bool sd = member(v, "stddev") != nullptr, cv = member(v, "cv") != nullptr;
      if (sd == cv)
        throw InputError(path, std::string(sd ? "give \"stddev\" or \"cv\", not both" :
                                                "a lognormal distribution needs its spread: \"stddev\" (a time) or \"cv\" (stddev / mean)"));
      double c = get_number(v, "cv", path, 0.0, 0.0, 1e6);
      if (sd) {
        const double s = value_of(v.at("stddev"), join_path(path, "stddev"), unit);
        if (mean <= 0.0 && s > 0.0)
          throw InputError(join_path(path, "stddev"), "a lognormal of mean 0 has no spread; expected 0");
        c = mean > 0.0 ? s / mean : 0.0;
        if (c > 1e6) throw InputError(join_path(path, "stddev"), "expected at most 1e6 x the mean");
      }
      return Distribution::lognormal(mean, c);
    }
    case Distribution::Kind::weibull: {
      if (!member(v, "shape")) throw InputError(join_path(path, "shape"), "required for a weibull distribution: a number > 0");
      const double mean = time("mean");
      const double shape = get_number(v, "shape", path, 1.0, 0.05, 100.0);
      return Distribution::weibull(mean, shape);
    }
    case Distribution::Kind::uniform: {
      const double low = time("low"), high = time("high");
      if (high < low) throw InputError(join_path(path, "high"), "expected high >= low");
      return Distribution::uniform(low, high);
    }
    case Distribution::Kind::empirical: return empirical_value(v, path, unit);
    case Distribution::Kind::sum: break;  // not a family of the file
  }
  throw InputError(dist_path, "unsupported distribution");
}

Distribution get_distribution(const json& obj, std::string_view key, std::string_view at, Distribution def,
                              std::optional<QuantityKind> unit) {
  const json* v = member(obj, key);
  return v ? distribution_value(*v, join_path(at, key), unit) : def;
}

fleet::EventTrace event_trace_value(const json& v, const std::string& path) {
  if (v.is_string()) return trace_from_file(v.get<std::string>(), path);
  if (v.is_array()) return trace_from_list(v, path);
  throw InputError(path, "expected a CSV file path or a list of events [{\"time\", \"instances\"}]; got " +
                             describe_value(v));
}

double time_or_named(const json& v, const std::string& path, Sign sign, const std::vector<NamedTime>& names) {
  if (v.is_string()) {
    const auto& text = v.get_ref<const std::string&>();
    for (const auto& [name, seconds] : names)
      if (name == text) return seconds;
    if (!parse_quantity_text(text, QuantityKind::time)) {
      std::vector<std::string> words;
      for (const auto& [name, seconds] : names) words.emplace_back(name);
      throw InputError(path, "expected a time (such as \"90s\" or \"2min\") or one of " + quoted_list(words) +
                                 "; got " + describe_value(v),
                       did_you_mean(text, words));
    }
  }
  return quantity_value(v, QuantityKind::time, sign, path);
}

double per_hour_quantity(const json& v, QuantityKind kind, const std::string& path, double bare_limit_si,
                         std::string_view example) {
  const double x = quantity_value(v, kind, Sign::non_negative, path);
  if (v.is_number() && x >= bare_limit_si)
    throw InputError(path, "a bare number is SI, per second: " + describe_value(v) + " per second is " +
                               describe_value(json(x * 3600.0)) + " per node-hour, surely not what was meant",
                     "write the unit, e.g. \"" + std::string(example) + "\" for per node-hour");
  return x;
}

}  // namespace cs::scenario::detail
