#include "sim/network/comm_factory.hpp"

#include "sim/network/flow_comm.hpp"
#include "sim/network/fluid_comm.hpp"

namespace cs::net {

std::unique_ptr<CommBase> make_comm(Network& network, Placement placement, const CommConfig& config) {
  switch (config.model) {
    case NetworkModel::flow: return std::make_unique<FlowComm>(network, std::move(placement), config);
    case NetworkModel::analytical: return std::make_unique<FluidComm>(network, std::move(placement), config);
  }
  throw std::logic_error("make_comm: unknown network model");
}

std::string_view to_string(NetworkModel model) { return name_of(kNetworkModelNames, model); }

}  // namespace cs::net
