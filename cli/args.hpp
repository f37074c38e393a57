#pragma once
// The command line of `clustersim`: its subcommands and options (CLI11) parsed into plain
// values, apart from the commands themselves so that parsing alone can be fuzzed
// (fuzz/cli_fuzz.cpp).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cs::cli {

enum class Command { run, validate, topo, sweep, plan, compare, size, schema };

struct Args {
  Command command = Command::schema;
  std::string file;                 // run, validate, topo, sweep, plan, size
  std::vector<std::string> sets;    // --set PATH=VALUE, in order
  std::vector<std::string> grow_to; // topo --grow-to PATH=VALUE, in order
  bool as_json = false;             // --json
  std::string out;                  // run --out DIR
  int threads = 0;                  // run --threads N (0: every core)
  std::vector<std::string> grids;   // sweep --grid PATH=V1,V2
  std::string sweep_out;            // sweep --out FILE
  int replications = 0;             // sweep, compare --replications (0: the scenario's run.replications)
  std::vector<std::string> paired;  // sweep --paired KEY: paired differences at common seeds
  int jobs = 1;                     // -j (1 .. 1024)
  int top = 0, refine = 10;         // plan --top (0: the command's default), --refine
  std::string plan_out;             // plan --out FILE
  double memory_headroom = -1;      // plan --memory-headroom (share of GPU memory; -1: the scenario's)
  std::string plan_max_time = "1h"; // plan --max-time DURATION
  std::vector<std::string> plan_only;                      // plan --only KEY=V1,V2
  std::vector<std::string> compare_files, workload_files;  // compare FILES, --workload
  std::vector<std::string> varies, requires_;              // size --vary, --require
  std::string minimize;                                    // size --minimize ("": the workload's cost_usd)
  std::size_t max_runs = 2000;                             // size --max-runs
  int confirm = 10;                                        // size --confirm
};

// The arguments, or (args empty) the exit code when parsing ends the program: help printed
// on stdout (0), or a usage error on stderr that names what is wrong (2).
struct Parsed {
  std::optional<Args> args;
  int exit_code = 0;
};
Parsed parse_args(int argc, const char* const* argv);

}  // namespace cs::cli
