#pragma once
// Internal: numbers of a summary block as a person reads them, for the CLI's reports
// (training_run_report.cpp, serving_report.cpp). A number may be plain or replicated
// ({"mean", "ci95"}: shown as mean +- ci95).
#include <string>

#include <nlohmann/json.hpp>

namespace cs::report::detail {

// The number, or the mean of a replicated one; 0 when absent.
double mean_of(const nlohmann::json& v);
// block[group][key], or null.
const nlohmann::json& at(const nlohmann::json& block, const char* group, const char* key);
// block[name], or null when the block has no such member.
const nlohmann::json& key(const nlohmann::json& block, const char* name);
std::string printf_text(const char* format, double a, double b = 0.0);
// " +- x" for a replicated number, in the unit `scale` divides by; nothing for an interval
// that is zero but for rounding (a number every replication agrees on).
std::string ci(const nlohmann::json& v, const char* format, double scale = 1.0);
// A duration in the unit that reads best: seconds below two hours, hours below two days.
std::string duration(const nlohmann::json& v);
// Counts and hours: whole above a thousand, four significant digits below.
std::string plain(double x);
std::string count(const nlohmann::json& v);
std::string dollars(const nlohmann::json& v);
// "   <market> $x (<hours> <unit>)" for each market of b.cost_usd_by_market that cost anything,
// its hours from b[hours_key] (node-hours of a training run, replica-hours of a serving fleet).
std::string cost_by_market(const nlohmann::json& b, const char* hours_key, const char* unit);

}  // namespace cs::report::detail
