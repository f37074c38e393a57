#pragma once
// The one place network.model is read: the communication layer (comm.hpp) of the chosen
// model over a network, for a workload's ranks placed on GPUs.
#include <memory>

#include "sim/network/comm_base.hpp"

namespace cs::net {

// Throws CommError for a configuration the model cannot run (granularity "step" on the
// analytical model: field "granularity").
std::unique_ptr<CommBase> make_comm(Network& network, Placement placement, const CommConfig& config);

// "flow" | "analytical".
std::string_view to_string(NetworkModel model);

}  // namespace cs::net
