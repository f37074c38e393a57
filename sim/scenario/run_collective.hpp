#pragma once
// Internal to run.cpp: the collective workload (and the collectives and traffic running in
// the background) in either network model.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/simulator.hpp"
#include "sim/network/collective_costs.hpp"
#include "sim/network/network.hpp"
#include "sim/scenario/config.hpp"
#include "sim/scenario/link_report.hpp"

namespace cs::scenario::detail {

// A protocol's name and NCCL cost table ("none": the wire alone, all zero).
struct Protocol {
  std::string name;
  net::CollectiveCostTable costs;
};
// The protocols network.protocol allows: one, or for "auto" LL, LL128 and Simple (the tuner
// picks per size).
std::vector<Protocol> collective_protocols(const Config& config);

// Runs config.collective, every size and algorithm in turn, beside config.background, on the
// network model network.model selects (the flow model, or the analytical model's stage fluid)
// on `sim`; returns the summary's "collective" block and fills `usage` per link. A size that
// run.until cuts is left out, and so are the ones after it ("sizes_not_run" counts them).
nlohmann::json run_collective(const Config& config, engine::Simulator& sim, net::Network& network, LinkUsage* usage);

// The flow model's per-link usage so far (bytes, busy time, peak utilization).
LinkUsage flow_model_usage(net::Network& network);

}  // namespace cs::scenario::detail
