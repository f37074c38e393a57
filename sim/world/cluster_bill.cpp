#include "sim/world/cluster_bill.hpp"

#include "sim/compute/gpu_catalog.hpp"
#include "sim/fleet/ownership.hpp"

namespace cs::world::detail {

using nlohmann::json;

json nodes_bill(const scenario::Config& config) {
  const fleet::OwnershipDefaults& defaults = fleet::OwnershipDefaults::builtin();
  const int gpus_per_node = config.topology.node.gpus;
  const auto nodes = static_cast<double>(config.topology.nodes);
  json out = {{"nodes", config.topology.nodes}};
  if (const auto price = defaults.node_price_usd(config.gpu.name, gpus_per_node)) {
    out["node_price_usd"] = *price;
    out["nodes_cost_usd"] = *price * nodes;
  }
  // As fleet.ownership's default power of a node (sim/scenario/parse_ownership.cpp).
  if (const compute::GpuSpec* gpu = compute::find_gpu(config.gpu.name); gpu && gpu->power_w > 0) {
    const double node_w = defaults.node_power_w(gpu->power_w, gpus_per_node);
    out["node_power_w"] = node_w;
    out["nodes_power_w"] = node_w * nodes;
  }
  return out;
}

}  // namespace cs::world::detail
