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

#include "sim/network/collective_costs.hpp"
#include "workloads/collective.hpp"

namespace cs::scenario {

// The text of data/nccl_tuning.json.
std::string_view nccl_tuning_text();

// Costs of every algorithm under `protocol`: "simple", "ll" or "ll128". Throws
// std::invalid_argument for any other name. (No protocol, "none", is the caller's
// default-constructed CollectiveCostTable: the wire alone.)
net::CollectiveCostTable nccl_costs(std::string_view protocol);

// The protocol NCCL runs `algorithm` with whatever protocol is asked for ("simple" for
// in_network: NVLS and SHARP), or "" when it runs the one asked for.
std::string nccl_pinned_protocol(work::CollectiveAlgorithm algorithm);

// The share of the NVLink bandwidth NVLS reaches on GPUs of architecture `arch` ("hopper",
// "blackwell"); 0 where NCCL has no NVLS (every other architecture).
double nccl_nvls_efficiency(std::string_view arch);

}  // namespace cs::scenario
