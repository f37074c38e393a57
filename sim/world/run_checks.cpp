#include "sim/world/run_checks.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/scenario/input_error.hpp"
#include "topology/reachability.hpp"
#include "workloads/collective.hpp"
#include "workloads/traffic.hpp"

namespace cs::world::detail {

using namespace cs::scenario;
namespace {

std::string unreachable(int src_rank, int dst_rank, const topo::Topology& t) {
  return "rank " + std::to_string(src_rank) + " (node " + std::to_string(t.node_of_rank(src_rank)) + ") and rank " +
         std::to_string(dst_rank) + " (node " + std::to_string(t.node_of_rank(dst_rank)) +
         ") are not connected: no path of links joins their nodes' NICs through switches (a NIC does not "
         "forward for another node)";
}
constexpr const char* kHint = "cable both nodes to a switch in topology.links, or leave the pair out";

void check_traffic(const work::TrafficSpec& spec, const std::string& at, const topo::NodeReachability& reach,
                   const topo::Topology& t) {
  const int ranks = t.ranks();
  if (spec.pattern == work::TrafficPattern::all_to_all) {
    std::vector<int> nodes(static_cast<std::size_t>(t.nodes()));
    for (int n = 0; n < t.nodes(); ++n) nodes[static_cast<std::size_t>(n)] = n;
    int a = 0, b = 0;
    if (!reach.all_connected(nodes, &a, &b))
      throw InputError(at + ".pattern", "all_to_all needs every pair: " +
                                            unreachable(a * t.gpus_per_node(), b * t.gpus_per_node(), t), kHint);
    return;
  }
  const std::vector<work::FlowSpec> flows = work::expand_traffic(spec, ranks);
  for (std::size_t i = 0; i < flows.size(); ++i)
    if (!reach.connected(t.node_of_rank(flows[i].src), t.node_of_rank(flows[i].dst)))
      throw InputError(spec.pattern == work::TrafficPattern::flows ? at + ".flows." + std::to_string(i)
                                                                   : at + ".pattern",
                       "flow " + std::to_string(i) + ": " + unreachable(flows[i].src, flows[i].dst, t), kHint);
}

void check_collective(const work::CollectiveSpec& spec, const std::string& at, const topo::NodeReachability& reach,
                      const topo::Topology& t) {
  for (const std::vector<int>& group : work::collective_groups(spec, t.ranks())) {
    std::vector<int> nodes;
    for (int r : group)
      if (nodes.empty() || nodes.back() != t.node_of_rank(r)) nodes.push_back(t.node_of_rank(r));
    int a = 0, b = 0;
    if (!reach.all_connected(nodes, &a, &b))
      throw InputError(at + (spec.group_size > 0 ? ".groups" : ".ranks"),
                       "a communicator group needs every pair of its ranks connected: " +
                           unreachable(a * t.gpus_per_node(), b * t.gpus_per_node(), t),
                       kHint);
  }
}

}  // namespace

void check_reachable(const Config& config, const topo::Topology& t) {
  if (config.topology.kind != topo::TopologyKind::custom || t.nodes() < 2) return;
  const topo::NodeReachability reach(t);
  if (config.workload == WorkloadKind::traffic) check_traffic(config.traffic, "workload", reach, t);
  else if (config.workload == WorkloadKind::training || config.training_run_simulates_step) {
    // A training plan spans every GPU; its groups (data, pipeline, tensor, expert) between them
    // reach every node, so every pair of nodes must be connected.
    std::vector<int> nodes(std::size_t(t.nodes()));
    for (int n = 0; n < t.nodes(); ++n) nodes[std::size_t(n)] = n;
    int a = 0, b = 0;
    if (!reach.all_connected(nodes, &a, &b))
      throw InputError("workload.parallel",
                       "a training plan spans every GPU, so every pair of nodes must be connected: " +
                           unreachable(a * t.gpus_per_node(), b * t.gpus_per_node(), t),
                       kHint);
  } else check_collective(config.collective, "workload", reach, t);
  for (std::size_t i = 0; i < config.background.size(); ++i) {
    const std::string at = "workload.background." + std::to_string(i);
    const BackgroundWorkload& b = config.background[i];
    if (b.kind == WorkloadKind::traffic) check_traffic(b.traffic, at, reach, t);
    else check_collective(b.collective, at, reach, t);
  }
}

void check_finite(const nlohmann::json& v, const std::string& at) {
  if (v.is_number_float() && !std::isfinite(v.get<double>()))
    throw std::logic_error(at + " is " + std::to_string(v.get<double>()) + ": a number that cannot be");
  if (v.is_object())
    for (const auto& [k, x] : v.items()) check_finite(x, at + "." + k);
  if (v.is_array())
    for (std::size_t i = 0; i < v.size(); ++i) check_finite(v[i], at + "." + std::to_string(i));
}

}  // namespace cs::world::detail
