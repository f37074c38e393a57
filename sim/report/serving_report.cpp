#include "sim/report/serving_report.hpp"

#include <utility>

#include "sim/report/report_text.hpp"

namespace cs::report {

using namespace detail;
using nlohmann::json;

namespace {

// A latency: milliseconds below a second, else as duration() reads it.
std::string latency(const json& v) {
  const double s = mean_of(v);
  if (s >= 1.0) return duration(v);
  return printf_text("%.3g", s * 1e3) + ci(v, "%.2g", 1e-3) + " ms";
}

std::string percentiles(const json& group) {
  if (!group.is_object()) return "";
  return "p50 " + latency(key(group, "p50_s")) + "   p95 " + latency(key(group, "p95_s")) + "   p99 " +
         latency(key(group, "p99_s"));
}

// A 0/1 judgment, or over replications the share of them in which it held.
std::string verdict(const json& met) {
  const double share = mean_of(met);
  return share >= 1.0 ? "met" : share > 0.0 ? printf_text("met in %.0f%% of the replications", 100 * share) : "missed";
}

// The attainment over every bound (overall and in the peak hour), then each bound given: its
// quantile at the SLO's percentile against it, and which missed.
std::string slo_text(const json& b) {
  const json& slo = key(b, "slo");
  const auto share = [](const json& v) { return printf_text("%.4g%%", 100.0 * mean_of(v)) + ci(v, "%.2g%%", 0.01); };
  std::string out = "  SLO          " + share(key(b, "slo_attainment")) + " of requests within every bound";
  if (!key(slo, "attainment_peak_hour").is_null()) {
    out += ", " + share(key(slo, "attainment_peak_hour")) + " in the peak hour";
    if (key(slo, "peak_hour").is_number()) out += printf_text(" (hour %g)", mean_of(key(slo, "peak_hour")));
  }
  out += "\n";
  const json& bounds = key(slo, "bounds");
  if (!bounds.is_object() || bounds.empty()) return out;
  out += "  SLO " + printf_text("p%-7g ", mean_of(key(slo, "percentile"))) + verdict(key(slo, "met")) + ":";
  const char* between = "";
  const std::pair<const char*, const char*> labels[] = {{"latency", "latency"}, {"ttft", "TTFT"}, {"tpot", "TPOT"}};
  for (const auto& [name, label] : labels) {
    const json& bound = key(bounds, name);
    if (!bound.is_object()) continue;
    const json& observed = key(bound, "observed_s");
    out += std::string(between) + " " + label + " " + (observed.is_null() ? "none observed" : latency(observed)) +
           " against " + latency(key(bound, "bound_s")) + " (" + verdict(key(bound, "met")) + ")";
    between = ",";
  }
  return out + "\n";
}

}  // namespace

std::string serving_text(const json& b) {
  std::string out = "serving: " + count(key(b, "requests")) + " requests, " + count(key(b, "completed")) +
                    " completed, " + count(key(b, "dropped")) + " dropped";
  if (b.contains("drops"))
    for (const auto& [reason, n] : b["drops"].items())
      if (mean_of(n) > 0.0) out += " (" + reason + " " + count(n) + ")";
  out += ", " + count(at(b, "request_counts", "in_flight")) + " in flight at the end\n";
  out += "  latency      mean " + latency(key(b, "latency_mean_s")) + "   p50 " + latency(key(b, "latency_p50_s")) +
         "   p95 " + latency(key(b, "latency_p95_s")) + "   p99 " + latency(key(b, "latency_p99_s")) + "   wait mean " +
         latency(key(b, "wait_mean_s")) + "\n";
  out += slo_text(b);
  if (b.contains("ttft"))
    out += "  TTFT         " + percentiles(b["ttft"]) + "\n  TPOT         " + percentiles(b["tpot"]) + "\n  tokens       " +
           count(at(b, "llm", "output_tokens_per_s")) + " output tokens/s   preemptions " + count(at(b, "llm", "preemptions")) +
           "\n";
  out += "  replicas     mean " + count(key(b, "replicas_mean")) + "   max " + count(key(b, "replicas_max")) + "   ready mean " +
         count(at(b, "fleet", "ready_mean")) + "\n";
  out += "  cost         " + dollars(key(b, "cost_usd")) + cost_by_market(b, "replica_hours_by_market", "replica-h") + "\n";
  const double reclaims = mean_of(at(b, "fleet", "reclaims")), failures = mean_of(at(b, "fleet", "failures"));
  if (reclaims > 0 || failures > 0 || mean_of(at(b, "replica_hours_by_market", "spot")) > 0)
    out += "  spot         " + count(at(b, "fleet", "reclaims")) + " reclaims over " +
           plain(mean_of(at(b, "fleet", "reclaim_exposure_replica_hours"))) + " replica-h exposed, " +
           count(at(b, "fleet", "fallbacks")) + " fell back to on demand, " + count(at(b, "fleet", "failures")) +
           " failures, " + count(at(b, "request_counts", "retries")) + " requests retried\n";
  if (b.contains("pools")) {
    out += "  pools       ";
    for (const char* pool : {"prefill", "decode"}) {
      const json& p = b["pools"][pool];
      out += std::string(" ") + pool + ": " + count(key(p, "replicas_mean")) + " replicas on average, " +
             dollars(key(p, "cost_usd")) + ";";
    }
    out += " KV caches: " + printf_text("%.4g", mean_of(key(b, "kv_bytes_transferred")) / 1e9) + " GB over the " +
           (key(b, "kv_transfer").is_string() && b["kv_transfer"] == "network" ? "simulated network" : "link") + "\n";
  }
  return out;
}

}  // namespace cs::report
