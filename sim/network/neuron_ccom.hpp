#pragma once
// The collective costs of AWS Neuron's collectives library (CCOM: the Neuron runtime's
// collectives on NeuronLink inside an instance and EFA between instances), in the alpha-beta
// form NCCL's are (collective_costs.hpp): a base latency once per collective and a latency per
// step by the step's TransferClass, the same for every algorithm, payload efficiency 1 (Neuron
// has no LL protocols). The constants are fitted to AWS's own nccom-test tables (neuron_ccom.cpp),
// as NCCL's are NVIDIA's fit to its measurements.
#include <span>

#include "sim/network/collective_costs.hpp"
#include "sim/network/comm_config.hpp"
#include "workloads/collective.hpp"

namespace cs::net {

// Neuron's costs for every algorithm (seconds).
CollectiveCostTable neuron_ccom_costs();

// The algorithms a library runs a tensor-parallel all-reduce or all-gather inside one node with,
// its runtime choosing the fastest for each size (an LLM replica's collectives price each and take
// the lower envelope). NCCL: ring and tree. Neuron: the ring (the algorithm of the nccom-test
// tables the costs come from) and the all-to-all (`direct`: a reduce-scatter and an all-gather
// each in one all-pairs step), which Neuron Runtime 2.14.8 (June 2023) added for all-reduce,
// "expected to improve All-Reduce performance by 3-7x in most cases", and 2.15.11 enabled for
// 16 ranks on trn1 within the instance (neuron_ccom.cpp cites the release notes).
std::span<const work::CollectiveAlgorithm> node_tp_algorithms(CollectiveLibrary library);

}  // namespace cs::net
