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
// 16 ranks on trn1 within the instance (neuron_ccom.cpp cites the release notes). XLA: its
// multi-dimensional all-reduce over the host's ICI torus (the `torus` plan), alone.
std::span<const work::CollectiveAlgorithm> node_tp_algorithms(CollectiveLibrary library);

// The latency (seconds, >= 0) `algorithm`'s `op` pays, inside one instance, for running over
// `ranks_per_chip` NeuronCores of each of `chips` chips (the runtime's ranks, as nccom-test and
// transformers-neuronx's tp_degree count them) rather than over the chips: the ring's extra
// steps at CCOM's NeuronLink step (the ring joins every rank in one cycle, so 2(n-1) steps over n
// cores for an all-reduce, 46 on an inf2.48xlarge's 24 cores where its 12 chips take 22; the
// constants' own 2- and 32-rank rows counted cores the same way), and nothing for the
// all-to-all (`direct`: Neuron's mesh, which reduces a chip's cores' chunks on the chip and
// crosses between chips in one step whatever the rank count). neuron_ccom.cpp cites the
// runtime's documentation. 0 for ranks_per_chip 1 and for every other algorithm.
double neuron_core_ranks_latency_s(work::CollectiveOp op, work::CollectiveAlgorithm algorithm, int chips,
                                   int ranks_per_chip);

}  // namespace cs::net
