#include "sim/world/fabric_summary.hpp"

#include <optional>

#include "sim/world/run.hpp"
#include "topology/bill.hpp"
#include "topology/bisection.hpp"
#include "topology/failures.hpp"
#include "topology/report.hpp"
#include "topology/uniform_traffic.hpp"

namespace cs::world::detail {

using namespace cs::scenario;

using nlohmann::json;

json fabric_summary(const Config& config) {
  const topo::Topology topology = build_topology(config);
  const topo::Bill bill = topo::make_bill(topology, config.topology, config.prices);
  const topo::Bisection cut = topo::bisection(topology, config.topology);
  const topo::UniformTrafficBound uniform = topo::uniform_traffic_bound(topology);
  const double gpus = static_cast<double>(topology.ranks());
  int64_t switches = 0;
  for (std::size_t v = 0; v < topology.num_vertices(); ++v)
    switches += topology.vertex(static_cast<topo::VertexId>(v)).kind == topo::VertexKind::fabric_switch;
  json notes = json::array();
  for (const std::string& n : topo::build_notes(topology, config.topology)) notes.push_back(n);
  json out = {{"gpus", topology.ranks()},
          {"switches", switches},
          {"copper_cables", bill.copper_cables},
          {"optical_cables", bill.optical_cables},
          {"aoc_cables", bill.aoc_cables},
          {"fiber_cables", bill.fiber_cables},
          {"transceivers", bill.transceivers},
          {"network_cost_usd", bill.network_cost_usd},
          {"network_power_w", bill.network_power_w},
          {"network_cost_per_gpu_usd", gpus > 0 ? bill.network_cost_usd / gpus : 0.0},
          {"bisection_bandwidth_Bps", cut.Bps},
          {"network_usd_per_bisection_GBps", cut.Bps > 0 ? bill.network_cost_usd / (cut.Bps / 1e9) : 0.0},
          {"all_to_all_bound_per_gpu_Bps", uniform.per_gpu_Bps},
          {"all_to_all_bound_limit", uniform.limit},
          {"notes", std::move(notes)}};
  // A degraded fabric (topology.failed): what is down, as `topo` reports it.
  if (topology.has_failures())
    out["failed"] = {{"cables", topology.num_failed_cables()}, {"switches", topo::dead_switches(topology)}};
  return out;
}

void bill_owned_fabric(Config& config) {
  std::optional<fleet::OwnershipConfig>* ownership = nullptr;
  if (config.workload == WorkloadKind::training_run && config.training_run_simulates_step)
    ownership = &config.training_run.ownership;
  else if (config.workload == WorkloadKind::jobs && config.jobs_on_topology)
    ownership = &config.jobs.fleet.ownership;
  else if (config.workload == WorkloadKind::serving && config.serving_kv_over_network)
    ownership = &config.serving.disaggregated.decode.pool.market.ownership;  // one fabric, billed once
  if (!ownership || !*ownership) return;
  const topo::Topology topology = build_topology(config);
  (*ownership)->fabric_usd = topo::make_bill(topology, config.topology, config.prices).network_cost_usd;
}

void add_cost_per_busbw(json& summary, const json& fabric) {
  if (!summary.contains("collective")) return;
  const double per_gpu = fabric.at("network_cost_per_gpu_usd").get<double>();
  for (json& row : summary["collective"]["results"]) {
    const json& busbw = row.at("busbw_GBps");
    const double gbps = busbw.is_object() ? busbw.at("mean").get<double>() : busbw.get<double>();
    row["network_usd_per_busbw_GBps"] = gbps > 0 ? per_gpu / gbps : 0.0;
  }
}

}  // namespace cs::world::detail
