#include "sim/report/jobs_report.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sim/report/report_text.hpp"

namespace cs::report {

using nlohmann::json;
using namespace detail;

namespace {

std::string share(const json& v) { return printf_text("%.3f", mean_of(v)) + ci(v, "%.2g"); }

std::size_t name_width(const json& groups) {
  std::size_t width = 5;
  for (const auto& [name, g] : groups.items()) width = std::max(width, name.size());
  return width;
}

// One row: `format` has "%-*s" (the first cell, padded to `width`) then one "%Ns" per other cell.
std::string printf_row(const char* format, int width, const std::vector<std::string>& cells) {
  char row[512];
  const auto c = [&](std::size_t i) { return i < cells.size() ? cells[i].c_str() : ""; };
  std::snprintf(row, sizeof row, format, width, c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7), c(8), c(9));
  return row;
}

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
    // Chargeback per team: its waits, its share of the busy GPU-time, of the cluster's GPU-time
    // against its quota, its GPU-hours and its part of the cost.
    const int width = static_cast<int>(name_width(b["queues"])) + 13;
    out += printf_row("  %-*s %12s %14s %14s %10s %10s %8s %10s %12s\n", width,
                      {"queue", "completed", "wait mean", "wait p95", "GPU share", "of cluster", "quota", "GPU-h", "cost"});
    for (const auto& [name, q] : b["queues"].items())
      out += printf_row("  %-*s %12s %14s %14s %10s %10s %8s %10s %12s\n", width,
                        {name, count(key(q, "completed")), duration(key(q, "wait_mean_s")), duration(key(q, "wait_p95_s")),
                         share(key(q, "gpu_share")), share(key(q, "cluster_share")),
                         q.contains("quota") ? share(q["quota"]) : std::string("-"), count(key(q, "busy_gpu_hours")),
                         dollars(key(q, "cost_usd"))});
  }
  // Waits of the completed jobs per class and by size (GPUs, smallest first).
  const auto wait_table = [&](const char* label, const json& groups, std::vector<std::string> names) {
    if (names.empty()) return;
    const int width = static_cast<int>(std::max(name_width(groups), std::strlen(label))) + 13;
    out += printf_row("  %-*s %12s %14s %14s\n", width, {label, "completed", "wait mean", "wait p95"});
    for (const std::string& name : names) {
      const json& g = groups[name];
      out += printf_row("  %-*s %12s %14s %14s\n", width,
                        {name, count(key(g, "completed")), duration(key(g, "wait_mean_s")), duration(key(g, "wait_p95_s"))});
    }
  };
  const json none = json::object();
  const json& classes = b.contains("classes") ? b["classes"] : none;
  std::vector<std::string> class_names;
  for (const auto& [name, g] : classes.items()) class_names.push_back(name);
  wait_table("class", classes, class_names);
  const json& sizes = b.contains("waits_by_size") ? b["waits_by_size"] : none;
  std::vector<std::string> size_names;
  for (const auto& [name, g] : sizes.items())
    if (mean_of(key(g, "completed")) > 0.0) size_names.push_back(name);
  std::sort(size_names.begin(), size_names.end(),
            [](const std::string& x, const std::string& y) { return std::atoi(x.c_str()) < std::atoi(y.c_str()); });
  wait_table("job size (GPUs)", sizes, size_names);
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
