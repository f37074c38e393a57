#include "sim/scenario/run.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/network/comm_factory.hpp"
#include "sim/network/nccl_tuning.hpp"
#include "sim/network/network.hpp"
#include "sim/network/network_sampler.hpp"
#include "sim/network/traffic_run.hpp"
#include "sim/scenario/input_error.hpp"
#include "sim/scenario/link_report.hpp"
#include "sim/scenario/quantity_range.hpp"
#include "sim/scenario/run_budget.hpp"
#include "sim/scenario/run_checks.hpp"
#include "sim/scenario/run_collective.hpp"
#include "sim/scenario/summary.hpp"
#include "topology/topology.hpp"

namespace cs::scenario {

topo::Topology build_topology(const Config& config) {
  try {
    return topo::build_topology(config.topology);
  } catch (const topo::BuildError& e) {
    // Node settings live under hardware.node in scenario files; the rest under topology.
    const std::string& p = e.param();
    throw InputError((p.rfind("node.", 0) == 0 ? "hardware." : "topology.") + p, e.what());
  }
}

namespace {

using nlohmann::json;

// What one replication runs on: the topology, its network, and the communication layer of
// the chosen model over the workload's ranks. Built in this order; never moved.
struct World {
  World(const Config& config, uint64_t seed) : sim(seed), topology(build_topology(config)) {
    detail::check_reachable(config, topology);
    try {
      network = std::make_unique<net::Network>(sim, topology, config.network.routing);
    } catch (const std::invalid_argument& e) {
      throw InputError("network.routing", e.what());
    }
    net::CommConfig c;
    c.model = config.network.model;
    c.granularity = config.network.granularity;
    c.protocol = config.network.protocol;
    c.in_network = {config.in_network.nvls, config.in_network.sharp,
                    config.in_network.nvls ? net::nccl_nvls_efficiency(config.gpu.arch) : 1.0};
    try {
      comm = net::make_comm(*network, net::Placement::identity(topology.ranks()), c);
    } catch (const net::CommError& e) {
      throw detail::input_error(e, "workload");
    }
  }
  engine::Simulator sim;
  const topo::Topology topology;
  std::unique_ptr<net::Network> network;
  std::unique_ptr<net::CommBase> comm;
};

// Chrome traces stay loadable: beyond this many flows, only the first ones are traced.
constexpr std::size_t kMaxTracedFlows = 200000;

std::string flow_table(const net::TrafficRun& traffic) {
  std::ostringstream out;
  out.precision(17);
  out << "flow,src,dst,bytes,start_s,finish_s,fct_s\n";
  for (std::size_t i = 0; i < traffic.flows(); ++i) {
    const work::FlowSpec& f = traffic.spec(i);
    out << i << ',' << f.src << ',' << f.dst << ',' << f.bytes << ',' << f.start_s << ',';
    if (traffic.finished(i)) out << f.start_s + traffic.fct_s()[i] << ',' << traffic.fct_s()[i];
    else out << ',';
    out << '\n';
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

json run_traffic(const Config& config, engine::Simulator& sim, net::Comm& comm, std::string* flows_csv) {
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
  if (flows_csv) *flows_csv = flow_table(traffic);
  return {{"flows", traffic.flows()},
          {"completed", traffic.completed()},
          {"makespan_s", traffic.makespan_s()},
          {"mean_fct_s", mean(fct)},
          {"p99_fct_s", percentile(fct, 99)}};
}

// One replication. `outputs` (time series, trace, flow table) is filled only when given: the
// first replication's are kept.
json run_once(const Config& config, uint64_t seed, RunOutput* outputs, const RunOptions& options) {
  const auto wall0 = std::chrono::steady_clock::now();
  World world(config, seed);
  engine::Simulator& sim = world.sim;
  if (options.interrupted) sim.set_interrupt_check(options.interrupted);
  net::Comm& comm = *world.comm;
  const bool tracing = outputs && !config.run.trace_path.empty();
  sim.recorder().enable_trace(tracing);
  std::optional<net::NetworkSampler> sampler;
  if (outputs && options.timeseries && config.run.timeseries_interval_s > 0) {
    sampler.emplace(comm, sim, config.run.timeseries_interval_s);
    sampler->start();
  }

  json block;
  std::string kind;
  switch (config.workload) {
    case WorkloadKind::collective:
      kind = "collective";
      block = detail::run_collective(config, sim, comm);
      break;
    case WorkloadKind::traffic:
      kind = "traffic";
      block = run_traffic(config, sim, comm, outputs && options.flow_table ? &outputs->flows_csv : nullptr);
      break;
  }
  const LinkUsage usage = comm.link_usage();  // where the bytes went, per directed link
  json network_block = {{"model", std::string(comm.model_name())},
                        {"protocol", std::string(net::to_string(config.network.protocol))}};
  for (const auto& [name, value] : comm.counters()) network_block[name] = value;
  json summary = {{"scenario", config.name},
                  {"seed", seed},
                  {"sim_time_s", sim.now()},
                  {"events", sim.events_processed()},
                  {"wall_time_s", 0.0},
                  {kind, block},
                  {"network", network_block},
                  {"links", link_summary(world.topology, usage)}};
  if (outputs) outputs->links_csv = link_table_csv(world.topology, usage);
  if (outputs) {
    std::ostringstream ts, tr;
    if (sampler) {
      sampler->flush();
      if (sampler->coarsened())
        outputs->warnings.push_back(
            "warning: run.timeseries_interval: coarsened from " +
            format_quantity(config.run.timeseries_interval_s, QuantityKind::time) + " to " +
            format_quantity(sampler->interval_s(), QuantityKind::time) + " to keep at most " +
            std::to_string(net::NetworkSampler::kDefaultMaxSamples) + " samples per series");
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

}  // namespace

void check_buildable(const Config& config) {
  check_cost(config);
  // A large fabric is checked from its parameters only (the parser ran the builders' checks):
  // building a million-node topology to validate a file would take minutes.
  double cables = 0;
  try {
    cables = double(topo::topology_size(config.topology).cables);
  } catch (const topo::BuildError&) {
    // Building reports it, at its key.
  }
  if (cables > kMaxValidateBuildCables) return;
  World world(config, config.seed);
  detail::check_collectives(config, *world.comm);
}

RunOutput run_scenario(const Config& config, const RunOptions& options) {
  check_cost(config);
  const auto wall0 = std::chrono::steady_clock::now();
  std::vector<json> summaries;
  RunOutput out;
  const int n = std::max(1, config.run.replications);
  for (int r = 0; r < n; ++r)
    summaries.push_back(
        run_once(config, config.seed + static_cast<uint64_t>(r), r == 0 ? &out : nullptr, options));
  out.summary = combine_replications(summaries);
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
    out.summary["links"] = summaries.front()["links"];
    out.summary["links"]["replication"] = 0;
    out.summary["seed"] = config.seed;
    out.summary["replications"] = n;
    out.summary["wall_time_s"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  }
  return out;
}

}  // namespace cs::scenario
