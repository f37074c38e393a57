#pragma once
// Internal to run.cpp: checks of a run that need more than the parsed file, made before and
// after it runs.
#include <nlohmann/json.hpp>

#include "sim/scenario/config.hpp"
#include "topology/topology.hpp"

namespace cs::world::detail {

// Every pair of ranks the workload needs (each flow's ends; every pair in a communicator
// group; the background's too) is joined by a route: an InputError at the workload key that
// asks for the pair otherwise (workload.flows.<i>, workload.pattern, workload.ranks,
// workload.groups, workload.background.<i>...). Only custom fabrics can fail it: the builders'
// fabrics connect every node.
void check_reachable(const scenario::Config& config, const topo::Topology& topology);

// No number of a summary is NaN or infinite: a std::logic_error (an internal fault, exit 1)
// naming the key otherwise, so that no table or file ever shows inf or nan.
void check_finite(const nlohmann::json& summary, const std::string& at = "summary");

}  // namespace cs::world::detail
