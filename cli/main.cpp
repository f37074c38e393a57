// The `clustersim` command: parse arguments (args.hpp), call the scenario layer, print results.
// Exit codes: 0 success, 2 invalid input (usage, file, schema, values), 1 internal fault.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tbb/global_control.h>

#include "cli/args.hpp"
#include "cli/interrupt.hpp"
#include "cli/output_set.hpp"
#include "cli/size.hpp"
#include "cli/sweep.hpp"
#include "cli/training_report.hpp"
#include "sim/report/jobs_report.hpp"
#include "sim/report/link_report.hpp"
#include "sim/report/serving_report.hpp"
#include "sim/report/training_run_report.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/scenario/load.hpp"
#include "sim/studies/compare.hpp"
#include "sim/studies/plan_search.hpp"
#include "sim/world/run.hpp"
#include "sim/world/topology_report.hpp"

namespace fs = std::filesystem;
using cs::scenario::InputError;
using nlohmann::json;

namespace {

json load_doc(const std::string& file, const std::vector<std::string>& sets) {
  json doc = cs::scenario::read_scenario_file(file);
  for (const auto& s : sets) cs::scenario::apply_override(doc, s);
  return doc;
}

cs::scenario::Config load(const std::string& file, const std::vector<std::string>& sets) {
  return cs::scenario::parse_config(load_doc(file, sets));
}

// What a command reads: the scenario file and the files it references (never written over).
std::vector<fs::path> inputs_of(const std::string& file, const json& doc) {
  std::vector<fs::path> inputs{file};
  for (const std::string& f : cs::scenario::input_files(doc)) inputs.emplace_back(f);
  return inputs;
}

// A summary number, or the mean of a replicated one ({mean, ci95}); 0 when absent.
double number(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_object() && v.contains("mean") && v["mean"].is_number()) return v["mean"].get<double>();
  return 0.0;
}

void print_human(const json& s) {
  const bool replicated = s.contains("replications");
  std::printf("scenario %s  seed %s  simulated %.6g s in %.3g s wall, %.0f events%s\n",
              s["scenario"].dump().c_str(), s["seed"].dump().c_str(), number(s["sim_time_s"]),
              number(s["wall_time_s"]), number(s["events"]),
              replicated ? (" (means of " + s["replications"].dump() + " replications)").c_str() : "");
  if (s.contains("collective")) {
    const auto& c = s["collective"];
    const std::string algorithm = c["algorithm"].is_string() ? c["algorithm"].get<std::string>() : "(several)";
    std::printf("%s %s over %s ranks", c["op"].get<std::string>().c_str(), algorithm.c_str(),
                c["ranks"].dump().c_str());
    if (c.value("groups", json(1)) != json(1)) std::printf(" in each of %s groups", c["groups"].dump().c_str());
    std::printf("\n");
    // The nccl-tests table, one block per requested algorithm; under auto, the one chosen.
    std::string last;
    for (const auto& r : c["results"]) {
      const std::string alg = r.value("requested_algorithm", r.value("algorithm", algorithm));
      const bool tuned = alg == "auto";
      if (alg != last) {
        std::printf("# \"%s\"\n%14s %14s %12s %12s  %s%s\n", alg.c_str(), "size (B)", "time (us)", "algbw (GB/s)",
                    "busbw (GB/s)", "protocol", tuned ? "  algorithm" : "");
        last = alg;
      }
      std::string protocol = r.value("protocol", std::string(""));
      if (tuned) protocol.resize(std::max<std::size_t>(protocol.size(), 8), ' ');
      if (tuned) protocol += "  " + r.value("algorithm", std::string(""));
      std::printf("%14.0f %14.3f %12.3f %12.3f  %s", number(r["bytes"]), number(r["time_s"]) * 1e6,
                  number(r["algbw_GBps"]), number(r["busbw_GBps"]), protocol.c_str());
      if (r["time_s"].is_object()) std::printf("  time +- %.3f us (95%%)", number(r["time_s"]["ci95"]) * 1e6);
      std::printf("\n");
    }
    if (number(c.value("sizes_not_run", json(0))) > 0)
      std::printf("run.until came first: %s sizes not run\n", c["sizes_not_run"].dump().c_str());
    if (c.contains("background"))
      for (const auto& b : c["background"]) std::printf("background: %s\n", b.dump().c_str());
  }
  if (s.contains("training")) cs::cli::print_training(s["training"]);
  if (s.contains("links") && !s["links"]["hottest"].empty()) {
    std::printf("links by class:\n%s", cs::report::link_classes_text(s["links"]).c_str());
    std::printf("hottest links:\n%s", cs::report::hottest_links_text(s["links"]).c_str());
  }
  if (s.contains("training_run")) std::printf("%s", cs::report::training_run_text(s["training_run"]).c_str());
  if (s.contains("jobs")) std::printf("%s", cs::report::jobs_text(s["jobs"]).c_str());
  if (s.contains("serving")) std::printf("%s", cs::report::serving_text(s["serving"]).c_str());
  if (s.contains("traffic")) {
    const auto& t = s["traffic"];
    std::printf("traffic: %.0f flows, makespan %.6g s, mean FCT %.6g s, p99 FCT %.6g s\n", number(t["flows"]),
                number(t["makespan_s"]), number(t["mean_fct_s"]), number(t["p99_fct_s"]));
  }
  if (s.contains("fabric")) {
    const auto& f = s["fabric"];
    std::printf("fabric: network $%.4gM, %.4g kW; $%.0f per GPU, $%.4g per GB/s of bisection\n",
                number(f["network_cost_usd"]) / 1e6, number(f["network_power_w"]) / 1e3,
                number(f["network_cost_per_gpu_usd"]), number(f["network_usd_per_bisection_GBps"]));
    for (const auto& note : f["notes"]) std::printf("note: %s\n", note.get<std::string>().c_str());
  }
}

