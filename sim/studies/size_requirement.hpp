#pragma once
// A sizing requirement ("serving.slo_attainment>=0.99") and how a summary meets it: the one
// definition behind `clustersim size --require` and Python's cs.size(require=...).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace cs::studies {

enum class Bound { at_most, at_least, below, above };  // <=, >=, <, >

struct Requirement {
  std::string text;   // as given, for tables and messages
  std::string key;    // a summary path: "serving.wait_mean_s"
  Bound bound = Bound::at_most;
  double value = 0;   // in the summary number's own unit
  bool holds(double measured) const;
  // How far `measured` lies on the meeting side of the bound (negative: misses it), in the
  // number's unit.
  double margin(double measured) const;
};

// "KEY<=VALUE" (operators <=, >=, <, >; spaces allowed around them). InputError at `at`
// ("--require" or "require") for a missing operator, an empty key or a value that is not a
// finite number.
Requirement parse_requirement(std::string_view text, const std::string& at);

// A number of a summary at a dot-separated path: a plain number (n = 1, no interval) or a
// replicated {"mean", "ci95"} (n = the summary's "replications").
struct SummaryNumber {
  bool found = false;   // the path names a number (or a {mean, ci95}) of the summary
  bool finite = false;  // it holds a finite value (an infinity is stored as null)
  double mean = 0;
  double ci95 = 0;      // 95% half-width; 0 with one replication
  std::size_t n = 1;
};
SummaryNumber summary_number_at(const nlohmann::json& summary, const std::string& key);

// The numeric paths of a summary ("serving.wait_mean_s", ...), for did-you-mean hints.
std::vector<std::string> summary_number_paths(const nlohmann::json& summary);

// InputError at `at` unless `key` names a number of `summary`, with the nearest key as hint.
void check_summary_key(const nlohmann::json& summary, const std::string& key, const std::string& at);

}  // namespace cs::studies
