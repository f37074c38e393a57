#include "sim/world/serving_tp.hpp"

#include <numeric>
#include <optional>
#include <span>
#include <vector>

#include "sim/compute/gpu_catalog.hpp"
#include "sim/compute/tpu_slice.hpp"
#include "sim/network/comm_base.hpp"
#include "sim/network/neuron_ccom.hpp"
#include "sim/world/run.hpp"

namespace cs::world::detail {

using namespace cs::scenario;

void time_tp_collectives(const Config& config, serving::LlmTimingSpec& timing) {
  timing.tp_allreduce = {};
  timing.tp_allgather = {};
  if (timing.gpus < 2) return;
  const net::CollectiveLibrary library = collective_library(config);
  Config node = config;
  node.topology = topo::TopologyParams{};
  if (library == net::CollectiveLibrary::xla) {
    // A TPU's XLA runs its collectives over the host's chips as their ICI grid (2x4 on a v5e or
    // v6e host), the torus of a tpu_slice of that shape.
    const compute::GpuSpec& spec = *compute::find_gpu(config.gpu.name);
    compute::set_tpu_slice_topology(spec, compute::tpu_host_shape(spec, timing.gpus), node.topology);
    node.network.routing = topo::RoutingKind::dor;
    node.in_network.nvls = false;
    if (timing.tp_allreduce_bandwidth_Bps > 0) {  // the chip's rate, over its links
      node.topology.node.nic_bandwidth_Bps = node.topology.node.pcie_bandwidth_Bps = timing.tp_allreduce_bandwidth_Bps;
      node.topology.link_bandwidth_Bps = timing.tp_allreduce_bandwidth_Bps / spec.ici_links;
    }
  } else {
    // One node of the file's hardware, nothing else: the collectives never leave it.
    node.topology.kind = topo::TopologyKind::single_node;
    node.topology.node = config.topology.node;
    node.network.routing = topo::RoutingKind::shortest;  // the one routing a lone node has
    if (timing.tp_allreduce_bandwidth_Bps > 0) {
      if (node.topology.node.fabric == topo::NodeFabric::pcie) node.topology.node.pcie_bandwidth_Bps = timing.tp_allreduce_bandwidth_Bps;
      else node.topology.node.gpu_bandwidth_Bps = timing.tp_allreduce_bandwidth_Bps;
    }
  }
  engine::Simulator sim(config.seed);  // the layer needs one; nothing runs on it
  const topo::Topology topology = build_topology(node);
  Fabric fabric = build_fabric(node, sim, topology, net::Placement::identity(topology.ranks()));
  std::vector<int> ranks(static_cast<std::size_t>(timing.gpus));
  std::iota(ranks.begin(), ranks.end(), 0);
  const net::GroupId group = fabric.comm->group(ranks);
  std::vector<std::optional<net::Protocol>> protocols{std::nullopt};  // network.protocol's own
  // NCCL's three protocols; Neuron and XLA run one whatever is asked.
  if (config.network.protocol == net::Protocol::automatic && library == net::CollectiveLibrary::nccl)
    protocols = {net::Protocol::ll, net::Protocol::ll128, net::Protocol::simple};
  // The algorithms the chip's collectives library picks among (NCCL's ring and tree, Neuron's
  // ring and all-to-all, XLA's torus). Each choice's time alone is affine in the bytes: two
  // sizes give it.
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