// The summary (and --out's files) of one run. Every output path is checked before the run;
// the files are written as a set after it (output_set.hpp).
int cmd_run(const std::string& file, const std::vector<std::string>& sets, const std::string& out,
            bool as_json) {
  const json doc = load_doc(file, sets);
  const auto config = cs::scenario::parse_config(doc);
  std::optional<cs::cli::OutputSet> files;
  if (!out.empty()) {
    files.emplace(out, "--out", inputs_of(file, doc));
    for (const char* name : {"summary.json", "timeseries.csv", "flows.csv", "links.csv", "jobs.csv"}) files->plan(name, "--out");
    if (!config.run.trace_path.empty()) files->plan(fs::path(config.run.trace_path).filename().string(), "run.trace");
  }
  cs::world::RunOptions options;
  options.interrupted = cs::cli::interrupt_check();
  options.flow_table = !out.empty();
  options.job_table = !out.empty();
  const auto result = cs::world::run_scenario(config, options);
  for (const auto& line : result.warnings) std::cerr << line << "\n";
  if (files) {
    files->write("summary.json", result.summary.dump(2) + "\n");
    if (!result.timeseries_csv.empty()) files->write("timeseries.csv", result.timeseries_csv);
    if (!result.flows_csv.empty()) files->write("flows.csv", result.flows_csv);
    if (!result.links_csv.empty()) files->write("links.csv", result.links_csv);
    if (!result.jobs_csv.empty()) files->write("jobs.csv", result.jobs_csv);
    if (!result.trace_json.empty()) files->write(fs::path(config.run.trace_path).filename().string(), result.trace_json);
    files->commit();
  } else if (!config.run.trace_path.empty() || config.run.timeseries_interval_s > 0) {
    std::cerr << "note: trace and time series are written only with --out DIR\n";
  }
  if (as_json) std::cout << result.summary.dump(2) << "\n";
  else print_human(result.summary);
  return 0;
}

int cmd_topo(const std::string& file, const std::vector<std::string>& sets, const std::vector<std::string>& grow_to,
             bool as_json) {
  if (!grow_to.empty()) {
    // The grown fabric: the same file, the --set overrides, then the --grow-to ones.
    json grown = load_doc(file, sets);
    for (const auto& s : grow_to) cs::scenario::apply_override(grown, s);
    const json growth = cs::world::growth_json(load_doc(file, sets), grown);
    if (as_json) std::cout << growth.dump(2) << "\n";
    else std::cout << cs::world::growth_text(growth);
    return 0;
  }
  const auto report = cs::world::topology_report(load_doc(file, sets));
  if (as_json) std::cout << cs::world::report_json(report).dump(2) << "\n";
  else std::cout << cs::world::report_text(report);
  return 0;
}

