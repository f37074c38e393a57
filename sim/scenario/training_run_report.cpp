#include "sim/scenario/training_run_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cs::scenario {
namespace {

using nlohmann::json;

double mean_of(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_object() && v.contains("mean") && v["mean"].is_number()) return v["mean"].get<double>();
  return 0.0;
}

const json& at(const json& block, const char* group, const char* key) {
  static const json none;  // immutable
  if (!block.contains(group) || !block[group].is_object() || !block[group].contains(key)) return none;
  return block[group][key];
}

std::string printf_text(const char* format, double a, double b = 0.0) {
  char buf[128];
  std::snprintf(buf, sizeof buf, format, a, b);
  return buf;
}

// " +- x" for a replicated number, in the unit `scale` divides by; nothing for an interval
// that is zero but for rounding (a number every replication agrees on).
std::string ci(const json& v, const char* format, double scale = 1.0) {
  if (!v.is_object() || !v.contains("ci95") || !v["ci95"].is_number()) return "";
  const double half = v["ci95"].get<double>();
  if (!(half > 1e-12 * std::max(1.0, std::fabs(mean_of(v))))) return "";
  return " +- " + printf_text(format, half / scale);
}

// A duration in the unit that reads best: seconds below two hours, hours below two days.
std::string duration(const json& v) {
  const double s = mean_of(v);
  const double scale = s < 7200.0 ? 1.0 : s < 172800.0 ? 3600.0 : 86400.0;
  const char* unit = scale == 1.0 ? " s" : scale == 3600.0 ? " h" : " d";
  return printf_text("%.4g", s / scale) + ci(v, "%.2g", scale) + unit;
}

// Counts and node-hours: whole above a thousand, four significant digits below.
std::string plain(double x) { return printf_text(std::fabs(x) >= 1000.0 ? "%.0f" : "%.4g", x); }

std::string count(const json& v) { return plain(mean_of(v)) + ci(v, "%.2g"); }

std::string dollars(const json& v) {
  const double usd = mean_of(v);
  if (usd >= 1e6) return printf_text("$%.4gM", usd / 1e6) + ci(v, "%.2gM", 1e6);
  return printf_text("$%.2f", usd) + ci(v, "%.2f");
}

}  // namespace

std::string training_run_text(const json& b) {
  std::string out = "training run: ";
  const double completed = mean_of(at(b, "job", "completed"));
  out += completed >= 1.0 ? "completed" : completed > 0.0 ? printf_text("completed in %.0f%% of the replications", 100 * completed)
                                                          : "not completed by run.until";
  out += ", " + duration(at(b, "job", "useful_time_s")) + " of training kept\n";
  out += "  wall time      " + duration(b.value("wall_time_s", json())) + "   goodput " +
         printf_text("%.4g", mean_of(b.value("goodput", json()))) + ci(b.value("goodput", json()), "%.2g") + "\n";
  out += "  cost           " + dollars(b.value("cost_usd", json()));
  if (b.contains("cost_usd_by_market"))
    for (const auto& [market, usd] : b["cost_usd_by_market"].items())
      if (mean_of(usd) > 0.0)
        out += "   " + market + " " + dollars(usd) + " (" +
               plain(mean_of(at(b, "node_hours_by_market", market.c_str()))) + " node-h)";
  out += "\n  interruptions  " + count(b.value("interruptions", json())) + " (spot reclaims)   failures " +
         count(b.value("failures", json())) + "   restores " + count(at(b, "job", "restores")) + "\n";
  const json& interval = at(b, "checkpoint", "interval_s");
  out += "  checkpoints    " + count(b.value("checkpoints", json())) + " (" +
         (interval.is_null() ? std::string("none periodic") : "every " + duration(interval)) + ", writing " +
         duration(at(b, "checkpoint", "write_s")) + ")   lost work " + duration(b.value("lost_work_s", json())) + "   restoring " +
         duration(b.value("restore_time_s", json())) + "\n";
  const double wall = mean_of(b.value("wall_time_s", json()));
  if (wall > 0.0 && b.contains("time_in_state_s")) {
    out += "  time in state ";
    for (const auto& [state, s] : b["time_in_state_s"].items())
      if (mean_of(s) > 0.0) out += " " + state + " " + printf_text("%.1f%%", 100.0 * mean_of(s) / wall);
    out += "\n";
  }
  return out;
}

}  // namespace cs::scenario
