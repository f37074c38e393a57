#pragma once
// Assemble the world a Config describes, run it, and summarize (SCENARIOS.md "Summary").
#include <string>

#include <nlohmann/json.hpp>

#include "sim/scenario/config.hpp"
#include "topology/topology.hpp"

namespace cs::scenario {

struct RunOutput {
  nlohmann::json summary;       // the summary.json object
  // "series,time_s,value" rows; empty without run.timeseries_interval, except for a
  // training_run, which records its state, nodes per market and cost at every change.
  std::string timeseries_csv;
  std::string trace_json;       // Chrome/Perfetto trace; empty without run.trace
  // traffic workloads: one row per flow, "flow,src,dst,bytes,start_s,finish_s,fct_s,route"
  // (route: the vertices the flow crossed, "a>b>c")
  // (finish and fct empty for flows still running at run.until); empty unless asked for.
  std::string flows_csv;
  // Every directed link that carried bytes (link_report.hpp, link_table_csv).
  std::string links_csv;
};

struct RunOptions {
  bool flow_table = false;  // fill RunOutput::flows_csv
  int threads = 0;          // replications at once: 0 TBB's default, 1 serial, n at most n
};

// Runs every replication (run.replications, seeds seed, seed+1, ...), in parallel, and
// combines them in seed order (the same summary for any options.threads).
// Throws InputError for problems only found while building (e.g. a fat-tree that needs more
// spine ports than switch_radix gives).
RunOutput run_scenario(const Config& config, const RunOptions& options = {});

// The topology a Config describes; a builder's BuildError becomes an InputError at
// topology.<param> (hardware.node.<key> for node parameters).
topo::Topology build_topology(const Config& config);

// What `validate` checks beyond parse_config: the topology builds and the routing applies.
void check_buildable(const Config& config);

}  // namespace cs::scenario
