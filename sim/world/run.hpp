#pragma once
// Assemble the world a Config describes, run it, and summarize (docs/scenarios.md "Summary").
#include <memory>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/simulator.hpp"
#include "sim/network/placement.hpp"
#include "sim/scenario/config.hpp"
#include "topology/topology.hpp"

namespace cs::net {
class Network;
class CommBase;
}  // namespace cs::net

namespace cs::world {

struct RunOutput {
  nlohmann::json summary;       // the summary.json object
  // "series,time_s,value" rows; empty without run.timeseries_interval, except for a
  // training_run, which records its state, nodes per market and cost at every change, and a
  // jobs workload, which samples its queues hourly when no interval is given.
  std::string timeseries_csv;
  std::string trace_json;       // Chrome/Perfetto trace; empty without run.trace
  // traffic workloads: one row per flow, "flow,src,dst,bytes,start_s,finish_s,fct_s,route"
  // (route: the vertices the flow crossed, "a>b>c")
  // (finish and fct empty for flows still running at run.until); empty unless asked for.
  std::string flows_csv;
  // Every directed link that carried bytes (link_report.hpp, link_table_csv).
  std::string links_csv;
  // jobs workloads: one row per job (run_jobs.hpp, jobs_table_csv); empty unless asked for.
  std::string jobs_csv;
  // What the run bounded instead of refusing, as "warning: <path>: ..." lines for stderr (a
  // time series coarsened to stay within its sample limit).
  std::vector<std::string> warnings;
};

struct RunOptions {
  bool flow_table = false;  // fill RunOutput::flows_csv
  bool job_table = false;   // fill RunOutput::jobs_csv
  // Replications at once: 0 TBB's default, 1 serial, n at most n. A jobs run of one
  // replication not limited to 1 draws its job stream ahead on a second thread (the same jobs),
  // unless draw_ahead is false: a caller running several scenarios at once (a sweep's points,
  // its parallel work) turns it off, so that its runs do not each start a thread of their own.
  int threads = 0;
  bool draw_ahead = true;
  // Polled while simulating (engine::Simulator::set_interrupt_check), from whichever thread
  // runs a replication (so thread-safe); when it returns true the run throws
  // engine::Interrupted. Empty: never.
  std::function<bool()> interrupted;
};

// Runs every replication (run.replications, seeds seed, seed+1, ...), in parallel, and
// combines them in seed order (the same summary for any options.threads).
// First checks the run's estimated cost against run.max_memory (run_budget.hpp), and, on a
// custom fabric, that every pair of ranks the workload needs is connected. Throws InputError
// for those and for problems only found while building (e.g. a fat-tree that needs more
// spine ports than switch_radix gives), and when a transfer cannot finish (no run.until and
// no progress: named).
RunOutput run_scenario(const scenario::Config& config, const RunOptions& options = {});

// Whether run_scenario draws a jobs run's stream ahead on a second thread: options.draw_ahead,
// one replication, and options.threads and TBB's limit (`run --threads`, the calling arena's)
// allowing two threads.
bool jobs_draw_ahead(const scenario::Config& config, const RunOptions& options);

// The topology a Config describes; a builder's BuildError becomes an InputError at
// topology.<param> (hardware.node.<key> for node parameters).
topo::Topology build_topology(const scenario::Config& config);

// The network over `topology` and the communication layer of network.model on it, with the
// workload's ranks at `placement` (InputErrors at network.* or workload.*). The topology and
// simulator must outlive it.
// (Defined in run.cpp, where the models' types are complete.)
struct Fabric {
  Fabric();
  Fabric(Fabric&&) noexcept;
  Fabric& operator=(Fabric&&) noexcept;
  ~Fabric();
  std::unique_ptr<net::Network> network;
  std::unique_ptr<net::CommBase> comm;  // sim/network/comm_base.hpp
};
Fabric build_fabric(const scenario::Config& config, engine::Simulator& sim, const topo::Topology& topology,
                    net::Placement placement);

// The collectives library the file's accelerator runs (its catalog entry's; NCCL for a chip not in
// the catalog): what build_fabric's communication layer prices and serving's tp collectives pick among.
net::CollectiveLibrary collective_library(const scenario::Config& config);

// What `validate` checks beyond parse_config: the run's estimated cost fits run.max_memory,
// and, on fabrics small enough to build quickly (run_budget.hpp), the topology builds, the
// routing applies, the workload's pairs are connected and its plans exist. Fast at any size:
// a large fabric is checked from its parameters only.
void check_buildable(const scenario::Config& config);

}  // namespace cs::world
