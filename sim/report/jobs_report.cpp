#include "sim/report/jobs_report.hpp"

#include <algorithm>
#include <cstdio>

#include "sim/report/report_text.hpp"

namespace cs::report {

using nlohmann::json;
using namespace detail;

namespace {

std::string share(const json& v) { return printf_text("%.3f", mean_of(v)) + ci(v, "%.2g"); }

std::string scheduler_words(const json& s) {
  if (!s.is_object()) return "";
  std::string out = s.value("policy", std::string("?"));
  if (s.value("backfill", false) && out != "backfill") out += " + EASY backfill";
  if (s.value("preemption", false)) out += ", preemption";
  return out + ", " + s.value("placement", std::string("any")) + " placement";
}

}  // namespace

std::string jobs_text(const json& b) {
  std::string out = "jobs: " + count(key(b, "submitted")) + " submitted, " + count(key(b, "completed")) + " completed";
  const double pending = mean_of(at(b, "stream", "pending_at_end")), running = mean_of(at(b, "stream", "running_at_end"));
  if (pending > 0.0 || running > 0.0)
    out += " (" + count(at(b, "stream", "pending_at_end")) + " pending and " + count(at(b, "stream", "running_at_end")) +
           " running at the end)";
  if (mean_of(at(b, "stream", "rejected")) > 0.0) out += ", " + count(at(b, "stream", "rejected")) + " refused";
  out += "; utilization " + share(key(b, "utilization")) + "\n";
  out += "  scheduler      " + scheduler_words(key(b, "scheduler")) + "\n";
  out += "  wait           mean " + duration(key(b, "wait_mean_s")) + "   p95 " + duration(key(b, "wait_p95_s")) +
         "   (run time mean " + duration(at(b, "stream", "runtime_mean_s")) + ")\n";
  if (b.contains("queues") && b["queues"].is_object()) {
    std::size_t width = 5;
    for (const auto& [name, q] : b["queues"].items()) width = std::max(width, name.size());
    char head[160];
    std::snprintf(head, sizeof head, "  %-*s %12s %14s %14s %10s\n", static_cast<int>(width) + 13, "queue", "completed",
                  "wait mean", "wait p95", "GPU share");
    out += head;
    for (const auto& [name, q] : b["queues"].items()) {
      char row[256];
      std::snprintf(row, sizeof row, "  %-*s %12s %14s %14s %10s\n", static_cast<int>(width) + 13, name.c_str(),
                    count(key(q, "completed")).c_str(), duration(key(q, "wait_mean_s")).c_str(),
                    duration(key(q, "wait_p95_s")).c_str(), share(key(q, "gpu_share")).c_str());
      out += row;
    }
  }
  out += "  preemptions    " + count(key(b, "preemptions")) + "   interruptions " + count(at(b, "fleet", "interruptions")) +
         " (node failures " + count(at(b, "fleet", "node_failures")) + ", spot reclaims " +
         count(at(b, "fleet", "reclaims")) + ")   lost " + count(key(b, "lost_gpu_hours")) + " GPU-h\n";
  out += "  GPU-hours      busy " + count(at(b, "gpu_hours", "busy")) + " of " + count(at(b, "gpu_hours", "available")) +
         " in service: restoring " + count(at(b, "gpu_hours", "restore")) + ", checkpointing " +
         count(at(b, "gpu_hours", "checkpoint")) + ", stalled " + count(at(b, "gpu_hours", "stalled")) +
         ", slowed by placement " + count(at(b, "gpu_hours", "slowdown")) + "\n";
  out += "  placement      " + printf_text("%.3f", mean_of(at(b, "placement", "mean_spread"))) +
         " leaves (groups) per run, slowdown " + printf_text("%.4f", mean_of(at(b, "placement", "mean_slowdown"))) + "\n";
  out += "  cost           " + dollars(key(b, "cost_usd")) + cost_by_market(b, "node_hours_by_market", "node-h");
  return out + "\n";
}

}  // namespace cs::report
