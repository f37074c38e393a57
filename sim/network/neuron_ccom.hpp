#pragma once
// The collective costs of AWS Neuron's collectives library (CCOM: the Neuron runtime's
// collectives on NeuronLink inside an instance and EFA between instances), in the alpha-beta
// form NCCL's are (collective_costs.hpp): a base latency once per collective and a latency per
// step by the step's TransferClass, the same for every algorithm, payload efficiency 1 (Neuron
// has no LL protocols). The constants are fitted to AWS's own nccom-test tables (neuron_ccom.cpp),
// as NCCL's are NVIDIA's fit to its measurements.
#include "sim/network/collective_costs.hpp"

namespace cs::net {

// Neuron's costs for every algorithm (seconds).
CollectiveCostTable neuron_ccom_costs();

}  // namespace cs::net
