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
#include <numeric>
#include <vector>

#include "workloads/collective_plan.hpp"

namespace cs::net {

namespace {
constexpr double kMicrosecond = 1e-6;
constexpr double kNeuronLinkStep = 3.17 * kMicrosecond;  // a step inside an instance
}  // namespace

CollectiveCostTable neuron_ccom_costs() {
  constexpr double kBaseLatency = 51.7 * kMicrosecond;  // once per collective
  constexpr double kEfaStep = 21.1 * kMicrosecond;      // a step between instances
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
  static constexpr std::array<CollectiveAlgorithm, 1> kXla{CollectiveAlgorithm::torus};
  switch (library) {
    case CollectiveLibrary::neuron_ccom: return kNeuron;
    case CollectiveLibrary::xla: return kXla;
    case CollectiveLibrary::nccl: break;
  }
  return kNccl;
}

// Ranks are NeuronCores: the runtime's documentation ("What is Neuron Collective Communication?",
// neuron-runtime/about/collectives.rst: "each rank can be represented by a physical or logical
// Neuron Core"); Neuron Runtime 2.15.11's all-to-all all-reduce "enabled for 16 ranks ... limited
// to NeuronCores 0-15 or 16-31" of a trn1; nccom-test's 32 ranks on one trn1.32xlarge (16 chips).
// The ring over them (neuron-runtime/explore/intranode-collective-comm.rst): "all the ranks are
// connected in a directed cycle ... O(N) per-hop latency where N is the number of ranks"; its
// Mesh sends "directly ... to all other ranks in one step", the ranks of a chip reducing their
// chunks on the chip before they cross ("reads 4 on-chip chunks, one from each NeuronCore ...
// reduces them, and writes the result over via routing"), so the mesh's steps and its bytes
// between chips are the chips'. The same page's KangaRing, a cycle of one rank a chip, is its
// choice above 56 MB only, beyond an LLM replica's all-reduces, and not modelled. The wire time
// stays the chips' ring: a ring of n x k cores puts k - 1 of every k hops on a chip and moves
// 2(nk-1)/(nk) of the bytes between chips, within 5% of the chips' 2(n-1)/n for n >= 12.
double neuron_core_ranks_latency_s(work::CollectiveOp op, work::CollectiveAlgorithm algorithm, int chips,
                                   int ranks_per_chip) {
  if (algorithm != work::CollectiveAlgorithm::ring || ranks_per_chip <= 1 || chips < 1) return 0;
  const auto ring_steps = [op](int ranks) {
    work::GroupLayout group;
    group.ranks.resize(static_cast<std::size_t>(ranks));
    std::iota(group.ranks.begin(), group.ranks.end(), 0);
    group.node_of.assign(group.ranks.size(), 0);
    const work::CollectivePlan plan = work::make_plan(op, work::CollectiveAlgorithm::ring, group);
    int steps = 0;
    for (const work::Stage& stage : plan.stages) steps += stage.steps;
    return steps;
  };
  return (ring_steps(chips * ranks_per_chip) - (chips > 1 ? ring_steps(chips) : 0)) * kNeuronLinkStep;
}

}  // namespace cs::net
