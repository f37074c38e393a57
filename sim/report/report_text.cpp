#include "sim/report/report_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cs::report::detail {

using nlohmann::json;

double mean_of(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_object() && v.contains("mean") && v["mean"].is_number()) return v["mean"].get<double>();
  return 0.0;
}

const json& key(const json& block, const char* name) {
  static const json none;  // immutable
  return block.contains(name) ? block[name] : none;
}

const json& at(const json& block, const char* group, const char* key) {
  static const json none;  // immutable
  if (!block.contains(group) || !block[group].is_object() || !block[group].contains(key)) return none;
  return block[group][key];
}

std::string printf_text(const char* format, double a, double b) {
  char buf[128];
  std::snprintf(buf, sizeof buf, format, a, b);
  return buf;
}

std::string ci(const json& v, const char* format, double scale) {
  if (!v.is_object() || !v.contains("ci95") || !v["ci95"].is_number()) return "";
  const double half = v["ci95"].get<double>();
  if (!(half > 1e-12 * std::max(1.0, std::fabs(mean_of(v))))) return "";
  return " +- " + printf_text(format, half / scale);
}

std::string duration(const json& v) {
  const double s = mean_of(v);
  const double scale = s < 7200.0 ? 1.0 : s < 172800.0 ? 3600.0 : 86400.0;
  const char* unit = scale == 1.0 ? " s" : scale == 3600.0 ? " h" : " d";
  return printf_text("%.4g", s / scale) + ci(v, "%.2g", scale) + unit;
}

std::string plain(double x) { return printf_text(std::fabs(x) >= 1000.0 ? "%.0f" : "%.4g", x); }

std::string count(const json& v) { return plain(mean_of(v)) + ci(v, "%.2g"); }

std::string dollars(const json& v) {
  const double usd = mean_of(v);
  if (usd >= 1e6) return printf_text("$%.4gM", usd / 1e6) + ci(v, "%.2gM", 1e6);
  return printf_text("$%.2f", usd) + ci(v, "%.2f");
}

std::string cost_by_market(const json& b, const char* hours_key, const char* unit) {
  std::string out;
  if (!b.contains("cost_usd_by_market")) return out;
  if (b.contains("energy_kwh")) {  // owned: the terms of ownership, and the energy drawn
    out += "   owned:";
    for (const auto& [term, usd] : b["cost_breakdown_usd"].items())  // "maint.": the text never says "nan"
      if (mean_of(usd) > 0.0) out += " " + (term == "maintenance" ? std::string("maint.") : term) + " " + dollars(usd);
    return out + printf_text("   %.0f MWh", mean_of(b["energy_kwh"]) / 1e3);
  }
  for (const auto& [market, usd] : b["cost_usd_by_market"].items())
    if (mean_of(usd) > 0.0)
      out += "   " + market + " " + dollars(usd) + " (" + plain(mean_of(at(b, hours_key, market.c_str()))) + " " + unit + ")";
  return out;
}

}  // namespace cs::report::detail
