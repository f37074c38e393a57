#include "sim/report/training_run_report.hpp"

#include "sim/report/report_text.hpp"

namespace cs::report {

using namespace detail;
using nlohmann::json;

std::string training_run_text(const json& b) {
  std::string out = "training run: ";
  const double completed = mean_of(at(b, "job", "completed"));
  out += completed >= 1.0 ? "completed" : completed > 0.0 ? printf_text("completed in %.0f%% of the replications", 100 * completed)
                                                          : "not completed by run.until";
  out += ", " + duration(at(b, "job", "useful_time_s")) + " of training kept\n";
  if (const auto step = b.find("step"); step != b.end()) {  // simulated from workload.training
    const json& s = *step;
    out += "  step           " + duration(s.value("step_time_s", json())) + " simulated (" +
           s["model"].value("name", std::string("model")) + " on " + count(s["plan"].value("gpus", json())) +
           " GPUs, " + printf_text("%.0f tokens/s, MFU %.3f", mean_of(s.value("tokens_per_s", json())),
                                   mean_of(s.value("mfu", json()))) +
           ")   model checkpoint " + printf_text("%.3g TB", mean_of(s.value("model_checkpoint_bytes", json())) / 1e12) +
           "\n";
  }
  out += "  wall time      " + duration(b.value("wall_time_s", json())) + "   goodput " +
         printf_text("%.4g", mean_of(b.value("goodput", json()))) + ci(b.value("goodput", json()), "%.2g") + "\n";
  out += "  cost           " + dollars(b.value("cost_usd", json())) + cost_by_market(b, "node_hours_by_market", "node-h");
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

}  // namespace cs::report
