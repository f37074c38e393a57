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

namespace cs::scenario::detail {

// A protocol's name and NCCL cost table ("none": the wire alone, all zero).
struct Protocol {
  std::string name;
  net::CollectiveCostTable costs;
};
// The protocols network.protocol allows: one, or for "auto" LL, LL128 and Simple (the tuner
// picks per size).
std::vector<Protocol> collective_protocols(const Config& config);

// Runs config.collective, every size and algorithm in turn, beside config.background, in the
// flow model (on `sim`) and returns the summary's "collective" block. Stops at run.until.
nlohmann::json run_collective_flow(const Config& config, engine::Simulator& sim, net::Network& network);

// The same in the analytical model: no events; sim time advances by each estimate.
// `link_bytes` and `link_busy_s` receive the model's per-link loads (by topology link id).
nlohmann::json run_collective_analytical(const Config& config, net::Network& network, double* sim_time_s,
                                         std::vector<double>* link_bytes, std::vector<double>* link_busy_s);

}  // namespace cs::scenario::detail
