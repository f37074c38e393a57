#pragma once
// Per-protocol collective costs from NCCL's tuning model: data/nccl_tuning.json (with its
// source: NVIDIA/nccl src/graph/tuning.cc, baseLat and hwLat) compiled into the library.
//
// The JSON states, for each clustersim algorithm, which NCCL algorithm's numbers it takes
// (ring and tree their own; halving_doubling, direct, hierarchical and auto ring's;
// in_network NVLS's Simple numbers under every protocol) and, per protocol, the payload
// efficiency (Simple 1, LL 1/2, LL128 120/128). Microseconds in the file, seconds here.
#include <string>
#include <string_view>
#include <vector>

#include "sim/network/collective_costs.hpp"
#include "workloads/collective.hpp"

namespace cs::net {

// The text of data/nccl_tuning.json.
std::string_view nccl_tuning_text();

// Costs of every algorithm under `protocol`: "simple", "ll" or "ll128". Throws
// std::invalid_argument for any other name. (No protocol, "none", is the caller's
// default-constructed CollectiveCostTable: the wire alone.)
CollectiveCostTable nccl_costs(std::string_view protocol);

// The protocol NCCL runs `algorithm` with whatever protocol is asked for ("simple" for
// in_network: NVLS and SHARP), or "" when it runs the one asked for.
std::string nccl_pinned_protocol(work::CollectiveAlgorithm algorithm);

// A protocol with its costs for every algorithm.
struct ProtocolCosts {
  Protocol protocol = Protocol::none;
  CollectiveCostTable costs;
};
// The protocols `requested` allows, with their costs: itself, or for automatic LL, LL128 and
// Simple in that order (the tuner picks per size; ties go to the first); none: the wire
// alone (all zero, efficiency 1). in_network's efficiency is scaled by `nvls_efficiency`
// (NVLS's share of the NVLink bandwidth; 1 where no NVLS runs).
std::vector<ProtocolCosts> nccl_protocols(Protocol requested, double nvls_efficiency = 1);
// The protocol `algorithm` runs with when `chosen` is asked for: Simple for in_network (NVLS
// and SHARP), none stays none, else `chosen`.
Protocol nccl_protocol_run(work::CollectiveAlgorithm algorithm, Protocol chosen);

// A collective's group as NCCL's tuner sees it (ncclTopoTuneModel's nRanks and nNodes, and its
// tree graph's pattern, which a node holding one GPU of the group sets).
struct NcclGroupShape {
  work::CollectiveOp op = work::CollectiveOp::all_reduce;
  int ranks = 2;             // the group's ranks, >= 2
  int nodes = 1;             // nodes holding them, >= 1
  int most_on_a_node = 1;    // the most ranks one node holds
  int fewest_on_a_node = 1;  // the fewest ranks a node holding some holds, in [1, most_on_a_node]
};

// NCCL's bus bandwidth factor for `algorithm` run with `protocol` where NCCL refines it
// (bandwidth_refinements.efficiency): ring LL 1/2 and LL128 0.92; the tree 0.92 under every
// protocol, times 1/3.8 for LL and for LL128 120/128 across nodes or 7/9 in one node, and times
// 0.85 where some node holds one rank of the group (NCCL's TREE pattern). Elsewhere the
// protocol's payload efficiency (`base`).
double nccl_efficiency(work::CollectiveAlgorithm algorithm, Protocol protocol, const NcclGroupShape& group,
                       double base);
// NCCL's correction of the tree all-reduce's bandwidth by size (bandwidth_refinements.
// tree_correction, treeCorrectionFactor in its time estimate): for `protocol`, the factor at
// floor(log2(bytes / 64)), 1 from 512 MiB on; 1 for other algorithms and ops, and for none and
// automatic. In (0, 1].
double nccl_size_correction(work::CollectiveAlgorithm algorithm, work::CollectiveOp op, Protocol protocol,
                            double bytes);
// NCCL's factor on the latency of a ring all-reduce with Simple across nodes once each rank's
// share on each of the communicator's channels is 64 bytes or more (bandwidth_refinements.
// ring_plateau, its 'plateau effect of ring'): 1.9 below compute capability 8.0 (`arch` "volta" or "turing"), 1.4 on later GPUs;
// else 1. `channels`: the group's rings (one per NIC rail), of which NCCL's communicator runs
// two copies each (at most 64 channels).
double nccl_latency_factor(work::CollectiveAlgorithm algorithm, Protocol protocol, const NcclGroupShape& group,
                           double bytes, int channels, std::string_view arch);
// LL's ceiling on bus bandwidth (bytes/s) for a group on `nodes` nodes of `arch` GPUs
// (bandwidth_refinements.ll_max_busbw_GBps); infinity for other protocols.
double nccl_busbw_ceiling_Bps(Protocol protocol, std::string_view arch, int nodes);

// The share of the PCIe link's rate a collective's bus bandwidth reaches when GPUs of one node
// have no peer-to-peer access and NCCL stages their transfers through host memory (its SHM
// transport; bandwidth_refinements.shm_efficiency, with its measurement), in (0, 1].
double nccl_shm_efficiency();

// The share of the NVLink bandwidth NVLS reaches on GPUs of architecture `arch` ("hopper",
// "blackwell"); 0 where NCCL has no NVLS (every other architecture).
double nccl_nvls_efficiency(std::string_view arch);

// NCCL's single-node NVLS all-reduce of `bytes` over `ranks` GPUs of one node (nvls_pipeline in
// data/nccl_tuning.json, from NCCL's enqueue.cc and its NVLS kernel): each of its channels runs
// scatter, reduce-and-broadcast and gather as a pipeline of `stages` stages, one chunk per rank
// a loop, the chunk shrunk by size. Loops: ceil(bytes / (channels x ranks x chunk)), >= 1 and at
// most INT_MAX (reached past some 36 PB on 8 GPUs, where the share is within 1e-9 of 1).
int nccl_nvls_loops(double bytes, int ranks);
// The share of the bandwidth time left once the pipeline fills and drains: L / (L + stages - 1)
// for L loops, in (0, 1); it tends to 1 as bytes grow (1 GiB on 8 GPUs: 64 / 66).
double nccl_nvls_pipeline_share(double bytes, int ranks);

}  // namespace cs::net
