// The command line of `clustersim` (CLI11): every subcommand and option, parsed into Args.
#include "cli/args.hpp"

#include <iostream>
#include <utility>

#include <CLI/CLI.hpp>

namespace cs::cli {

Parsed parse_args(int argc, const char* const* argv) {
  Args a;
  CLI::App app{"clustersim: discrete-event simulation of GPU clusters"};
  app.require_subcommand(1);

  auto* run = app.add_subcommand("run", "Run a scenario and print its summary");
  run->add_option("FILE", a.file, "Scenario file (JSON)")->required();
  run->add_option("--set", a.sets, "Override a key: PATH=VALUE (VALUE is JSON or a bare string)");
  run->add_option("--out", a.out, "Write summary.json (and time series, trace) to this directory");
  run->add_flag("--json", a.as_json, "Print exactly the summary JSON on stdout");
  run->add_option("--threads", a.threads,
                  "Run on at most N threads (default: every core; the summary is the same for any N)")
      ->check(CLI::Range(1, 4096));

  auto* validate = app.add_subcommand("validate", "Check a scenario without running it");
  validate->add_option("FILE", a.file, "Scenario file (JSON)")->required();
  validate->add_option("--set", a.sets, "Override a key: PATH=VALUE");

  auto* topo = app.add_subcommand("topo", "Report on a scenario's topology: counts, diameter, "
                                          "bisection, cost and power");
  topo->add_option("FILE", a.file, "Scenario file (JSON)")->required();
  topo->add_option("--set", a.sets, "Override a key: PATH=VALUE");
  topo->add_option("--grow-to", a.grow_to,
                   "Report growing this fabric to the one with these overrides (PATH=VALUE, e.g. topology.nodes=2048): "
                   "what is reused, bought and recabled");
  topo->add_flag("--json", a.as_json, "Print the report as JSON");

  // --replications of the commands that compare (sweep, compare): statistics on request.
  const auto add_replications = [&a](CLI::App* command, const char* help) {
    command->add_option("--replications", a.replications, help)->check(CLI::Range(1, 1000));
  };
  // FILE, --set and -j of a command that runs a scenario at many points (sweep, size).
  const auto add_points_options = [&a](CLI::App* command, const char* jobs_help) {
    command->add_option("FILE", a.file, "Scenario file (JSON)")->required();
    command->add_option("--set", a.sets, "Override a key at every point: PATH=VALUE")->allow_extra_args(false);
    command->add_option("-j,--jobs", a.jobs, jobs_help)->check(CLI::Range(1, 1024));
  };
  auto* sweep = app.add_subcommand(
      "sweep", "Run a scenario at every point of a grid (the cartesian product of the --grid "
               "options, the first varying slowest) and print CSV: the grid columns, then the "
               "summary flattened; one row per point, or per point x size for a collective "
               "(collective.bytes, collective.time_s, ...), as Python's clustersim.sweep");
  add_points_options(sweep, "Run N points at once (output is the same for any N)");
  sweep->add_option("--grid", a.grids,
                    "PATH=V1,V2,...: values as --set takes them, split on commas outside "
                    "[ ], { } and quotes (repeatable)")
      ->required()
      ->allow_extra_args(false);
  sweep->add_option("--out", a.sweep_out, "Write the CSV to this file (atomically) instead of stdout");
  add_replications(sweep, "Run every point at N seeds (run.replications): each number becomes its mean and 95% "
                          "half-width (columns KEY.mean, KEY.ci95); with --paired, the common seeds (default 10)");
  sweep->add_option("--paired", a.paired,
                    "KEY: compare every point with the first at common seeds (seed, seed + 1, ...), seed by seed: "
                    "one row per point and key with its mean, ci95 and the paired difference from the first "
                    "point (difference_mean, difference_ci95, conclusive, lower, higher, equal); a warning "
                    "when the difference is not significant while the seeds disagree (repeatable)")
      ->allow_extra_args(false);

  auto* plan = app.add_subcommand(
      "plan", "Every valid parallel plan (tp, pp, dp, cp, ep, micro-batch, ZeRO, schedule, recomputation) of a "
              "training scenario's model on its cluster: those that do not fit dropped, the rest simulated for one "
              "step (in parallel: a contention-free screening of every plan, then the best on the scenario's "
              "network) and ranked by tokens/s with their memory");
  plan->add_option("FILE", a.file, "Scenario file (JSON) with a training workload")->required();
  plan->add_option("--set", a.sets, "Override a key: PATH=VALUE")->allow_extra_args(false);
  plan->add_option("-j,--jobs", a.jobs, "Simulate N plans at once (results are the same for any N)")
      ->check(CLI::Range(1, 1024));
  plan->add_option("--top", a.top, "Show the best K plans (default: 20 in the table, every plan with --json)")
      ->check(CLI::Range(1, 1 << 30));
  plan->add_option("--refine", a.refine,
                   "Rank the best R plans by the whole simulation on the scenario's network, after a contention-free "
                   "screening of every plan (default 10; 0: screening only)")
      ->check(CLI::Range(0, 1 << 30));
  plan->add_option("--only", a.plan_only,
                   "Narrow the plans: KEY=V1,V2 with KEY schedule (gpipe, 1f1b, interleaved, zb_h1), zero (0-3), "
                   "recompute (none, selective, full), micro (micro-batch sizes), virtual_stages, max_cp; repeatable")
      ->allow_extra_args(false);
  plan->add_option("--memory-headroom", a.memory_headroom,
                   "Share of the GPU's memory a plan must leave free to fit, 0 to 0.5 (default: the scenario's "
                   "workload.memory_headroom, 0.05)")
      ->check(CLI::Range(0.0, 0.5));
  plan->add_option("--max-time", a.plan_max_time,
                   "Refuse a search estimated to take longer than this (a duration such as 30min or 2h, or seconds; "
                   "default 1h); a search estimated over a minute prints its estimate first")
      ->allow_extra_args(false);
  auto* plan_json = plan->add_flag("--json", a.as_json, "Print the ranked plans as JSON");
  plan->add_option("--out", a.plan_out, "Write every ranked plan as CSV to this file (atomically)")->excludes(plan_json);
  auto* compare = app.add_subcommand(
      "compare", "Run the same workloads on several fabrics and print them side by side: GPUs, "
                 "switches, cables, network and whole-cluster cost and power, bisection, all-to-all "
                 "bound, and per workload row its time, busbw and network cost per GPU x GB/s of "
                 "busbw (training: step time, tokens/s, exposed communication)");
  compare->add_option("FILES", a.compare_files, "Scenario files, one per fabric (hardware, topology, network)")
      ->required()
      ->expected(1, -1);
  compare->add_option("--workload", a.workload_files,
                      "Run this scenario file's workload on every fabric (repeatable); default: the "
                      "first file's")
      ->allow_extra_args(false);
  compare->add_option("--set", a.sets, "Override a key on every fabric: PATH=VALUE")->allow_extra_args(false);
  compare->add_option("-j,--jobs", a.jobs, "Run N fabric x workload pairs at once (output is the same for any N)")
      ->check(CLI::Range(1, 1024));
  add_replications(compare, "Run every fabric x workload pair at N seeds (run.replications): each result is the "
                            "mean with its 95% half-width, and a case whose best fabric's interval overlaps the "
                            "runner-up's is flagged not significant");
  compare->add_flag("--json", a.as_json, "Print the comparison as JSON");

  auto* size = app.add_subcommand(
      "size", "The point of a varied space with the least --minimize key (default the workload's cost_usd) that "
              "meets every --require: a whole-number range (LO..HI: replicas, nodes) searched for each combination "
              "of the other axes (its least value, then doubling, then bisection), assuming that more never "
              "breaks a requirement and costs more; points near a bound confirmed with more replications; "
              "dominated combinations pruned");
  add_points_options(size, "Run N points at once (the answer is the same for any N)");
  size->add_option("--vary", a.varies,
                   "PATH=LO..HI (whole numbers, bisected) or PATH=V1,V2,... (values as --grid takes them; "
                   "repeatable)")
      ->required()
      ->allow_extra_args(false);
  size->add_option("--require", a.requires_,
                   "KEY<=VALUE, KEY>=VALUE, KEY<VALUE or KEY>VALUE on a summary number, e.g. "
                   "serving.slo_attainment>=0.99 (repeatable)")
      ->allow_extra_args(false);
  size->add_option("--minimize", a.minimize, "The summary number to minimize (default: the workload's cost_usd)");
  size->add_option("--max-runs", a.max_runs, "The run budget: refuse a space that may need more runs (default 2000)")
      ->check(CLI::Range(1, 1 << 30));
  size->add_option("--confirm", a.confirm,
                   "Replications to run again a point near a bound with (default 10; 1: never)")
      ->check(CLI::Range(1, 10000));
  size->add_flag("--json", a.as_json, "Print {best, points, ...} as JSON");

  auto* schema = app.add_subcommand("schema", "Print the JSON Schema of scenario files");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return {std::nullopt, app.exit(e)};
  } catch (const CLI::CallForAllHelp& e) {
    return {std::nullopt, app.exit(e)};
  } catch (const CLI::ParseError& e) {
    // A first word that is no command: name it (CLI11 would say only that one is required).
    if (argc > 1 && argv[1][0] != '-' && app.get_subcommands().empty()) {
      std::string commands;
      for (const auto* sub : app.get_subcommands({})) commands += (commands.empty() ? "" : ", ") + sub->get_name();
      std::cerr << "error: unknown command \"" << argv[1] << "\"\n  hint: the commands are " << commands << "\n";
      return {std::nullopt, 2};
    }
    std::cerr << "error: " << e.what() << "\n  hint: clustersim --help\n";
    return {std::nullopt, 2};
  }
  if (run->parsed()) a.command = Command::run;
  else if (validate->parsed()) a.command = Command::validate;
  else if (topo->parsed()) a.command = Command::topo;
  else if (sweep->parsed()) a.command = Command::sweep;
  else if (plan->parsed()) a.command = Command::plan;
  else if (compare->parsed()) a.command = Command::compare;
  else if (size->parsed()) a.command = Command::size;
  else if (schema->parsed()) a.command = Command::schema;
  return {std::move(a), 0};
}

}  // namespace cs::cli
