#include "sim/world/run.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <vector>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include "sim/compute/gpu_catalog.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/fleet/replications.hpp"
#include "sim/network/comm_base.hpp"
#include "sim/network/comm_factory.hpp"
#include "sim/network/nccl_tuning.hpp"
#include "sim/network/network.hpp"
#include "sim/network/network_sampler.hpp"
#include "sim/network/traffic_run.hpp"
#include "sim/report/link_report.hpp"
#include "sim/report/summary.hpp"
#include "sim/scenario/input_error.hpp"
#include "sim/scenario/quantity_range.hpp"
#include "sim/world/fabric_summary.hpp"
#include "sim/world/run_budget.hpp"
#include "sim/world/run_checks.hpp"
#include "sim/world/run_collective.hpp"
#include "sim/world/run_jobs.hpp"
#include "sim/world/run_serving.hpp"
#include "sim/world/run_training.hpp"
#include "sim/world/run_training_run.hpp"
#include "topology/routing.hpp"
#include "topology/topology.hpp"

namespace cs::world {

using namespace cs::scenario;
using namespace cs::report;

topo::Topology build_topology(const Config& config) {
  try {
    return topo::build_topology(config.topology);
  } catch (const topo::BuildError& e) {
    // Node settings live under hardware.node in scenario files; the rest under topology.
    const std::string& p = e.param();
    throw InputError((p.rfind("node.", 0) == 0 ? "hardware." : "topology.") + p, e.what());
  }
}

Fabric::Fabric() = default;
Fabric::Fabric(Fabric&&) noexcept = default;
Fabric& Fabric::operator=(Fabric&&) noexcept = default;
Fabric::~Fabric() = default;

net::CollectiveLibrary collective_library(const Config& config) {
  const compute::GpuSpec* spec = compute::find_gpu(config.gpu.name);
  return spec ? spec->collective_library : net::CollectiveLibrary::nccl;
}

Fabric build_fabric(const Config& config, engine::Simulator& sim, const topo::Topology& topology,
                    net::Placement placement) {
  Fabric f;
  try {
    f.network = std::make_unique<net::Network>(sim, topology, config.network.routing);
  } catch (const std::invalid_argument& e) {
    throw InputError("network.routing", e.what());
  }
  f.network->set_pxn(config.network.pxn);
  net::CommConfig c;
  c.model = config.network.model;
  c.granularity = config.network.granularity;
  c.protocol = config.network.protocol;
  c.gpu_arch = config.gpu.arch;
  c.collective_library = collective_library(config);
  c.host_staged = config.topology.node.fabric == topo::NodeFabric::pcie && !config.topology.node.gpu_p2p;
  c.in_network = {config.in_network.nvls, config.in_network.sharp,
                  config.in_network.nvls ? net::nccl_nvls_efficiency(config.gpu.arch) : 1.0};
  try {
    f.comm = net::make_comm(*f.network, std::move(placement), c);
  } catch (const net::CommError& e) {
    throw detail::input_error(e, "workload");
  }
  return f;
}

namespace {

using nlohmann::json;

// Where the workload's ranks run: a training plan places its own (parallel.order); traffic
// and collectives use the GPUs' numbering.
net::Placement workload_placement(const Config& config, int gpus) {
  if (config.workload == WorkloadKind::training || config.training_run_simulates_step)
    return detail::training_placement(config.training.workload, gpus);
  return net::Placement::identity(gpus);
}

// What a traffic, collective or training replication runs on: the topology, its network, and
// the communication layer of the chosen model over the workload's ranks. Built in this order on
// `sim` (which outlives it); never moved.
struct World {
  World(const Config& config, engine::Simulator& sim) : topology(build_topology(config)) {
    detail::check_reachable(config, topology);
    fabric = build_fabric(config, sim, topology, workload_placement(config, topology.ranks()));
    comm = fabric.comm.get();
  }
  const topo::Topology topology;
  Fabric fabric;
  net::CommBase* comm = nullptr;
};

// Chrome traces stay loadable: beyond this many flows, only the first ones are traced.
constexpr std::size_t kMaxTracedFlows = 200000;

// The vertices a route crosses, "a>b>c" (quoted when a name holds a comma or a quote); a
// route of several lanes (valiant_packet) gives each path, "a>b>c|a>d>c".
std::string route_field(const topo::Topology& t, const topo::Route* route) {
  if (!route || route->links.empty()) return "";
  const topo::VertexId source = t.link(route->links.front()).from;
  std::string s = t.vertex(source).name;
  for (std::size_t i = 0; i < route->links.size(); ++i) {
    const topo::Link& link = t.link(route->links[i]);
    if (i > 0 && link.from == source) s += "|" + t.vertex(source).name;  // the next lane
    s += ">" + t.vertex(link.to).name;
  }
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string flow_table(const net::TrafficRun& traffic, const topo::Topology& topology) {
  std::ostringstream out;
  out.precision(17);
  out << "flow,src,dst,bytes,start_s,finish_s,fct_s,route\n";
  for (std::size_t i = 0; i < traffic.flows(); ++i) {
    const work::FlowSpec& f = traffic.spec(i);
    out << i << ',' << f.src << ',' << f.dst << ',' << f.bytes << ',' << f.start_s << ',';
    if (traffic.finished(i)) out << f.start_s + traffic.fct_s()[i] << ',' << traffic.fct_s()[i];
    else out << ',';
    out << ',' << route_field(topology, traffic.route(i)) << '\n';
  }
  return out.str();
}

// Without run.until every flow must finish: one that has not once nothing is left to happen
// gets no bandwidth (input bounds make that impossible; this says which if it ever is).
void check_finished(const Config& config, const net::TrafficRun& traffic) {
  if (config.run.until_s > 0 || traffic.completed() == traffic.flows()) return;
  for (std::size_t i = 0; i < traffic.flows(); ++i) {
    if (traffic.finished(i)) continue;
    const work::FlowSpec& f = traffic.spec(i);
    const bool listed = config.traffic.pattern == work::TrafficPattern::flows;
    throw InputError(listed ? "workload.flows." + std::to_string(i) : std::string("workload.pattern"),
                     "flow " + std::to_string(i) + " (rank " + std::to_string(f.src) + " -> rank " +
                         std::to_string(f.dst) + ", " + format_quantity(f.bytes, QuantityKind::bytes) +
                         ") cannot finish: the network gives it no bandwidth");
  }
}

json run_traffic(const Config& config, engine::Simulator& sim, net::Comm& comm, const topo::Topology& topology,
                 std::string* flows_csv) {
  net::TrafficRun traffic(comm, sim, work::expand_traffic(config.traffic, comm.ranks()));
  traffic.start();
  sim.run(config.run.until_s > 0 ? config.run.until_s : engine::kForever);
  check_finished(config, traffic);
  std::vector<double> fct;
  fct.reserve(traffic.completed());
  auto& rec = sim.recorder();
  if (rec.trace_enabled()) rec.name_process(0, "traffic (one track per source rank)");
  // Flows still running at run.until have no completion time; summarize the completed ones.
  for (std::size_t i = 0; i < traffic.flows(); ++i) {
    if (!traffic.finished(i)) continue;
    fct.push_back(traffic.fct_s()[i]);
    if (rec.trace_enabled() && i < kMaxTracedFlows) {
      const work::FlowSpec& f = traffic.spec(i);
      rec.trace_complete("flow " + std::to_string(i) + ": " + std::to_string(f.src) + " -> " +
                             std::to_string(f.dst),
                         "flow", 0, f.src, f.start_s, traffic.fct_s()[i]);
    }
  }
  if (flows_csv) *flows_csv = flow_table(traffic, topology);
  return {{"flows", traffic.flows()},
          {"completed", traffic.completed()},
          {"makespan_s", traffic.makespan_s()},
          {"mean_fct_s", mean(fct)},
          {"p99_fct_s", percentile(fct, 99)}};
}

// A traffic or collective replication on `sim`: adds the workload's block, "network" and
// "links" to `summary`; fills the flow table, links.csv and the time series (with a warning
// when the sampler coarsened it) when `outputs` is given.
void run_network(const Config& config, engine::Simulator& sim, RunOutput* outputs, const RunOptions& options,
                 json& summary) {
  World world(config, sim);
  net::Comm& comm = *world.comm;
  std::optional<net::NetworkSampler> sampler;
  if (outputs && config.run.timeseries_interval_s > 0) {
    sampler.emplace(comm, sim, config.run.timeseries_interval_s, &world.topology);
    sampler->start();
  }

  switch (config.workload) {
    case WorkloadKind::collective:
      summary["collective"] = detail::run_collective(config, sim, comm);
      break;
    case WorkloadKind::traffic:
      summary["traffic"] =
          run_traffic(config, sim, comm, world.topology, outputs && options.flow_table ? &outputs->flows_csv : nullptr);
      break;
    case WorkloadKind::training:
      summary["training"] = detail::run_training(config, sim, comm);
      break;
    case WorkloadKind::serving:  // disaggregated, its KV caches over the network
      summary["serving"] = detail::run_serving(config, sim, &comm, outputs != nullptr);
      break;
    case WorkloadKind::training_run:
    case WorkloadKind::jobs:
      break;  // run_once's
  }
  const LinkUsage usage = comm.link_usage();  // where the bytes went, per directed link
  json network_block = {{"model", std::string(comm.model_name())},
                        {"protocol", std::string(net::to_string(config.network.protocol))}};
  for (const auto& [name, value] : comm.counters()) network_block[name] = value;
  summary["network"] = network_block;
  summary["links"] = link_summary(world.topology, usage);
  if (outputs) outputs->links_csv = link_table_csv(world.topology, usage);
  if (sampler) {
    sampler->flush();
    if (sampler->coarsened())
      outputs->warnings.push_back("warning: run.timeseries_interval: coarsened from " +
                                  format_quantity(config.run.timeseries_interval_s, QuantityKind::time) + " to " +
                                  format_quantity(sampler->interval_s(), QuantityKind::time) + " to keep at most " +
                                  std::to_string(net::NetworkSampler::kDefaultMaxSamples) + " samples per series");
  }
}

// One replication, in its own Simulator seeded with `seed`. `outputs` (time series, trace,
// flow table) is filled only when given: the first replication's are kept. A training_run
// needs no network: the fleet library runs it alone.
json run_once(const Config& config, uint64_t seed, RunOutput* outputs, const RunOptions& options) {
  const auto wall0 = std::chrono::steady_clock::now();
  engine::Simulator sim(seed);
  if (options.interrupted) sim.set_interrupt_check(options.interrupted);
  sim.poll_interrupt();  // between replications: a short one may end before its first poll
  const bool tracing = outputs && !config.run.trace_path.empty();
  sim.recorder().enable_trace(tracing);
  json summary = {{"scenario", config.name}, {"seed", seed}, {"sim_time_s", 0.0}, {"events", 0}, {"wall_time_s", 0.0}};
  const bool training_run = config.workload == WorkloadKind::training_run;
  const bool jobs = config.workload == WorkloadKind::jobs;
  const bool serving = config.workload == WorkloadKind::serving;
  if (training_run) summary["training_run"] = detail::run_training_run(config, sim, outputs != nullptr);
  else if (jobs)
    summary["jobs"] = detail::run_jobs(config, sim, outputs != nullptr,
                                       outputs && options.job_table ? &outputs->jobs_csv : nullptr,
                                       jobs_draw_ahead(config, options));
  else if (serving && !config.serving_kv_over_network) summary["serving"] = detail::run_serving(config, sim, nullptr, outputs != nullptr);
  else run_network(config, sim, outputs, options, summary);
  summary["sim_time_s"] = sim.now();
  summary["events"] = sim.events_processed();
  if (outputs) {
    std::ostringstream ts, tr;
    // A training run records its series at every change of its state and fleet; a jobs
    // workload samples its queues (hourly by default); a serving fleet every
    // config.serving.timeseries_interval_s (60 s unless the file says).
    if (config.run.timeseries_interval_s > 0 || training_run || jobs ||
        (serving && config.serving.timeseries_interval_s > 0)) {
      sim.recorder().write_timeseries_csv(ts);
      outputs->timeseries_csv = ts.str();
    }
    if (tracing) {
      sim.recorder().write_chrome_trace(tr);
      outputs->trace_json = tr.str();
    }
  }
  summary["wall_time_s"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  detail::check_finite(summary);
  return summary;
}

// Whether the workload runs on the simulated fabric: not a training run, nor a serving fleet
// but for its KV caches when they cross one.
// The workload moves bytes over the simulated network (a World runs it).
bool runs_on_network(const Config& config) {
  switch (config.workload) {
    case WorkloadKind::training_run:
    case WorkloadKind::jobs: return false;
    case WorkloadKind::serving: return config.serving_kv_over_network;
    default: return true;
  }
}

// The summary reports what the fabric costs: for every workload on the network, and for a
// jobs cluster placed on a topology (its nodes' fabric, though jobs send no bytes on it).
bool reports_fabric(const Config& config) {
  return runs_on_network(config) || (config.workload == WorkloadKind::jobs && config.jobs_on_topology);
}

}  // namespace

// A jobs run draws its job stream ahead on a second thread (the same jobs) when it may use more
// than one: its caller lets it, options.threads and TBB's limit allow two, and no other
// replication runs beside it.
bool jobs_draw_ahead(const Config& config, const RunOptions& options) {
  const std::size_t limit = std::min<std::size_t>(
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism),
      static_cast<std::size_t>(tbb::this_task_arena::max_concurrency()));
  return options.draw_ahead && options.threads != 1 && config.run.replications <= 1 && limit >= 2;
}

void check_buildable(const Config& config) {
  check_cost(config);
  // A jobs cluster on a topology: its nodes' domains come from building it.
  if (config.workload == WorkloadKind::jobs && config.jobs_on_topology) (void)build_topology(config);
  // No network (parse_config checked it all), unless a training run's step is simulated on one.
  if (!runs_on_network(config) && !config.training_run_simulates_step) return;
  // A large fabric is checked from its parameters only (the parser ran the builders' checks):
  // building a million-node topology to validate a file would take minutes.
  double cables = 0;
  try {
    cables = double(topo::topology_size(config.topology).cables);
  } catch (const topo::BuildError&) {
    // Building reports it, at its key.
  }
  if (cables > kMaxValidateBuildCables) return;
  engine::Simulator sim(config.seed);
  World world(config, sim);
  detail::check_collectives(config, *world.comm);
}

RunOutput run_scenario(const Config& given, const RunOptions& options) {
  check_cost(given, options.job_table);
  // A training_run whose step is simulated: the step first, once, then the run with its time.
  Config config = given;
  json simulated_step;
  if (config.workload == WorkloadKind::training_run && config.training_run_simulates_step)
    simulated_step = detail::resolve_training_run_step(config, options.interrupted);
  detail::bill_owned_fabric(config);
  const auto wall0 = std::chrono::steady_clock::now();
  RunOutput out;
  out.warnings = config.warnings;
  const int n = std::max(1, config.run.replications);
  // In parallel: each replication has its own Simulator and seed and writes its own slot, so
  // the summaries, combined in seed order, are the same for any thread count.
  std::vector<json> summaries;
  try {
    summaries = fleet::run_replications(
        static_cast<std::size_t>(n), config.seed, options.threads,
        [&](uint64_t seed) { return run_once(config, seed, seed == config.seed ? &out : nullptr, options); });
  } catch (const topo::RouteError& e) {
    // A degraded fabric whose routing finds no path for a pair (the NICs all connect, but
    // not by one the routing may take, e.g. no up-down path on a fat-tree).
    if (!config.topology.failed.any()) throw;
    throw InputError("topology.failed", e.what(), "fail fewer cables, or use routing 'shortest'");
  }
  out.summary = combine_replications(summaries);
  if (!simulated_step.is_null()) out.summary["training_run"]["step"] = simulated_step;
  if (reports_fabric(config)) {  // what the fabric it ran on costs
    out.summary["fabric"] = detail::fabric_summary(config);
    detail::add_cost_per_busbw(out.summary, out.summary["fabric"]);
  }
  detail::check_finite(out.summary);
  if (n > 1 && out.summary.contains("collective")) {
    // The combined table keeps the sizes every replication reached: it lacks the most any
    // replication left out.
    int64_t most = 0;
    for (const json& s : summaries) most = std::max(most, s["collective"].value("sizes_not_run", int64_t{0}));
    out.summary["collective"]["sizes_not_run"] = most;
  }
  if (n > 1) {
    // Hot links differ between seeds (hashed routing): report the first replication's.
    if (summaries.front().contains("links")) {
      out.summary["links"] = summaries.front()["links"];
      out.summary["links"]["replication"] = 0;
    }
    out.summary["seed"] = config.seed;
    out.summary["replications"] = n;
    out.summary["wall_time_s"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  }
  return out;
}

}  // namespace cs::world