// `--out FILE.csv` of sweep and plan: the path is checked before any work (a CSV file in an
// existing directory), then the table is written whole or not at all (OutputSet). Empty: none.
class CsvOut {
 public:
  CsvOut(const std::string& out, std::vector<fs::path> inputs) {
    if (out.empty()) return;
    const fs::path target(out);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::error_code ec;
    if (!target.has_filename() || !fs::is_directory(dir, ec))
      throw InputError("--out", "a CSV file path in an existing directory: " + out);
    name_ = target.filename().string();
    files_.emplace(dir, "--out", std::move(inputs));
    files_->plan(name_, "--out");
  }
  void write(const std::string& csv) {
    files_->write(name_, csv);
    files_->commit();
  }

 private:
  std::string name_;
  std::optional<cs::cli::OutputSet> files_;
};

// With --paired, the paired differences of the points at common seeds (10 unless
// --replications says); else every point's row, at --replications seeds when given.
int cmd_sweep(const cs::cli::Args& a) {
  json base = load_doc(a.file, a.sets);
  std::vector<cs::cli::GridAxis> axes;
  for (const auto& g : a.grids) axes.push_back(cs::cli::parse_grid(g));
  const std::string& out = a.sweep_out;
  CsvOut csv_out(out, inputs_of(a.file, base));  // checked before the points run
  std::string csv;
  if (!a.paired.empty()) {
    std::vector<std::string> warnings;
    csv = cs::cli::run_paired_sweep(base, axes, a.paired, a.replications > 0 ? a.replications : 10, a.jobs, warnings,
                                    cs::cli::interrupt_check());
    for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
  } else {
    if (a.replications > 0) cs::scenario::set_path(base, "run.replications", a.replications);
    csv = cs::cli::run_sweep(base, axes, a.jobs, cs::cli::interrupt_check());
  }
  if (out.empty()) std::cout << csv;
  else csv_out.write(csv);
  return 0;
}

// A long plan search says how long it will take: on stderr, once a stage has run 10 s, then
// every 30 s, the plans done and the time left at the pace so far (an upper bound while
// screening).
std::function<void(const char*, std::size_t, std::size_t, double)> plan_progress() {
  auto next_s = std::make_shared<double>(10.0);
  return [next_s](const char* stage, std::size_t done, std::size_t total, double elapsed_s) {
    if (elapsed_s < *next_s || done == 0 || done >= total) return;
    *next_s = elapsed_s + 30.0;
    // Screening stops once no plan left can reach the top, so its total and time left are upper
    // bounds (a full GPT-3 search screens a few hundred of its 7,581 plans).
    const bool upper_bound = std::string_view(stage) == "screening";
    std::fprintf(stderr, "plan: %s %zu of %s%zu plans in %.0f s; %sabout %.0f s left at this pace%s (Ctrl-C stops)\n",
                 stage, done, upper_bound ? "at most " : "", total, elapsed_s, upper_bound ? "up to " : "",
                 elapsed_s / double(done) * double(total - done),
                 upper_bound ? ", less as plans whose bound cannot reach the top are skipped" : "");
  };
}

// A search estimated over a minute says so before it starts, on stderr.
void print_plan_estimate(const cs::studies::PlanSearchEstimate& e) {
  if (e.seconds < 60) return;
  std::fprintf(stderr, "plan: %zu plans to screen at most (%zu valid), up to about %.0f s at this build's pace "
               "(plans whose bound cannot reach the top are not screened; Ctrl-C stops; --only narrows)\n", e.fitting, e.valid, e.seconds);
}

int cmd_plan(const std::string& file, const std::vector<std::string>& sets, int jobs, int top, int refine,
             const std::vector<std::string>& only, double memory_headroom, bool as_json, const std::string& out,
             const std::string& max_time) {
  json doc = load_doc(file, sets);
  if (memory_headroom >= 0) cs::scenario::set_path(doc, "workload.memory_headroom", memory_headroom);
  const auto config = cs::scenario::parse_config(doc);
  cs::studies::PlanSearchOptions options;
  options.space = cs::studies::plan_space(only);
  options.jobs = jobs;
  options.refine = std::size_t(refine);
  options.max_seconds = cs::studies::plan_time_limit(max_time);
  options.estimated = print_plan_estimate;
  options.interrupted = cs::cli::interrupt_check();
  options.progress = plan_progress();
  CsvOut csv_out(out, inputs_of(file, doc));  // checked before the plans run
  const auto search = cs::studies::search_plans(config, options);
  if (!out.empty()) csv_out.write(cs::studies::plan_search_csv(search));
  // The table shows the best 20 unless told; --json lists every plan unless told.
  const std::size_t shown = top > 0 ? std::size_t(top) : (as_json ? 0 : 20);
  const json result = cs::studies::plan_search_json(config, search, shown);
  if (as_json) std::cout << result.dump(2) << "\n";
  else cs::cli::print_plans(result);
  return 0;
}

