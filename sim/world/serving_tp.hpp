#pragma once
// The tensor-parallel all-reduces of LLM replicas, timed by the communication layer's NCCL
// model (sim/network: per-algorithm and per-protocol base and per-step latencies of
// data/nccl_tuning.json, payload efficiencies, LL's bandwidth ceiling) on one node of the
// scenario's hardware: hardware.node's fabric (NVSwitch, NVLink mesh or PCIe), its bandwidths
// and latencies, or the replica's tp_allreduce_bandwidth in place of the fabric's per-GPU rate.
#include "sim/scenario/config.hpp"
#include "sim/serving/llm_timing.hpp"

namespace cs::world::detail {

// One all-reduce over `timing.gpus` GPUs of a node (none when gpus == 1): for each algorithm
// NCCL can run in a node (ring, tree) and each protocol network.protocol allows, the affine
// cost the analytical model gives it alone on the idle node.
serving::AllReduceCost tp_allreduce_cost(const scenario::Config& config, const serving::LlmTimingSpec& timing);

// Fills tp_allreduce into every LLM replica of `serving` (the unified or decode replica and
// the prefill replica of disaggregated serving).
void time_tp_allreduces(const scenario::Config& config, serving::ServingConfig& serving);

}  // namespace cs::world::detail
