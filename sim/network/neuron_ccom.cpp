// Neuron CCOM's latency terms, derived from AWS's published nccom-test runs on trn1.32xlarge
// (aws-neuron/aws-neuron-sdk, tools/neuron-sys-tools/nccom-test.rst, as added in Neuron SDK
// 2.10.0, commit f5d2d79a, 2023-05-01; the figures are still on the page as of SDK 2.32). Its
// small-message times, flat below 64 KiB, are latency alone:
//   2-rank all-reduce, 1-64 KiB: 58 us (four sizes);
//   32-rank all-gather, 1-64 KiB: 151, 149, 150 us;
//   64-rank all-reduce on two instances, 8-64 B: 520, 520, 523, 525 us.
// With a ring's steps (all-reduce 2(r-1), all-gather r-1), least squares over the single-instance
// rows, steps 2 at 58 us and 31 at 150 us: 92 us / 29 steps = 3.17 us a step over NeuronLink and
// 58 - 2 x 3.17 = 51.7 us once per collective. The two-instance ring of 64 ranks takes 126 steps of
// which a ring's 2 edges in 64 cross EFA (collective_costs.hpp: a pipeline's step costs the mean
// over its edges): 522 - 51.7 = 470.3 us = 126 x (62 x 3.17 + 2 x h_net) / 64 gives h_net = 21.1 us.
// These are the vendor's microbenchmark, not a fit to any validation row. Later SDK releases
// add examples of unstated instance types whose floors range from 6 to 300 us (docs/network.md).
#include "sim/network/neuron_ccom.hpp"

#include <array>

namespace cs::net {

CollectiveCostTable neuron_ccom_costs() {
  constexpr double us = 1e-6;
  constexpr double kBaseLatency = 51.7 * us;   // once per collective
  constexpr double kNeuronLinkStep = 3.17 * us;  // a step inside an instance
  constexpr double kEfaStep = 21.1 * us;       // a step between instances
  CollectiveCosts c;
  c.base_latency_s = kBaseLatency;
  c.step_latency_s[static_cast<std::size_t>(TransferClass::nvlink)] = kNeuronLinkStep;
  c.step_latency_s[static_cast<std::size_t>(TransferClass::pcie)] = kNeuronLinkStep;
  c.step_latency_s[static_cast<std::size_t>(TransferClass::net)] = kEfaStep;
  CollectiveCostTable table;
  table.by_algorithm.fill(c);
  return table;
}

// The all-to-all all-reduce: aws-neuron/aws-neuron-sdk, release-notes/runtime/
// aws-neuronx-runtime-lib/index.rst, Neuron Runtime Library 2.14.8.0 (6/14/2023): "Added
// All-to-All All-Reduce support for Neuron Collective operations, which is expected to improve
// All-Reduce performance by 3-7x in most cases"; 2.15.11.0 (7/19/2023): "AllReduce with
// All-to-all communication pattern enabled for 16 ranks on TRN1/TRN1N within the instance", the
// ranks "limited to NeuronCores 0-15 or 16-31": nothing in the notes covers 32 ranks on trn1 or
// inf2's 24, which AWS's serving tables run and this choice assumes the pattern serves. Both
// precede SDK 2.18, whose serving latencies results/validation.md replays; the nccom-test tables
// (SDK 2.10) predate them, so their 2-step floor is the ring's and the base and step latencies
// above price the all-to-all's two steps as well. The runtime's later documentation
// (neuron-runtime/explore/intranode-collective-comm.rst) names the same pattern Mesh, "O(1)
// latency", and its own choice Mesh below 1 MB.
std::span<const work::CollectiveAlgorithm> node_tp_algorithms(CollectiveLibrary library) {
  using work::CollectiveAlgorithm;
  static constexpr std::array<CollectiveAlgorithm, 2> kNccl{CollectiveAlgorithm::ring, CollectiveAlgorithm::tree};
  static constexpr std::array<CollectiveAlgorithm, 2> kNeuron{CollectiveAlgorithm::ring, CollectiveAlgorithm::direct};
  return library == CollectiveLibrary::neuron_ccom ? std::span<const CollectiveAlgorithm>(kNeuron)
                                                   : std::span<const CollectiveAlgorithm>(kNccl);
}

}  // namespace cs::net
