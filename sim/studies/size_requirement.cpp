// Requirements of a sizing search: parsing "KEY<=VALUE" and reading a summary's numbers.
#include "sim/studies/size_requirement.hpp"

#include <cmath>
#include <cstdlib>
#include <vector>

#include "sim/scenario/input_error.hpp"
#include "sim/scenario/suggest.hpp"

namespace cs::studies {

using nlohmann::json;
using scenario::InputError;

bool Requirement::holds(double measured) const {
  switch (bound) {
    case Bound::at_most: return measured <= value;
    case Bound::at_least: return measured >= value;
    case Bound::below: return measured < value;
    case Bound::above: return measured > value;
  }
  return false;
}

double Requirement::margin(double measured) const {
  return (bound == Bound::at_most || bound == Bound::below) ? value - measured : measured - value;
}

namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

void collect_paths(const json& value, const std::string& prefix, std::vector<std::string>& out) {
  if (!value.is_object()) {
    if (value.is_number()) out.push_back(prefix);
    return;
  }
  if (value.contains("mean") && value.contains("ci95")) {
    out.push_back(prefix);
    return;
  }
  for (const auto& [k, v] : value.items()) collect_paths(v, prefix.empty() ? k : prefix + "." + k, out);
}

}  // namespace

Requirement parse_requirement(std::string_view text, const std::string& at) {
  const std::string given(text);
  const std::size_t op = text.find_first_of("<>");
  if (op == std::string_view::npos)
    throw InputError(at, "'" + given + "' has no comparison; expected KEY<=VALUE, KEY>=VALUE, KEY<VALUE or KEY>VALUE",
                     "e.g. \"serving.slo_attainment>=0.99\"");
  Requirement r;
  r.text = given;
  r.key = std::string(trimmed(text.substr(0, op)));
  const bool or_equal = op + 1 < text.size() && text[op + 1] == '=';
  r.bound = text[op] == '<' ? (or_equal ? Bound::at_most : Bound::below) : (or_equal ? Bound::at_least : Bound::above);
  if (r.key.empty()) throw InputError(at, "'" + given + "' has no summary key before its comparison");
  // A summary path is names and indices joined by dots: '=' or '!' in it is a misspelt
  // comparison ("=<", "!="), named before any point runs rather than after the first.
  if (r.key.find_first_of("=!") != std::string::npos)
    throw InputError(at, "'" + given + "' has no comparison; expected KEY<=VALUE, KEY>=VALUE, KEY<VALUE or KEY>VALUE",
                     "e.g. \"serving.wait_mean_s<=0.01\"");
  const std::string number(trimmed(text.substr(op + (or_equal ? 2 : 1))));
  char* end = nullptr;
  r.value = number.empty() ? NAN : std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(r.value))
    throw InputError(at, "'" + given + "': the bound '" + number + "' is not a finite number",
                     "the bound is in the summary number's own unit (seconds, USD, a share)");
  return r;
}

SummaryNumber summary_number_at(const json& summary, const std::string& key) {
  SummaryNumber out;
  const json* at = &summary;
  std::size_t start = 0;
  while (start <= key.size()) {
    const std::size_t dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!at->is_object() || !at->contains(part)) return out;
    at = &(*at)[part];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (at->is_object() && at->contains("mean") && at->contains("ci95")) {
    out.found = true;
    out.finite = (*at)["mean"].is_number() && (*at)["ci95"].is_number();
    if (out.finite) {
      out.mean = (*at)["mean"].get<double>();
      out.ci95 = (*at)["ci95"].get<double>();
    }
    out.n = summary.value("replications", std::size_t{1});
    return out;
  }
  if (at->is_number() || at->is_null()) {
    out.found = true;
    out.finite = at->is_number();
    if (out.finite) out.mean = at->get<double>();
  }
  return out;
}

std::vector<std::string> summary_number_paths(const json& summary) {
  std::vector<std::string> out;
  collect_paths(summary, "", out);
  return out;
}

void check_summary_key(const json& summary, const std::string& key, const std::string& at) {
  if (summary_number_at(summary, key).found) return;
  const std::vector<std::string> paths = summary_number_paths(summary);
  std::string hint = scenario::did_you_mean(key, paths);
  if (hint.empty()) {
    std::string some;
    for (std::size_t i = 0; i < paths.size() && i < 8; ++i) some += (i ? ", " : "") + paths[i];
    hint = "the summary's numbers include " + some;
  }
  throw InputError(at, "'" + key + "' names no number of the summary", hint);
}

}  // namespace cs::studies
