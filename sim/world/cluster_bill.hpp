#pragma once
// The whole cluster's capital cost and power: the GPU nodes plus the fabric (whose bill is
// topology/bill.hpp's, in the fabric block of fabric_summary.hpp). Compare uses it so that a
// cheaper network is weighed against what the cluster costs, not against itself.
//   nodes: topology.nodes, each at data/ownership.json's typical price of a node of the
//   catalog GPU (USD, e.g. an 8 x H100-SXM node $250,000, with its source there) and the
//   catalog GPU's board power plus the host's share per GPU (W, data/ownership.json).
#include <nlohmann/json.hpp>

#include "sim/scenario/config.hpp"

namespace cs::world::detail {

// The nodes' part: { "nodes", "node_price_usd", "nodes_cost_usd" (USD), "node_power_w",
// "nodes_power_w" (W) }. A GPU with no listed node price has no cost keys; one without a
// catalog power, no power keys. The cluster's figures add the fabric block's network_cost_usd
// and network_power_w to these (sim/studies/compare.cpp).
nlohmann::json nodes_bill(const scenario::Config& config);

}  // namespace cs::world::detail
