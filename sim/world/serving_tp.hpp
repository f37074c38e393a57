#pragma once
// The tensor-parallel collectives of LLM replicas (the layers' all-reduces and the logits'
// all-gather), timed by the communication layer's model of the chip's collectives library
// (sim/network: NCCL's per-algorithm and per-protocol base and per-step latencies of
// data/nccl_tuning.json, payload efficiencies, LL's bandwidth ceiling, host staging without P2P;
// Neuron CCOM's latencies on Trainium and Inferentia) on one node of the scenario's hardware:
// hardware.node's fabric (NVSwitch, NVLink mesh or PCIe), its bandwidths and latencies, or the
// replica's tp_allreduce_bandwidth in place of the fabric's per-GPU rate. On a TPU (XLA: the
// wire alone) on the replica's chips as the host's ICI grid instead (compute::tpu_host_shape, a
// tpu_slice of that shape; tp_allreduce_bandwidth replaces the chip's rate over its links).
#include "sim/scenario/config.hpp"
#include "sim/serving/llm_timing.hpp"

namespace cs::world::detail {

// Fills timing.tp_allreduce and timing.tp_allgather for `timing.gpus` GPUs of a node (left
// empty when gpus == 1): for each algorithm the chip's collectives library runs in a node
// (net::node_tp_algorithms: NCCL's ring and tree, Neuron's ring and all-to-all, XLA's torus)
// and each protocol network.protocol allows (NCCL's; Neuron and XLA run one), the affine cost the analytical model gives it alone on
// the idle node; on Neuron's chips with ranks_per_gpu > 1 the ring's latency counts the
// NeuronCores' steps (net::neuron_core_ranks_latency_s: the runtime's ranks are the cores).
void time_tp_collectives(const scenario::Config& config, serving::LlmTimingSpec& timing);

// The same for every LLM replica of `serving` (the unified or decode replica and the prefill
// replica of disaggregated serving).
void time_tp_collectives(const scenario::Config& config, serving::ServingConfig& serving);

}  // namespace cs::world::detail
