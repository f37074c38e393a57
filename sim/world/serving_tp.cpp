#include "sim/world/serving_tp.hpp"

#include <numeric>
#include <optional>
#include <span>
#include <vector>

#include "sim/network/comm_base.hpp"
#include "sim/network/neuron_ccom.hpp"
#include "sim/world/run.hpp"

namespace cs::world::detail {

using namespace cs::scenario;

void time_tp_collectives(const Config& config, serving::LlmTimingSpec& timing) {
  timing.tp_allreduce = {};
  timing.tp_allgather = {};
  if (timing.gpus < 2) return;
  // One node of the file's hardware, nothing else: the collectives never leave it.
  Config node = config;
  node.topology = topo::TopologyParams{};
  node.topology.kind = topo::TopologyKind::single_node;
  node.topology.node = config.topology.node;
  node.network.routing = topo::RoutingKind::shortest;  // the one routing a lone node has
  if (timing.tp_allreduce_bandwidth_Bps > 0) {
    if (node.topology.node.fabric == topo::NodeFabric::pcie) node.topology.node.pcie_bandwidth_Bps = timing.tp_allreduce_bandwidth_Bps;
    else node.topology.node.gpu_bandwidth_Bps = timing.tp_allreduce_bandwidth_Bps;
  }
  engine::Simulator sim(config.seed);  // the layer needs one; nothing runs on it
  const topo::Topology topology = build_topology(node);
  Fabric fabric = build_fabric(node, sim, topology, net::Placement::identity(topology.ranks()));
  std::vector<int> ranks(static_cast<std::size_t>(timing.gpus));
  std::iota(ranks.begin(), ranks.end(), 0);
  const net::GroupId group = fabric.comm->group(ranks);
  std::vector<std::optional<net::Protocol>> protocols{std::nullopt};  // network.protocol's own
  if (config.network.protocol == net::Protocol::automatic)
    protocols = {net::Protocol::ll, net::Protocol::ll128, net::Protocol::simple};
  // The algorithms the chip's collectives library picks among (NCCL's ring and tree, Neuron's
  // ring and all-to-all). Each choice's time alone is affine in the bytes: two sizes give it.
  const net::CollectiveLibrary library = collective_library(config);
  const std::span<const work::CollectiveAlgorithm> algorithms = net::node_tp_algorithms(library);
  // Neuron's ranks are the NeuronCores (ranks_per_gpu of each chip), the node's devices the chips:
  // the wire is the chips', the latency counts the cores' steps.
  const auto core_ranks_latency_s = [&](work::CollectiveOp op, work::CollectiveAlgorithm algorithm) {
    return library == net::CollectiveLibrary::neuron_ccom
               ? net::neuron_core_ranks_latency_s(op, algorithm, timing.gpus, timing.ranks_per_gpu)
               : 0.0;
  };
  const auto cost_of = [&](work::CollectiveOp op) {
    constexpr double kSmall = 1 << 20, kLarge = 2 << 20;
    serving::AllReduceCost cost;
    for (const work::CollectiveAlgorithm algorithm : algorithms) {
      for (const std::optional<net::Protocol>& protocol : protocols) {
        net::CollectiveOptions options;
        options.algorithm = algorithm;
        options.protocol = protocol;
        double small_s = 0, large_s = 0;
        try {
          small_s = fabric.comm->alone_time_s(group, op, kSmall, options);
          large_s = fabric.comm->alone_time_s(group, op, kLarge, options);
        } catch (const net::CommError&) {
          continue;  // no plan of this algorithm for the group and op
        }
        const double per_byte_s = (large_s - small_s) / (kLarge - kSmall);
        const double latency_s = std::max(0.0, small_s - per_byte_s * kSmall) + core_ranks_latency_s(op, algorithm);
        cost.pieces.push_back({latency_s, std::max(0.0, per_byte_s)});
      }
    }
    return cost;
  };
  timing.tp_allreduce = cost_of(work::CollectiveOp::all_reduce);
  timing.tp_allgather = cost_of(work::CollectiveOp::all_gather);
}

void time_tp_collectives(const Config& config, serving::ServingConfig& serving) {
  if (serving.replica.kind != serving::ReplicaKind::llm) return;
  time_tp_collectives(config, serving.replica.llm.timing);
  if (serving.disaggregated.enabled) time_tp_collectives(config, serving.disaggregated.prefill_replica.timing);
}

}  // namespace cs::world::detail