// A column's label: the file's stem, made unique by its position when two stems repeat.
std::vector<std::string> labels_of(const std::vector<std::string>& files) {
  std::vector<std::string> labels;
  for (const auto& f : files) labels.push_back(fs::path(f).stem().string());
  for (std::size_t i = 0; i < labels.size(); ++i)
    for (std::size_t j = i + 1; j < labels.size(); ++j)
      if (labels[j] == labels[i]) labels[j].append("#").append(std::to_string(j + 1));
  return labels;
}

int cmd_compare(const std::vector<std::string>& files, const std::vector<std::string>& workload_files,
                std::vector<std::string> sets, int replications, int jobs, bool as_json) {
  if (replications > 0) sets.push_back("run.replications=" + std::to_string(replications));
  std::vector<cs::studies::ComparedFabric> fabrics;
  const auto labels = labels_of(files);
  for (std::size_t i = 0; i < files.size(); ++i)
    fabrics.push_back({labels[i], cs::scenario::read_scenario_file(files[i])});
  // The workloads: each --workload file's, else the first fabric file's.
  std::vector<cs::studies::ComparedWorkload> workloads;
  const std::vector<std::string>& sources = workload_files.empty() ? std::vector<std::string>{files.front()} : workload_files;
  const auto workload_labels = labels_of(sources);
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const json doc = workload_files.empty() ? fabrics.front().doc : cs::scenario::read_scenario_file(sources[i]);
    if (!doc.contains("workload")) throw InputError("workload", "a workload in " + sources[i]);
    workloads.push_back({workload_labels[i], doc["workload"]});
  }
  const json comparison = cs::studies::compare_fabrics(fabrics, workloads, sets, jobs);
  if (as_json) std::cout << comparison.dump(2) << "\n";
  else std::cout << cs::studies::comparison_text(comparison);
  return 0;
}

int cmd_size(const cs::cli::Args& a) {
  const json base = load_doc(a.file, a.sets);
  const json result = cs::cli::run_size(base, a.varies, a.requires_, a.minimize, a.jobs, a.max_runs, a.confirm);
  if (a.as_json) std::cout << result.dump(2) << "\n";
  else std::cout << cs::studies::size_text(result);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const cs::cli::Parsed parsed = cs::cli::parse_args(argc, argv);
  if (!parsed.args) return parsed.exit_code;
  cs::cli::install_interrupt_handler();
  const cs::cli::Args& a = *parsed.args;
  using cs::cli::Command;
  // run --threads: TBB's limit on the threads of every parallel algorithm the run uses
  // (replications, the flow solver, step simulations), held for the command's lifetime here
  // rather than set inside the library, which keeps no process-wide state.
  std::optional<tbb::global_control> thread_limit;
  if (a.threads > 0) thread_limit.emplace(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(a.threads));

  auto dispatch = [&]() -> int {
    switch (a.command) {
      case Command::run: return cmd_run(a.file, a.sets, a.out, a.as_json);
      case Command::topo: return cmd_topo(a.file, a.sets, a.grow_to, a.as_json);
      case Command::sweep: return cmd_sweep(a);
      case Command::plan:
        return cmd_plan(a.file, a.sets, a.jobs, a.top, a.refine, a.plan_only, a.memory_headroom, a.as_json, a.plan_out,
                        a.plan_max_time);
      case Command::compare:
        return cmd_compare(a.compare_files, a.workload_files, a.sets, a.replications, a.jobs, a.as_json);
      case Command::size: return cmd_size(a);
      case Command::validate: {
        const auto config = load(a.file, a.sets);
        for (const auto& line : config.warnings) std::cerr << line << "\n";
        cs::world::check_buildable(config);
        std::cout << "ok: " << a.file << "\n";
        return 0;
      }
      case Command::schema: break;
    }
    std::cout << cs::scenario::schema_text();
    return 0;
  };
  try {
    const int code = dispatch();
    // What was printed must have reached stdout: a full device or a closed stdout is a
    // failure, not a success that showed nothing.
    if (!cs::cli::stdout_ok()) {
      std::cerr << "error: could not write to standard output\n";
      return 1;
    }
    return code;
  } catch (const cs::engine::Interrupted&) {
    // Every output's temporaries (and a directory --out created) are gone by now.
    std::cerr << "interrupted: nothing written\n";
    return 130;
  } catch (const cs::cli::OutputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 1;
  }
}
